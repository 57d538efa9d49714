#!/usr/bin/env bash
# The two-process RemotePingPong with both processes pinned to one core, then to two (taskset; .NET sizes its thread
# pool by the cores it may use): how much of the second core each transport turns into throughput. Writes
# OUT/cores-1/ and OUT/cores-2/ (run-N.{txt,json}). Called by measure.sh; runs alone too.
#
#   benchmarks/cores.sh OUT        REPEAT (3), CLIENTS (1,10,30)
set -euo pipefail
out=$1
repeat=${REPEAT:-3}
source "$(dirname "$0")/remote-ping-pong.sh"
for cpus in 0 0,1; do
  n=$(( $(tr -cd , <<<"$cpus" | wc -c) + 1 ))
  mkdir -p "$out/cores-$n"
  start_server "$out/cores-$n/server.log" taskset -c "$cpus"
  for run in $(seq 1 "$repeat"); do
    taskset -c "$cpus" dotnet "$rpp" --role client --server "$address" --transport flushbatching,flushbatching-dotnetty,stock \
      --clients "${CLIENTS:-1,10,30}" --messages 20000 --json "$out/cores-$n/run-$run.json" >"$out/cores-$n/run-$run.txt" 2>&1
  done
  stop_server
done
