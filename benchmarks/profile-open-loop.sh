#!/usr/bin/env bash
# Where each transport's CPU goes at one offered rate of the open loop (two processes, as benchmarks/open-loop.sh runs
# it): each transport's client run under a system-wide `perf record`, so the server's work counts too, then the samples
# of all of them split by where they fell (kernel scheduling, TCP, copies, runtime, the transport's managed code, ...),
# and the whole machine's context switches, CPU migrations and system calls per 1,000 messages (`perf stat -a`).
#
#   benchmarks/profile-open-loop.sh [RATE] [PAYLOAD] [TRANSPORTS] [SECONDS]
#       defaults: 80000 100 stock,flushbatching,flushbatching-dotnetty 10; stock, first, is the reference column
#
# Every transport is offered the same round trips, so sample counts compare directly while each keeps up (the client
# prints whether every message came back); each recording includes the client's start and one 2 s warm-up round
# (--warm-up-limit 0). Needs perf (Debian: linux-perf) and root or perf_event_paranoid <= 1. Run it on a quiet machine.
set -euo pipefail
rate=${1:-80000} payload=${2:-100} transports=${3:-stock,flushbatching,flushbatching-dotnetty} seconds=${4:-10}
# The perf map names JIT-compiled methods, in the server too; W^X off lets perf read the code they map to.
export DOTNET_PerfMapEnabled=1 DOTNET_EnableWriteXorExecute=0
source "$(dirname "$0")/remote-ping-pong.sh"
work=$(mktemp -d)
trap 'if [[ -n "$server" ]]; then kill -TERM "$server" 2>/dev/null || true; fi; rm -rf "$work"' EXIT
start_server "$work/server.log"
columns=()
for t in ${transports//,/ }; do
  perf record -q -a -F 999 -o "$work/$t.data" -- perf stat -a -x, -o "$work/$t.stat" \
    -e context-switches,cpu-migrations,raw_syscalls:sys_enter -- dotnet "$rpp" --role client --server "$address" --transport "$t" \
    --clients 10 --open-loop "$rate" --open-loop-seconds "$seconds" --payload "$payload" --warm-up-limit 0 2>/dev/null |
    grep "^$t, $rate," || echo "$t: no result row"
  perf report -i "$work/$t.data" --sort comm,dso,sym -n -t ';' --stdio >"$work/$t.txt" 2>/dev/null
  columns+=("$t=$work/$t.txt")
done
stop_server
# Every round trip offered is two messages; the warm-up offers the same rate for 2 s. Counted machine-wide.
echo
python3 benchmarks/perf_split.py --messages $((2 * rate * (seconds + 2))) "${columns[@]}"
