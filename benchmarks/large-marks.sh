#!/usr/bin/env bash
# What the high-water mark costs large messages: the two-process RemotePingPong at 1 MB with 5 clients, 10 in flight
# each (50 MB in flight each way on one connection), maximum-frame-size = 2MB on every transport and both sides, once
# per mark in MARKS, stock beside each, the marks interleaved run by run. `default` leaves the mark unset (it starts at
# eight maximum-size frames, 16 MB here, and follows each connection's rate up to four times that); any other value is
# set as write-buffer-high-water-mark on both sides, fixed: 16MB is the unset mark's start, 64MB its most.
# Writes OUT/large-marks-MARK/run-N.{txt,json}; `benchmarks/summarize.py OUT` prints the table.
#
#   benchmarks/large-marks.sh OUT        REPEAT (3), MARKS ("default 16MB 64MB")
set -euo pipefail
out=$1
repeat=${REPEAT:-3}
source "$(dirname "$0")/remote-ping-pong.sh"
mkdir -p "$out"
start_server "$out/large-marks-server.log"
for run in $(seq 1 "$repeat"); do
  for mark in ${MARKS:-default 16MB 64MB}; do
    set_args=()
    [[ $mark == default ]] || set_args=(--set "write-buffer-high-water-mark=$mark")
    mkdir -p "$out/large-marks-$mark"
    dotnet "$rpp" --role client --server "$address" --transport flushbatching,flushbatching-dotnetty,stock --clients 5 \
      --messages 100 --in-flight 10 --payload 1048576 --maximum-frame-size 2MB --warm-up-limit "${WARM_UP_LIMIT:-30}" \
      "${set_args[@]}" --json "$out/large-marks-$mark/run-$run.json" >"$out/large-marks-$mark/run-$run.txt" 2>&1
  done
done
stop_server
