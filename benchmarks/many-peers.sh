#!/usr/bin/env bash
# One hub node (RemotePingPong --peers) and 1, 50, 100, then 200 peer ActorSystems in processes of 50, on each
# transport: what the hub holds and spends per association, and its round trips to the peers. Writes
# OUT/many-peers/run-N.{txt,json}. Called by measure.sh; runs alone too.
#
#   benchmarks/many-peers.sh OUT        REPEAT (3), PEERS (1,50,100,200)
set -euo pipefail
out=$1
repeat=${REPEAT:-3}
source "$(dirname "$0")/remote-ping-pong.sh"
mkdir -p "$out/many-peers"
# One run per process: each process is a fresh hub, and the runs' medians are taken across processes.
for run in $(seq 1 "$repeat"); do
  dotnet "$rpp" --transport flushbatching,flushbatching-dotnetty,stock --peers "${PEERS:-1,50,100,200}" --peers-window 10 \
    --json "$out/many-peers/run-$run.json" >"$out/many-peers/run-$run.txt" 2>&1
done
