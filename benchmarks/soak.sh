#!/usr/bin/env bash
# A soak: RemotePingPong load across two processes for MINUTES (30 by default) on each FlushBatching stack and on stock
# Akka.Remote for reference, with and without TLS, the client side dropping its connections and making new ones every
# CYCLE minutes (3), both processes sampled every minute. Each pair judges its own samples and fails when a holding grows (RemotePingPong --soak);
# this script fails when any pair does, and writes every pair's text and JSON, summary.md and the charts
# docs/charts/soak-*.svg.
#
#   benchmarks/soak.sh [MINUTES] [OUT]      OUT is benchmarks/results/soak by default
#
# The six pairs run at once (12 processes), CLIENTS (5) clients each, so one 30-minute run covers them all; their
# msgs/sec share the machine. CONFIGS picks some: CONFIGS="flushbatching flushbatching-dotnetty+tls".
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
minutes=${1:-30}
out=${2:-$root/benchmarks/results/soak}
cycle=${CYCLE:-3}
clients=${CLIENTS:-5}
configs=${CONFIGS:-flushbatching flushbatching+tls flushbatching-dotnetty flushbatching-dotnetty+tls stock stock+tls}
cd "$root"
dotnet build -c Release benchmarks/RemotePingPong >/dev/null
rpp=benchmarks/RemotePingPong/bin/Release/net10.0/RemotePingPong.dll
rm -rf "$out"
mkdir -p "$out"
servers=()
trap 'kill -TERM "${servers[@]}" 2>/dev/null || true' EXIT
declare -A client
for config in $configs; do
  transport=${config%+tls}
  tls=()
  [[ $config == *+tls ]] && tls=(--tls)
  dotnet "$rpp" --role server --port 0 >"$out/$config-server.log" 2>&1 &
  servers+=($!)
  address=$(benchmarks/server-address.sh "$out/$config-server.log")
  dotnet "$rpp" --role client --server "$address" --transport "$transport" "${tls[@]}" --clients "$clients" \
    --soak "$minutes" --soak-cycle "$cycle" --json "$out/$config.json" >"$out/$config.txt" 2>&1 &
  client[$config]=$!
done
failed=()
for config in $configs; do
  wait "${client[$config]}" || failed+=("$config")
done
kill -TERM "${servers[@]}" 2>/dev/null || true
wait "${servers[@]}" 2>/dev/null || true
trap - EXIT

python3 - "$out" $configs >"$out/summary.md" <<'PY'
import json, sys
out, configs = sys.argv[1], sys.argv[2:]
reports = {c: json.load(open(f"{out}/{c}.json")) for c in configs if __import__("os").path.exists(f"{out}/{c}.json")}
if not reports:
    sys.exit(0)
first = next(iter(reports.values()))
POOL = "DotNetty's pool"
print(f"Machine: {first['Machine']}\n")
print(f"{first['Minutes']:.0f} minutes, {first['Clients']} clients per pair, {first['Payload']}-byte payload, connections re-made every "
      f"{first['CycleMinutes']:.0f} minutes; the pairs ran at once. Each cell: median of the first third of the samples after "
      "the warm-up → median of the last third, client / server. Memory outside DotNetty's pool, whose chunks are judged "
      "against its own bound; live heap after a full collection.\n")
print("| stack | working set [MB] | live heap [MB] | DotNetty's pool [MB] | buffers out (FlushBatching, DotNetty) | open fds | threads | msgs/sec | CPU [µs/msg] | verdict |")
print("|---|---|---|---|---|---|---|---:|---:|---|")
for config, r in reports.items():
    m = {x["Name"]: x for x in r["Metrics"]}
    pair = lambda name, fmt="{:.0f}": " / ".join(f'{fmt.format(m[f"{side} {name}"]["First"])} → {fmt.format(m[f"{side} {name}"]["Last"])}' for side in ("client", "server"))
    buffers = " / ".join(f'{m[f"{side} FlushBatching buffers rented"]["Last"]:.0f}, {m[f"{side} DotNetty pooled buffers out"]["Last"]:.0f}' for side in ("client", "server"))
    failed = [x["Name"] for x in r["Metrics"] if x["Failed"]]
    working, live, pool = pair(f"working set outside {POOL} [MB]"), pair(f"live heap outside {POOL} [MB]", "{:.1f}"), pair(f"{POOL} [MB]")
    print(f'| {config.replace("+tls", " + TLS")} | {working} | {live} | {pool} | {buffers} | {pair("open file descriptors")} | {pair("threads")} | {m["msgs/sec"]["Last"]:,.0f} | '
          f'{m["CPU per message [us]"]["Last"]:.1f} | {"level" if not failed else "grew: " + ", ".join(failed)} |')
PY
cat "$out/summary.md"
(cd tools/charts && npm ci --silent && node render.mjs --soak "$out" --out ../../docs/charts) ||
  echo "charts not drawn: tools/charts needs node and npm"
if (( ${#failed[@]} > 0 )); then
  echo "soak failed: ${failed[*]} (see $out/*.txt)" >&2
  exit 1
fi
