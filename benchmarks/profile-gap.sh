#!/usr/bin/env bash
# Where a transport's CPU goes beyond the ceiling's (Akka.Remote with no I/O): RemotePingPong in one process, once on
# the ceiling and once on TRANSPORT, each under `perf record`, then the samples of both split by where they fell
# (kernel scheduling, TCP, copies, runtime, the transport's managed code, Akka's, ...) and the difference shared out;
# then context switches, CPU migrations and system calls per 1,000 messages (`perf stat`), the hand-offs behind them.
#
#   benchmarks/profile-gap.sh [TRANSPORT] [CLIENTS] [PAYLOAD] [MESSAGES]     defaults: flushbatching 30 100 60000
#
# BASE=flushbatching compares the DotNetty stack (TRANSPORT=flushbatching-dotnetty) with the sockets stack, sample by
# sample: what the two stacks' own code and their hand-offs cost beyond each other.
#
# BASE=ceiling-handoff2 compares with the ceiling plus the two thread hand-offs per burst that the sockets stack has
# (a send loop, a receive loop), so that what remains is the socket's own cost. BASE defaults to ceiling.
#
# Needs perf (Debian: linux-perf) and root or perf_event_paranoid <= 1. Each process warms up until the JIT is quiet
# (RemotePingPong's warm-up, at most WARM_UP_LIMIT seconds, 90 by default), and perf counts only what follows: one
# row of CLIENTS x MESSAGES, not the systems' start and stop. A process still tiering its code up profiles as another
# program would. Both runs do the same work, so sample counts compare directly. Run it on a quiet machine.
set -euo pipefail
transport=${1:-flushbatching} clients=${2:-30} payload=${3:-100} messages=${4:-60000} base=${BASE:-ceiling}
root=$(cd "$(dirname "$0")/.." && pwd)
dotnet build -c Release "$root/benchmarks/RemotePingPong" >/dev/null
rpp=$root/benchmarks/RemotePingPong/bin/Release/net10.0/RemotePingPong.dll
# KEEP=DIR keeps each run's perf report (DIR/TRANSPORT.txt, by symbol) and perf stat output there.
if [[ -n ${KEEP:-} ]]; then mkdir -p "$KEEP"; work=$(cd "$KEEP" && pwd); else work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; fi
# The perf map names JIT-compiled methods; W^X off lets perf read the code they map to.
export DOTNET_PerfMapEnabled=1 DOTNET_EnableWriteXorExecute=0
# Turns both perfs' events on or off for transport $t.
events() { echo "$1" >"$work/$t.record"; echo "$1" >"$work/$t.count"; }
for t in "$base" "$transport"; do
  rm -f "$work/$t.record" "$work/$t.count"
  mkfifo "$work/$t.record" "$work/$t.count"
  # Both perfs start with their events off (-D -1), are turned on by the warm-up's last line and off by the row's.
  perf record -q -F 999 -D -1 --control "fifo:$work/$t.record" -o "$work/$t.data" -- \
    perf stat -D -1 --control "fifo:$work/$t.count" -x, -o "$work/$t.stat" \
    -e context-switches,cpu-migrations,raw_syscalls:sys_enter -- \
    dotnet "$rpp" --transport "$t" --clients "$clients" --messages "$messages" --payload "$payload" \
    --warm-up-limit "${WARM_UP_LIMIT:-90}" 2>&1 | while IFS= read -r line; do
      case $line in
        "warm-up: stopped"* | "warm-up: "[0-9]*) echo "$t: $line"; events enable ;;
        "[1/1]"*) events disable ;;
        "$clients, "*) echo "$t: $line" ;;  # the row, wherever perf's own lines fall
      esac
    done
  perf report -i "$work/$t.data" --sort comm,dso,sym -n -t ';' --stdio >"$work/$t.txt" 2>/dev/null
  rm -f "$work/$t.data" "$work/$t.record" "$work/$t.count"
done
# Every message of the row, both ways.
echo
python3 "$root/benchmarks/perf_split.py" --messages $((2 * clients * messages)) \
  "$base=$work/$base.txt" "$transport=$work/$transport.txt"
