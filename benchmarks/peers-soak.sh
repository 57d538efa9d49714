#!/usr/bin/env bash
# The DotNetty stack's pooled memory under both event loops, side by side: a hub node and PEERS (100) peer systems in
# processes of 50, one association each, the hub pinging every peer RATE (20) times a second with PAYLOAD (1000) bytes,
# for MINUTES (10), with and without TLS, on the thread-pool loop and on dedicated loops, and on stock Akka.Remote for
# reference. Each hub is sampled every 30 s (after a full collection): working set, live heap, DotNetty's pooled
# allocator (arena chunks, thread caches, buffers out), threads, descriptors, and every warning and error DotNetty's
# EventSource reports. Each run judges its own samples (RemotePingPong --peers N --soak M) and fails when a holding
# grows or DotNetty reports an error; this script fails when any run does, and writes OUT/CONFIG.{txt,json} and
# OUT/summary.md.
#
#   benchmarks/peers-soak.sh [MINUTES] [OUT]       OUT is benchmarks/results/peers-soak by default
#
# The runs go at once (CONFIGS picks some), so their rates share the machine: a soak, not a benchmark.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
minutes=${1:-10}
out=${2:-$root/benchmarks/results/peers-soak}
configs=${CONFIGS:-flushbatching-dotnetty flushbatching-dotnetty+tls flushbatching-dotnetty-dedicated flushbatching-dotnetty-dedicated+tls stock}
cd "$root"
dotnet build -c Release benchmarks/RemotePingPong >/dev/null
rpp=benchmarks/RemotePingPong/bin/Release/net10.0/RemotePingPong.dll
rm -rf "$out"
mkdir -p "$out"
declare -A run
for config in $configs; do
  transport=${config%+tls}
  tls=()
  [[ $config == *+tls ]] && tls=(--tls)
  dotnet "$rpp" --transport "$transport" "${tls[@]}" --peers "${PEERS:-100}" --peers-rate "${RATE:-20}" --payload "${PAYLOAD:-1000}" \
    --soak "$minutes" --sample-every 30 --json "$out/$config.json" >"$out/$config.txt" 2>&1 &
  run[$config]=$!
done
failed=()
for config in $configs; do
  wait "${run[$config]}" || failed+=("$config")
done

python3 - "$out" $configs >"$out/summary.md" <<'PY'
import json, os, sys
out, configs = sys.argv[1], sys.argv[2:]
reports = {c: json.load(open(f"{out}/{c}.json")) for c in configs if os.path.exists(f"{out}/{c}.json")}
if not reports:
    sys.exit(0)
first = next(iter(reports.values()))
print(f"Machine: {first['Machine']}\n")
print(f"{first['Minutes']:.0f} minutes, {first['Peers']} peers, {first['PingsPerPeerPerSecond']} pings/s each of {first['Payload']} B; the runs went at once. "
      "The hub process; each cell: median of the first third of the samples after the 2-minute warm-up → median of the last third.\n")
print("| transport | working set outside DotNetty's pool [MB] | live heap [MB] | DotNetty's pool [MB] | thread caches | pooled buffers out | threads | round trips/s | CPU per round trip [µs] | DotNetty warnings, errors | verdict |")
print("|---|---|---|---|---|---|---|---:|---:|---|---|")
for config, r in reports.items():
    m = {x["Name"]: x for x in r["Metrics"]}
    cell = lambda name, fmt="{:.0f}": f'{fmt.format(m[name]["First"])} → {fmt.format(m[name]["Last"])}'
    failed = [x["Name"] for x in r["Metrics"] if x["Failed"]] + (["DotNetty errors"] if r["DotNettyErrors"] else [])
    pool = "DotNetty's pool"
    print(f'| {config.replace("+tls", " + TLS")} | {cell(f"hub working set outside {pool} [MB]")} | {cell(f"hub live heap outside {pool} [MB]", "{:.1f}")} | '
          f'{cell(f"{pool} [MB]")} | {cell("DotNetty thread caches")} | {cell("DotNetty pooled buffers out")} | {cell("hub threads")} | '
          f'{m["round trips/sec"]["Last"]:,.0f} | {m["hub CPU per round trip [us]"]["Last"]:.1f} | {r["DotNettyWarnings"]}, {r["DotNettyErrors"]} | {"level" if not failed else "grew: " + ", ".join(failed)} |')
PY
cat "$out/summary.md"
if (( ${#failed[@]} > 0 )); then
  echo "peers soak failed: ${failed[*]} (see $out/*.txt)" >&2
  exit 1
fi
