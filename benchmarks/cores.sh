#!/usr/bin/env bash
# The two-process RemotePingPong with both processes pinned to one core, then to two (taskset; .NET sizes its thread
# pool by the cores it may use): how much of the second core each transport turns into throughput. Writes
# OUT/cores-1/ and OUT/cores-2/ (run-N.{txt,json}). Called by measure.sh; runs alone too.
#
#   benchmarks/cores.sh OUT        REPEAT (3), CLIENTS (1,10,30)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$1
repeat=${REPEAT:-3}
cd "$root"
dotnet build -c Release benchmarks/RemotePingPong >/dev/null
rpp=benchmarks/RemotePingPong/bin/Release/net10.0/RemotePingPong.dll
for cpus in 0 0,1; do
  n=$(( $(tr -cd , <<<"$cpus" | wc -c) + 1 ))
  mkdir -p "$out/cores-$n"
  taskset -c "$cpus" dotnet "$rpp" --role server --port 0 >"$out/cores-$n/server.log" 2>&1 &
  server=$!
  trap 'kill -TERM "$server" 2>/dev/null || true' EXIT
  address=$(benchmarks/server-address.sh "$out/cores-$n/server.log")
  for run in $(seq 1 "$repeat"); do
    taskset -c "$cpus" dotnet "$rpp" --role client --server "$address" --transport flushbatching,flushbatching-dotnetty,stock \
      --clients "${CLIENTS:-1,10,30}" --messages 20000 --json "$out/cores-$n/run-$run.json" >"$out/cores-$n/run-$run.txt" 2>&1
  done
  kill -TERM "$server"
  wait "$server" || true
  trap - EXIT
done
