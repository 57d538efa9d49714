#!/usr/bin/env bash
# Every table of docs/performance.md, measured again on this machine from the current build: the raw output of each
# run and a summary.md of medians per benchmark, in OUT (benchmarks/results/current by default).
#
#   benchmarks/measure.sh [OUT]        REPEAT=3 by default: runs per benchmark, interleaved, medians reported
#
# With REPEAT=2 it took about 1 hour 40 minutes on 2 cores (2026-11-27 at c211fbc: the open loop about 20 minutes,
# the BenchmarkDotNet suites about 15), warm-ups included: each RemotePingPong process warms up until the JIT is quiet.
# With REPEAT=1, 52 minutes (2026-11-28 at d9d1feb); 50 minutes with the dedicated-loop rows (2026-12-02). REPEAT=3 takes about half as long again as REPEAT=2. Run it on
# a quiet machine: nothing else building or testing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/benchmarks/results/current}
repeat=${REPEAT:-3}
source "$root/benchmarks/remote-ping-pong.sh"
dotnet build -c Release benchmarks/TransportPingPong >/dev/null
tpp=benchmarks/TransportPingPong/bin/Release/net10.0/TransportPingPong.dll
rm -rf "$out"
mkdir -p "$out"/remote-100 "$out"/remote-3 "$out"/inproc-100 "$out"/inproc-3 "$out"/handoff-100 "$out"/handoff-3 "$out"/latency \
  "$out"/transport

# RemotePingPong across two processes: one server for every run, clients at the default payload and at 3 bytes. The
# ceiling (Akka.Remote over no I/O at all) runs beside them, in the client process. The DotNetty stack runs on both of
# its event-loop kinds: flushbatching-dotnetty on the thread pool (the default), flushbatching-dotnetty-dedicated on
# DotNetty's own loops.
start_server "$out/server.log"
for run in $(seq 1 "$repeat"); do
  for payload in 100 3; do
    dotnet "$rpp" --role client --server "$address" --transport flushbatching,flushbatching-dotnetty,flushbatching-dotnetty-dedicated,stock,ceiling \
      --clients 1,5,10,30 --messages 20000 --payload "$payload" --json "$out/remote-$payload/run-$run.json" \
      >"$out/remote-$payload/run-$run.txt" 2>&1
  done
done
stop_server

# Both systems in one process, where the ceiling is measured on equal terms: what each transport leaves of what Akka
# itself allows, at the client counts where Akka's own costs dominate.
for run in $(seq 1 "$repeat"); do
  for payload in 100 3; do
    dotnet "$rpp" --transport flushbatching,flushbatching-dotnetty,flushbatching-dotnetty-dedicated,stock,ceiling --clients 15,30 --messages 20000 \
      --payload "$payload" --json "$out/inproc-$payload/run-$run.json" >"$out/inproc-$payload/run-$run.txt" 2>&1
  done
done

# The ceiling with a transport's thread hand-offs but no I/O, beside the sockets stack: how much of its gap to the
# ceiling is the hops and how much the socket. Longer rows: the differences are small.
for run in $(seq 1 "$repeat"); do
  for payload in 100 3; do
    dotnet "$rpp" --transport ceiling,ceiling-handoff,ceiling-handoff2,flushbatching --clients 15,30 --messages 60000 \
      --payload "$payload" --json "$out/handoff-$payload/run-$run.json" >"$out/handoff-$payload/run-$run.txt" 2>&1
  done
done

# One message in flight, both systems in one process: the light-load round trip.
for run in $(seq 1 "$repeat"); do
  dotnet "$rpp" --transport flushbatching,flushbatching-dotnetty,flushbatching-dotnetty-dedicated,stock,stock-nobatching,ceiling --clients 1 --messages 1000 \
    --latency --round-trips 20000 --payload 3 --json "$out/latency/run-$run.json" >"$out/latency/run-$run.txt" 2>&1
done

# Latency against offered load (open loop), how each transport uses a second core, large messages and what the
# high-water mark costs them, many peers.
benchmarks/open-loop.sh "$out"
benchmarks/cores.sh "$out"
benchmarks/large.sh "$out"
benchmarks/large-marks.sh "$out"
benchmarks/many-peers.sh "$out"

# The core alone, batching off and on.
for run in $(seq 1 "$repeat"); do
  dotnet "$tpp" --pairs 1,5,10,30 --messages 20000 --json "$out/transport/run-$run.json" >"$out/transport/run-$run.txt" 2>&1
done

# BenchmarkDotNet: the core's parts and the Akka transports through the SPI.
dotnet run -c Release --project benchmarks/FlushBatching.Benchmarks -- --filter '*' --job short \
  --artifacts "$out/bdn-core" >"$out/bdn-core.txt" 2>&1
dotnet run -c Release --project benchmarks/FlushBatching.Akka.Benchmarks -- --filter '*AssociationWrite*' --job short \
  --artifacts "$out/bdn-akka" >"$out/bdn-akka.txt" 2>&1
# A request's time differs between transports by tens of microseconds, within a ShortRun's error: a MediumRun (2
# launches of 15 iterations) narrows it.
dotnet run -c Release --project benchmarks/FlushBatching.Akka.Benchmarks -- --filter '*ShardedRequest*' --job medium \
  --artifacts "$out/bdn-sharded" >"$out/bdn-sharded.txt" 2>&1

# The reports' Markdown and CSV are kept; their HTML copies and BenchmarkDotNet's logs (the .txt above) are not.
find "$out" -name '*.html' -delete
find "$out"/bdn-* -maxdepth 1 -name '*.log' -delete
python3 benchmarks/summarize.py "$out" >"$out/summary.md"
cat "$out/summary.md"

# docs/performance.md's charts: every run of the 100-byte rows and of the light-load round trip, medians drawn.
python3 - "$out" <<'PY'
import glob, json, sys
out = sys.argv[1]
runs = lambda folder: [json.load(open(f)) for f in sorted(glob.glob(f"{out}/{folder}/run-*.json"))]
remote = runs("remote-100")
json.dump({"Machine": remote[0]["Machine"], "Rows": [r for d in remote for r in d["Rows"]],
           "Latency": [l for d in runs("latency") for l in d["Latency"]]}, open(f"{out}/charts-remote.json", "w"))
json.dump([r for d in runs("transport") for r in d], open(f"{out}/charts-transport.json", "w"))
json.dump({"Machine": remote[0]["Machine"], "Payload": 100, "OpenLoop": [r for d in runs("open-loop-100") for r in d["OpenLoop"]]},
          open(f"{out}/charts-open-loop.json", "w"))
json.dump({"Machine": remote[0]["Machine"], "ManyPeers": [r for d in runs("many-peers") for r in d["ManyPeers"]]},
          open(f"{out}/charts-many-peers.json", "w"))
PY
(cd tools/charts && npm ci --silent && node render.mjs --remote "$out/charts-remote.json" --transport "$out/charts-transport.json" \
  --open-loop "$out/charts-open-loop.json" --many-peers "$out/charts-many-peers.json" --out ../../docs/charts) ||
  echo "charts not drawn: tools/charts needs node and npm"
