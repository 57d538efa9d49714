#!/usr/bin/env bash
# The two-process RemotePingPong at large payloads (16 KB, 256 KB, 1 MB), with maximum-frame-size raised to 2MB on
# every transport and both sides, as a user sending such messages would: msgs/s, MB/s and CPU per byte. Each client
# keeps 10 in flight. Writes OUT/large-BYTES/run-N.{txt,json}. Called by measure.sh; runs alone too.
#
#   benchmarks/large.sh OUT        REPEAT (3), CLIENTS (1,5)
set -euo pipefail
out=$1
repeat=${REPEAT:-3}
source "$(dirname "$0")/remote-ping-pong.sh"
mkdir -p "$out"
start_server "$out/large-server.log"
# Messages per client fall with the size, so each row moves a few hundred MB and takes seconds.
for run in $(seq 1 "$repeat"); do
  for size in 16384:4000 262144:400 1048576:100; do
    payload=${size%:*}
    mkdir -p "$out/large-$payload"
    dotnet "$rpp" --role client --server "$address" --transport flushbatching,flushbatching-dotnetty,stock \
      --clients "${CLIENTS:-1,5}" --messages "${size#*:}" --in-flight 10 --payload "$payload" --maximum-frame-size 2MB \
      --json "$out/large-$payload/run-$run.json" >"$out/large-$payload/run-$run.txt" 2>&1
  done
done
stop_server
