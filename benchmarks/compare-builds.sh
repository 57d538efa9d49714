#!/usr/bin/env bash
# RemotePingPong across two processes, two builds of this repository side by side: the build of BEFORE and the build
# of AFTER (any git revisions), interleaved run by run, then a table of medians.
#
#   benchmarks/compare-builds.sh BEFORE AFTER OUT [RemotePingPong client options...]
#   benchmarks/compare-builds.sh HEAD~3 HEAD results/x --transport flushbatching,flushbatching-dotnetty,stock \
#       --clients 1,5,10,30 --messages 20000 --payload 100
#
# Each repeat (REPEAT, default 3) starts a fresh server process per build and runs both builds' clients, BEFORE first
# in odd repeats and AFTER first in even ones: a process that happens to run slow, or a build that always runs second,
# then weighs on one run of each build instead of on all of one build's runs. OUT receives every run's text and JSON
# and summary.md (benchmarks/compare_summary.py: medians with each build's spread).
# With LOCAL=1 each run is one process (both ActorSystems in it, no server), where the ceiling
# transport can run beside the others. SERVER_ARGS go to each server process, for example "--starve-pool 8".
set -euo pipefail
before=$1 after=$2 out=$3
shift 3
repeat=${REPEAT:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
mkdir -p "$out"
declare -A dll
server=
# errexit holds in the trap too, so each step that may fail (no server running, a worktree never made) says || true.
trap 'kill -TERM $server 2>/dev/null || true; for build in before after; do git -C "$root" worktree remove --force "$work/$build" 2>/dev/null || true; done; rmdir "$work" 2>/dev/null || true' EXIT
for build in before after; do
  rev=${!build}
  git -C "$root" worktree add --detach "$work/$build" "$rev" >/dev/null
  dotnet build "$work/$build/benchmarks/RemotePingPong" -c Release >"$out/build-$build.log" 2>&1
  dll[$build]=$work/$build/benchmarks/RemotePingPong/bin/Release/net10.0/RemotePingPong.dll
done
# Builds from before --warm-up-limit warm up for one round only: then both builds do, so that neither measures while
# the JIT is still at work and the other not.
declare -A warm knows
for build in before after; do
  warm[$build]=
  knows[$build]=$(dotnet "${dll[$build]}" --help | grep -c -- --warm-up-limit || true)
done
if [[ ${knows[before]} == 0 || ${knows[after]} == 0 ]]; then
  for build in before after; do
    if [[ ${knows[$build]} != 0 ]]; then
      warm[$build]="--warm-up-limit 0"
    fi
  done
fi
for run in $(seq 1 "$repeat"); do
  order="before after"
  (( run % 2 == 0 )) && order="after before"
  for build in $order; do
    if [[ ${LOCAL:-0} == 1 ]]; then
      dotnet "${dll[$build]}" "$@" ${warm[$build]} --json "$out/$build-$run.json" >"$out/$build-$run.txt" 2>&1
      continue
    fi
    dotnet "${dll[$build]}" --role server --port 0 ${SERVER_ARGS:-} >"$out/server-$build-$run.log" 2>&1 &
    server=$!
    address=$("$root/benchmarks/server-address.sh" "$out/server-$build-$run.log")
    dotnet "${dll[$build]}" --role client --server "$address" "$@" ${warm[$build]} --json "$out/$build-$run.json" >"$out/$build-$run.txt" 2>&1
    kill -TERM "$server"
    wait "$server" || true
    server=
  done
done
python3 "$root/benchmarks/compare_summary.py" "$out" >"$out/summary.md"
cat "$out/summary.md"
