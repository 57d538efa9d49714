#!/usr/bin/env bash
# Mutation testing with Stryker.NET: how many deliberately wrong lines the tests notice. One GROUP of files at a time,
# each with the fast deterministic tests that cover it (a test filter per group), so a group takes minutes instead of
# rerunning the loopback-socket suites for every mutant. Not run by CI.
#
#   tools/mutate.sh GROUP...          GROUP: core-batching core-framing core-queue core-marks core-settings
#                                            dotnetty-handler akka-settings akka-loops akka-setup-log, or
#                                            all; the lifecycle groups (loopback sockets and transports, minutes a
#                                            group): core-connection core-setup akka-openset akka-association
#                                            akka-dotnetty-close, or lifecycle
#   tools/mutate.sh changed BASE      every group with a file changed since the git revision BASE (the groups are
#                                     listed first)
#
# Writes Stryker's JSON and HTML reports under artifacts/mutation/GROUP/ and prints, per file, the mutants killed,
# survived, timed out and not covered, the score, and every survivor with its line; each report names the commit it
# scored (artifacts/mutation/GROUP/commit), and writes each file's score, commit and time-outs into its row of
# tools/mutation-scores.md (tools/result_tables.py), so that re-scoring is a run and a commit. CONCURRENCY (2) sets Stryker's. HANG_MS sets the milliseconds Stryker adds
# to a mutant's expected test time before it calls the mutant a time-out (Stryker's additional-timeout, 5000 unless
# set): with HANG_MS=40000, past the tests' own bound on every await (Poll.Patience, 30 s), a mutant reported as a
# time-out is one no test's bounded wait noticed, and one a bounded wait caught counts as killed. Needs
# dotnet-stryker 5.1.0 (installed under artifacts/tools when missing).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tools=$root/artifacts/tools
[[ -x $tools/dotnet-stryker ]] || dotnet tool install dotnet-stryker --version 5.1.0 --tool-path "$tools" >/dev/null
# The spec of group $1: project under test | test project | files to mutate (comma-separated globs) | test filter.
spec_of() {
  local spec
  case $1 in
    core-batching) spec="FlushBatching.csproj|FlushBatching.Tests|**/Batching/*.cs|FullyQualifiedName~FlushBatching.Tests.Batching" ;;
    core-framing) spec="FlushBatching.csproj|FlushBatching.Tests|**/Framing/*.cs|FullyQualifiedName~FlushBatching.Tests.Framing" ;;
    core-queue) spec="FlushBatching.csproj|FlushBatching.Tests|**/Tcp/Loops/FrameWriteQueue.cs,**/Tcp/Loops/FrameChunks.cs,**/Tcp/Loops/FrameSender.cs|FullyQualifiedName~FrameWriteQueue|FullyQualifiedName~FrameSenderTests|FullyQualifiedName~SendPathModelTests" ;;
    core-settings) spec="FlushBatching.csproj|FlushBatching.Tests|**/Tcp/ConnectionSettings.cs,**/SettingText.cs|FullyQualifiedName~ConnectionSettingsTests|FullyQualifiedName~SettingTextTests|FullyQualifiedName~BatchingSettingsTests|FullyQualifiedName~FramingSettingsTests|FullyQualifiedName~WriteBufferMarksTests" ;;
    dotnetty-handler) spec="FlushBatching.DotNetty.csproj|FlushBatching.DotNetty.Tests|**/*.cs|FullyQualifiedName~FlushBatching.DotNetty.Tests&FullyQualifiedName!~In_a_pipeline_built_as_the_guide_says" ;;
    akka-settings) spec="FlushBatching.Akka.csproj|FlushBatching.Akka.Tests|**/SectionReader.cs,**/BatchingTransportSettings.cs,**/TlsSection.cs|FullyQualifiedName~SettingsValidationTests|FullyQualifiedName~BatchingTransportSettingsTests" ;;
    core-connection) spec="FlushBatching.csproj|FlushBatching.Tests|**/Tcp/FramedConnection.cs,**/Tcp/Loops/FrameReceiver.cs,**/Tcp/Loops/CloseDeadline.cs,**/Tcp/Io/SocketSender.cs|FullyQualifiedName~ConnectionLifecycleTests|FullyQualifiedName~MetricsTests|FullyQualifiedName~CloseTests|FullyQualifiedName~BadInputTests|FullyQualifiedName~FrameReceiverTests|FullyQualifiedName~FlushTriggerTests|FullyQualifiedName~BackPressureTests|FullyQualifiedName~SocketSenderTests" ;;
    core-setup) spec="FlushBatching.csproj|FlushBatching.Tests|**/Tcp/FramedConnector.cs,**/Tcp/FramedListener.cs,**/Tcp/Admission/AcceptPause.cs|FullyQualifiedName~ConnectorTests|FullyQualifiedName~ListenerTests|FullyQualifiedName~AcceptErrorTests|FullyQualifiedName~DescriptorLeakTests|FullyQualifiedName~SocketOptionsTests|FullyQualifiedName~BadInputTests|FullyQualifiedName~CloseTests" ;;
    akka-openset) spec="FlushBatching.Akka.csproj|FlushBatching.Akka.Tests|**/OpenSet.cs|FullyQualifiedName~OpenSetTests" ;;
    akka-association) spec="FlushBatching.Akka.csproj|FlushBatching.Akka.Tests|**/BatchingAssociationHandle.cs,**/FlushBatchingTransport.cs|FullyQualifiedName~BatchingTcpTransportSpiTests" ;;
    akka-dotnetty-close) spec="FlushBatching.Akka.csproj|FlushBatching.Akka.Tests|**/DotNettyStack/DotNettyReadGate.cs,**/DotNettyStack/DotNettyConnection.cs,**/DotNettyStack/DotNettyConnectionStack.cs,**/DotNettyStack/DotNettyListener.cs,**/DotNettyStack/DotNettyConnector.cs|FullyQualifiedName~DotNettyConnectionStackTests|FullyQualifiedName~DotNettyBatchingTransportSpiTests" ;;
    core-marks) spec="FlushBatching.csproj|FlushBatching.Tests|**/Tcp/Loops/WriteBufferMarks.cs,**/Tcp/Loops/SendSignal.cs|FullyQualifiedName~WriteBufferMarksTests|FullyQualifiedName~SendSignalTests|FullyQualifiedName~FrameWriteQueue" ;;
    akka-loops) spec="FlushBatching.Akka.csproj|FlushBatching.Akka.Tests|**/DotNettyStack/ThreadPoolEventLoop.cs,**/DotNettyStack/EventLoopShutdown.cs|FullyQualifiedName~ThreadPoolEventLoopTests|FullyQualifiedName~EventLoopShutdownTests" ;;
    akka-setup-log) spec="FlushBatching.Akka.csproj|FlushBatching.Akka.Tests|**/InboundSetupLog.cs|FullyQualifiedName~InboundSetupLogTests" ;;
    *) echo "error: no group '$1'" >&2; exit 2 ;;
  esac
  echo "$spec"
}
all_groups=(core-batching core-framing core-queue core-marks core-settings dotnetty-handler akka-settings akka-loops akka-setup-log)
lifecycle_groups=(core-connection core-setup akka-openset akka-association akka-dotnetty-close)
groups=("$@")
[[ ${#groups[@]} -gt 0 ]] || { sed -n 2,17p "$0" >&2; exit 2; }
[[ ${groups[0]} == all ]] && groups=("${all_groups[@]}")
[[ ${groups[0]} == lifecycle ]] && groups=("${lifecycle_groups[@]}")
if [[ ${groups[0]} == changed ]]; then
  base=${groups[1]:?usage: tools/mutate.sh changed BASE}
  changed=$(git -C "$root" diff --name-only "$base" -- src)
  groups=()
  for group in "${all_groups[@]}" "${lifecycle_groups[@]}"; do
    IFS='|' read -r project _ mutate _ <<<"$(spec_of "$group")"
    if CHANGED=$changed python3 - "src/${project%.csproj}/" "$mutate" <<'PY'
import fnmatch, os, sys
prefix, globs = sys.argv[1], sys.argv[2].split(",")
files = ["/" + f[len(prefix):] for f in os.environ["CHANGED"].split() if f.startswith(prefix)]
sys.exit(0 if any(fnmatch.fnmatch(f, g.replace("**", "*")) for f in files for g in globs) else 1)
PY
    then groups+=("$group"); fi
  done
  echo "groups with a file changed since $base: ${groups[*]:-none}"
fi
for group in "${groups[@]}"; do
  spec=$(spec_of "$group")
  # The filter, last, keeps its own '|' (a test filter's "or").
  IFS='|' read -r project tests mutate filter <<<"$spec"
  out=$root/artifacts/mutation/$group
  rm -rf "$out"
  mkdir -p "$out"
  git -C "$root" rev-parse --short HEAD >"$out/commit"
  printf '{ "stryker-config": { "additional-timeout": %d } }\n' "${HANG_MS:-5000}" >"$out/stryker-config.json"
  mutates=()
  IFS=',' read -ra globs <<<"$mutate"
  for glob in "${globs[@]}"; do mutates+=(--mutate "$glob"); done
  echo "== $group: $mutate, tests: $filter"
  (cd "$root/tests/$tests" && "$root/tools/isolated.sh" "$tools/dotnet-stryker" --project "$project" "${mutates[@]}" --test-case-filter "$filter" \
    --config-file "$out/stryker-config.json" --configuration Release --concurrency "${CONCURRENCY:-2}" --reporter Json --reporter Html --reporter Progress \
    --output "$out" --skip-version-check --break-on-initial-test-failure >"$out/stryker.log" 2>&1) ||
    { tail -30 "$out/stryker.log" >&2; echo "error: stryker failed on $group (log: $out/stryker.log)" >&2; exit 1; }
  python3 - "$root" "$out"/reports/mutation-report.json <<'PY'
import json, os, sys
root, report = sys.argv[1], json.load(open(sys.argv[2]))
killed = ("Killed", "Timeout")
for path, file in sorted(report["files"].items()):
    mutants = [m for m in file["mutants"] if m["status"] not in ("Ignored", "CompileError")]
    if not mutants:
        continue
    count = lambda *s: sum(m["status"] in s for m in mutants)
    detected, valid = count(*killed), count(*killed, "Survived", "NoCoverage")
    score = f"{100 * detected / valid:.1f}%" if valid else "-"
    print(f"{os.path.relpath(path, root)}: {score} ({count('Killed')} killed, {count('Timeout')} timeout, "
          f"{count('Survived')} survived, {count('NoCoverage')} not covered)")
    for m in sorted(mutants, key=lambda m: m["location"]["start"]["line"]):
        if m["status"] in ("Survived", "NoCoverage"):
            print(f'  line {m["location"]["start"]["line"]}: {m["status"]} {m["mutatorName"]}: {m.get("replacement", "")!r}')
PY
  # The numbers go into tools/mutation-scores.md; the survivors' sentences there stay a person's.
  (cd "$root" && python3 tools/result_tables.py mutation "$out/reports/mutation-report.json" "$(cat "$out/commit")")
done
