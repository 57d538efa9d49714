#!/usr/bin/env bash
# The project's one entry point for building and testing. `./build.sh test` is the README's test command and
# what CI runs: restore (quietly, or it fails), build, every test, pack and check the packages, smoke-run the
# benchmarks.
set -euo pipefail
cd "$(dirname "$0")"
export DOTNET_NOLOGO=1 DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1

configuration=Release
artifacts=artifacts
command=${1:-test}

run_tests() {
  local project=$1 log
  log=$(mktemp)
  if ! dotnet test "$project" -c "$configuration" --no-build 2>&1 | tee "$log"; then
    failed_projects+=("$project")
  fi
  # "Failed!  - Failed:     0, Passed:   132, Skipped:     0, ..." or "Passed!  - ..."
  local summary
  summary=$(grep -Eo 'Failed: +[0-9]+, Passed: +[0-9]+, Skipped: +[0-9]+' "$log" | tail -1 || true)
  if [[ -z "$summary" ]]; then
    failed_projects+=("$project (no test summary)")
  else
    total_failed=$((total_failed + $(sed -E 's/.*Failed: +([0-9]+).*/\1/' <<<"$summary")))
    total_passed=$((total_passed + $(sed -E 's/.*Passed: +([0-9]+).*/\1/' <<<"$summary")))
    total_skipped=$((total_skipped + $(sed -E 's/.*Skipped: +([0-9]+).*/\1/' <<<"$summary")))
  fi
  rm -f "$log"
}

check_package() {
  local package=$1 id=$2 listing nuspec
  # Read whole before matching: `unzip | grep -q` fails at random under pipefail when grep stops early.
  listing=$(unzip -l "$package")
  nuspec=$(unzip -p "$package" "$id.nuspec")
  grep -q "README.md" <<<"$listing" || { echo "error: $package has no README.md" >&2; exit 1; }
  grep -q "lib/net8.0/$id.xml" <<<"$listing" || { echo "error: $package has no XML docs for net8.0" >&2; exit 1; }
  grep -q '<license type="expression">Apache-2.0</license>' <<<"$nuspec" || { echo "error: $package has no Apache-2.0 license expression" >&2; exit 1; }
  echo "packed $(basename "$package"): README, license expression and XML docs present"
}

# RemotePingPong across two processes: a server in the background, a client against the address it prints.
smoke_two_processes() {
  local dll=benchmarks/RemotePingPong/bin/$configuration/net10.0/RemotePingPong.dll log server address
  log=$(mktemp)
  dotnet "$dll" --role server --port 0 >"$log" 2>&1 &
  server=$!
  trap 'kill "$server" 2>/dev/null || true' RETURN
  for _ in $(seq 1 60); do
    address=$(grep -Eo 'server at akka\.tcp://[^ ]+' "$log" | sed 's/server at //' || true)
    [[ -n "$address" ]] && break
    sleep 1
  done
  if [[ -z "$address" ]]; then
    cat "$log" >&2
    echo "error: the RemotePingPong server printed no address" >&2
    exit 1
  fi
  dotnet "$dll" --role client --server "$address" --transport flushbatching,stock --clients 2 --messages 2000
  kill -TERM "$server"
  wait "$server"
  grep -q 'server stopped' "$log" || { cat "$log" >&2; echo "error: the RemotePingPong server did not stop on SIGTERM" >&2; exit 1; }
  rm -f "$log"
}

case "$command" in
  test)
    # Restore once, and treat any NuGet warning as a failure: a version the source lacks must be pinned, not guessed.
    restore_log=$(mktemp)
    dotnet restore FlushBatching.sln 2>&1 | tee "$restore_log"
    if grep -q 'warning NU' "$restore_log"; then
      echo "error: restore printed NuGet warnings (above); pin the versions in Directory.Packages.props" >&2
      exit 1
    fi
    rm -f "$restore_log"
    dotnet build FlushBatching.sln -c "$configuration" --no-restore
    mapfile -t projects < <(git ls-files '*.csproj')

    failed_projects=() total_passed=0 total_failed=0 total_skipped=0
    for project in "${projects[@]}"; do
      if grep -q '<PackageReference Include="Microsoft.NET.Test.Sdk"' "$project"; then run_tests "$project"; fi
    done

    rm -rf "$artifacts/packages"
    for project in "${projects[@]}"; do
      if [[ $project == src/* ]]; then
        dotnet pack "$project" -c "$configuration" --no-build -o "$artifacts/packages"
        id=$(basename "$project" .csproj)
        check_package "$(ls "$artifacts/packages/$id".[0-9]*.nupkg | grep -v snupkg | head -1)" "$id"
      fi
    done

    # The benchmarks must run: short smoke runs, not measurements.
    dotnet run -c "$configuration" --no-build --project benchmarks/TransportPingPong -- --pairs 1,2 --messages 2000
    dotnet run -c "$configuration" --no-build --project benchmarks/FlushBatching.Benchmarks -- \
      --filter '*FlushPolicy*' '*Framing*' --job dry --inProcess --artifacts "$artifacts/benchmarks"
    dotnet run -c "$configuration" --no-build --project benchmarks/RemotePingPong -- --clients 1 --messages 2000 --latency --round-trips 200
    smoke_two_processes
    dotnet run -c "$configuration" --no-build --project benchmarks/FlushBatching.Akka.Benchmarks -- \
      --filter '*' --job dry --inProcess --artifacts "$artifacts/benchmarks"

    echo "$total_passed passed, $total_failed failed, $total_skipped skipped"
    if ((${#failed_projects[@]})) || ((total_failed)); then
      echo "error: tests failed in: ${failed_projects[*]}" >&2
      exit 1
    fi
    ;;
  *)
    echo "usage: ./build.sh test" >&2
    exit 2
    ;;
esac
