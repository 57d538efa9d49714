#!/usr/bin/env bash
# What a starved .NET thread pool does to each transport: RemotePingPong across two processes, one client, the server's
# pool held at STARVE threads each kept busy by a work item that sleeps 20 ms and queues itself again (as blocking
# calls in a user's actors keep it), beside the same server with its pool as it is. Round trips at one message in
# flight (p50/p99) and msgs/s, for the sockets stack, the DotNetty stack on both event-loop kinds, and stock, each
# round interleaved. Writes OUT/starved-{on,off}/run-N.{txt,json} and OUT/summary.md, the table docs/choosing-a-transport.md
# shows (stored in benchmarks/results/starved-pool).
#
#   benchmarks/starved-pool.sh OUT        REPEAT (3), STARVE (8)
set -euo pipefail
out=$1
repeat=${REPEAT:-3}
source "$(dirname "$0")/remote-ping-pong.sh"
mkdir -p "$out/starved-on" "$out/starved-off"
for run in $(seq 1 "$repeat"); do
  for mode in off on; do
    server_args=()
    [[ $mode == on ]] && server_args=(--starve-pool "${STARVE:-8}")
    start_server "$out/starved-$mode/server-$run.log"
    dotnet "$rpp" --role client --server "$address" \
      --transport flushbatching,flushbatching-dotnetty,flushbatching-dotnetty-dedicated,stock --clients 1 --messages 2000 \
      --latency --round-trips 2000 --warm-up-limit 5 --json "$out/starved-$mode/run-$run.json" >"$out/starved-$mode/run-$run.txt" 2>&1
    stop_server
  done
done
python3 benchmarks/summarize.py "$out" >"$out/summary.md"
cat "$out/summary.md"
