#!/usr/bin/env bash
# Where a transport's CPU goes beyond the ceiling's (Akka.Remote with no I/O): RemotePingPong in one process, once on
# the ceiling and once on TRANSPORT, each under `perf record`, then the samples of both split by where they fell
# (kernel scheduling, TCP, copies, runtime, the transport's managed code, Akka's, ...) and the difference shared out;
# then context switches, CPU migrations and system calls per 1,000 messages (`perf stat`), the hand-offs behind them.
#
#   benchmarks/profile-gap.sh [TRANSPORT] [CLIENTS] [PAYLOAD] [MESSAGES]     defaults: flushbatching 30 100 60000
#
# Needs perf (Debian: linux-perf) and root or perf_event_paranoid <= 1. Both runs do the same work, so sample counts
# compare directly; each run includes one warm-up round (--warm-up-limit 0), counted in the messages, and the JIT's
# work, shown in its own row. Run it on a quiet machine.
set -euo pipefail
transport=${1:-flushbatching} clients=${2:-30} payload=${3:-100} messages=${4:-60000}
root=$(cd "$(dirname "$0")/.." && pwd)
dotnet build -c Release "$root/benchmarks/RemotePingPong" >/dev/null
rpp=$root/benchmarks/RemotePingPong/bin/Release/net10.0/RemotePingPong.dll
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The perf map names JIT-compiled methods; W^X off lets perf read the code they map to.
export DOTNET_PerfMapEnabled=1 DOTNET_EnableWriteXorExecute=0
for t in ceiling "$transport"; do
  perf record -q -F 999 -o "$work/$t.data" -- perf stat -x, -o "$work/$t.stat" \
    -e context-switches,cpu-migrations,raw_syscalls:sys_enter -- dotnet "$rpp" --transport "$t" --clients "$clients" \
    --messages "$messages" --payload "$payload" --warm-up-limit 0 2>&1 | grep -A1 '^Num clients' | tail -1 | sed "s/^/$t: /"
  perf report -i "$work/$t.data" --sort comm,dso,sym -n -t ';' --stdio >"$work/$t.txt" 2>/dev/null
done
# Every message both ways, the warm-up's too (5 clients, up to 10,000 messages each).
echo
python3 "$root/benchmarks/perf_split.py" --messages $((2 * (clients * messages + 5 * (messages < 10000 ? messages : 10000)))) \
  ceiling="$work/ceiling.txt" "$transport=$work/$transport.txt"
