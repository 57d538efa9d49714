#!/usr/bin/env bash
# Loops the shutdown and hostile-peer tests, as issue 43 asks, to find races a single run hides: each run is a fresh
# `dotnet test` of the Akka suite's built binaries, never retried; failures are kept with their whole output.
#
#   tools/loop.sh stack|transport|spi|flood|sustained RUNS [OUT]     OUT: artifacts/loop/SET by default (inside the repository:
#   the flood's node is found from there)
#
# stack: ConnectionStackSuite's hostile-peer, letting-go and close-race tests on the sockets stack and the DotNetty
# stack on both event-loop kinds, the DotNetty held-loop shutdown, ThreadPoolEventLoop's and EventLoopShutdown's own tests and each loop kind's stop
# (at least 57 tests, about 40 s a run on a quiet 2-core machine). transport: TransportSuite's hostile-peer and letting-go tests, the
# start/stop cycles and the SPI shutdown tests on both stacks, DotNetty's on both loop kinds (at least 36 tests, about
# 90 s a run). spi: the SPI suite on both stacks, DotNetty's on both loop kinds (at least 68 tests, about 45 s a run).
# flood: the connection floods, each a node process of its own: 400 held under a lowered descriptor limit and two
# systems in one process, per stack, and strangers that reopen every connection, plain and TLS, per stack and loop kind
# (11 tests, about 100 s a run). sustained: of those, the strangers that reopen and the two systems in one process
# (8 tests, about 60 s a run). For load, start a busy process per core first (`yes >/dev/null &` twice, or tools/fuzz.sh runs). Build
# first: ./build.sh test, or dotnet build tests/FlushBatching.Akka.Tests -c Release. OUT/summary has a line per run. It
# exits non-zero when any run failed, or ran fewer tests than the set has (a filter that no longer matches a renamed
# test would otherwise loop nothing and pass).
set -euo pipefail
set_name=${1:?usage: tools/loop.sh stack|transport|spi|flood|sustained RUNS [OUT]}
runs=${2:?usage: tools/loop.sh stack|transport|spi|flood|sustained RUNS [OUT]}
root=$(cd "$(dirname "$0")/.." && pwd)
out=${3:-$root/artifacts/loop/$set_name}
case $set_name in
  stack) names=(A_peer_that_never_starts_its_TLS_handshake A_peer_that_closes_inside_a_frame A_peer_that_announces_a_huge_frame Peers_that_connect_while_the_stack_stops_listening
    A_server_that_never_answers_the_TLS_handshake A_connect_that_is_never_answered Silent_peers_handshakes_past_their_bound
    A_close_to_a_peer_that_stopped_reading Writes_after_a_close_has_begun A_close_to_a_peer_that_reads A_shutdown_held_up_by_a_busy_event_loop
    Every_write_accepted_while_a_close_races_it ThreadPoolEventLoopTests EventLoopShutdownTests
    The_DotNetty_stack_runs_its_channels_on_the_thread_pool_or_on_threads_of_its_own_as_event_loop_says)
    least=57 ;;
  transport) names=(A_peer_that_stops_before_its_first_frame A_flood_of_connections_that_connect_and_vanish Shutdown_with_hostile_peers_connected
    Terminate_with_megabytes_queued Quarantining_a_peer_that_stopped_reading Shutdown_is_safe_to_repeat Shutdown_closes_the_port_and_ends
    Fifty_start_stop_cycles)
    least=36 ;;
  spi) names=(TransportSpiTests)
    least=68 ;;
  flood) names=(ConnectionFloodTests)
    least=11 ;;
  sustained) names=(Strangers_that_reopen_every_connection_closed Two_systems_in_one_process)
    least=8 ;;
  *) echo "error: the set is stack, transport, spi, flood or sustained, not '$set_name'" >&2; exit 2 ;;
esac
filter=$(printf 'FullyQualifiedName~%s|' "${names[@]}"); filter=${filter%|}
bin=$root/tests/FlushBatching.Akka.Tests/bin/Release/net10.0
[[ -f $bin/FlushBatching.Akka.Tests.dll ]] || { echo "error: build the tests first (no $bin/FlushBatching.Akka.Tests.dll)" >&2; exit 2; }
# A copy, so that a build during the loop does not change the binaries under test.
mkdir -p "$out"; rm -rf "$out/bin"; cp -r "$bin" "$out/bin"; : >"$out/summary"
for run in $(seq 1 "$runs"); do
  rc=0
  timeout 900 "$root/tools/isolated.sh" dotnet test "$out/bin/FlushBatching.Akka.Tests.dll" --filter "$filter" --logger "console;verbosity=normal" >"$out/last.log" 2>&1 || rc=$?
  total=$(grep -oE 'Total tests: [0-9]+' "$out/last.log" | grep -oE '[0-9]+' | tail -1 || true)
  if ((${total:-0} < least)); then
    ((rc != 0)) || rc=1
    echo "run $run ran ${total:-no} tests, fewer than the set's $least" >>"$out/last.log"
  fi
  echo "$(date +%T) run $run rc=$rc tests=${total:-0} $(grep -E 'Passed!|Failed!' "$out/last.log" | tail -1)" >>"$out/summary"
  ((rc == 0)) || cp "$out/last.log" "$out/failed-$run.log"
done
passed=$(grep -c 'rc=0 ' "$out/summary" || true)
echo "$set_name: $passed of $runs runs passed; failures in $out/failed-*.log"
((passed == runs))
