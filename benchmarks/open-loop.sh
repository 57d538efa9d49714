#!/usr/bin/env bash
# Latency against offered load, two processes: round trips offered at fixed rates whatever comes back (open loop,
# latency from each message's due time), both stacks and stock interleaved rate by rate, at 100-byte and 3-byte
# payloads. Writes OUT/open-loop-PAYLOAD/run-N.{txt,json}. Called by measure.sh; runs alone too.
#
#   benchmarks/open-loop.sh OUT        REPEAT (3), RATES (round trips/s), SECONDS per rate (5), CLIENTS (10)
set -euo pipefail
out=$1
repeat=${REPEAT:-3}
rates=${RATES:-5000,20000,40000,60000,80000,100000,120000}
source "$(dirname "$0")/remote-ping-pong.sh"
mkdir -p "$out"/open-loop-100 "$out"/open-loop-3
start_server "$out/open-loop-server.log"
for run in $(seq 1 "$repeat"); do
  for payload in 100 3; do
    dotnet "$rpp" --role client --server "$address" --transport flushbatching,flushbatching-dotnetty,stock \
      --clients "${CLIENTS:-10}" --open-loop "$rates" --open-loop-seconds "${SECONDS_PER_RATE:-5}" --payload "$payload" \
      --json "$out/open-loop-$payload/run-$run.json" >"$out/open-loop-$payload/run-$run.txt" 2>&1
  done
done
stop_server
