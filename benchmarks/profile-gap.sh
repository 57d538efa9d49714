#!/usr/bin/env bash
# Where a transport's CPU goes beyond the ceiling's (Akka.Remote with no I/O): RemotePingPong in one process, once on
# the ceiling and once on TRANSPORT, each under `perf record`, then the samples of both split by where they fell
# (kernel, runtime, the transport's managed code, Akka's, ...) and the difference shared out.
#
#   benchmarks/profile-gap.sh [TRANSPORT] [CLIENTS] [PAYLOAD] [MESSAGES]     defaults: flushbatching 30 100 60000
#
# Needs perf (Debian: linux-perf) and root or perf_event_paranoid <= 1. Both runs do the same work, so sample counts
# compare directly; each run includes RemotePingPong's warm-up. Run it on a quiet machine.
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
  perf record -q -F 999 -o "$work/$t.data" -- dotnet "$rpp" --transport "$t" --clients "$clients" --messages "$messages" \
    --payload "$payload" 2>&1 | grep -A1 '^Num clients' | tail -1 | sed "s/^/$t: /"
  perf report -i "$work/$t.data" --sort dso,sym -n --stdio >"$work/$t.txt" 2>/dev/null
done
python3 - "$work/ceiling.txt" "$work/$transport.txt" "$transport" <<'PY'
import re, sys

def where(dso, kind, sym):
    if kind == "k":
        return "kernel (syscalls, TCP, scheduling)"
    if "clrjit" in dso:
        return "JIT compiler"
    if "coreclr" in dso:
        return "runtime (GC, thread pool, stubs)"
    if re.search(r"libc|ld-linux|vdso", dso):
        return "libc (memset, memmove, clock)"
    if re.search(r"\[(FlushBatching|System\.IO\.Pipelines|System\.Net\.Sockets|System\.Net\.Security|DotNetty[^\]]*)\]", sym):
        return "transport's managed code"
    if re.search(r"\[(Akka[^\]]*|Google\.Protobuf)\]", sym):
        return "Akka and protobuf managed code"
    return "other managed code (CoreLib, stubs)"

def samples(path):
    found = {}
    for line in open(path):
        m = re.match(r"\s+[\d.]+%\s+(\d+)\s+(\S+(?: tid \d+)?)\s+\[(.)\]\s+(.*)", line)
        if m:
            key = where(m[2], m[3], m[4])
            found[key] = found.get(key, 0) + int(m[1])
    return found

ceiling, mine, name = samples(sys.argv[1]), samples(sys.argv[2]), sys.argv[3]
gap = sum(mine.values()) - sum(ceiling.values())
print(f"\n| where | ceiling samples | {name} samples | difference | share of the difference |")
print("|---|---:|---:|---:|---:|")
for key in sorted(set(ceiling) | set(mine), key=lambda k: ceiling.get(k, 0) - mine.get(k, 0)):
    d = mine.get(key, 0) - ceiling.get(key, 0)
    print(f"| {key} | {ceiling.get(key, 0):,} | {mine.get(key, 0):,} | {d:+,} | {100 * d / gap:.0f}% |")
print(f"| all | {sum(ceiling.values()):,} | {sum(mine.values()):,} | {gap:+,} | 100% |")
PY
