#!/usr/bin/env bash
# The project's one entry point for building and testing. `./build.sh test` is the README's test command and
# what CI runs. Projects that need Akka.NET or DotNetty are built and tested where those packages restore; where
# they do not, they are skipped with one loud line, and any other failure still fails the run.
set -euo pipefail
cd "$(dirname "$0")"
export DOTNET_NOLOGO=1 DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1

configuration=Release
artifacts=artifacts
command=${1:-test}

# Projects that need Akka.* or DotNetty.* packages, which may not restore on every machine: those that reference
# such a package, and those that reference such a project, however indirectly.
adapter_projects() {
  local -A adapter=()
  local project changed=1 reference
  while ((changed)); do
    changed=0
    for project in $(git ls-files '*.csproj' 2>/dev/null); do
      [[ -n "${adapter[$project]:-}" ]] && continue
      if grep -Eq 'PackageReference[^>]+Include="(Akka|DotNetty)' "$project"; then
        adapter[$project]=1 changed=1
        continue
      fi
      for reference in $(grep -Eo 'ProjectReference Include="[^"]+"' "$project" | sed -E 's/.*Include="([^"]+)"/\1/'); do
        reference=$(realpath -m --relative-to=. "$(dirname "$project")/$reference")
        if [[ -n "${adapter[$reference]:-}" ]]; then
          adapter[$project]=1 changed=1
          break
        fi
      done
    done
  done
  printf '%s\n' "${!adapter[@]}" | sort | grep -v '^$' || true
}

core_projects() {
  local adapters
  adapters=$(adapter_projects)
  git ls-files '*.csproj' | while read -r project; do
    grep -qxF "$project" <<<"$adapters" || echo "$project"
  done
}

# Restores each adapter project; prints those that restored. One missing Akka/DotNetty package is a skip,
# anything else is a failure.
restorable_adapters() {
  local skipped=() project log other_errors
  for project in $(adapter_projects); do
    log=$(mktemp)
    if dotnet restore "$project" >"$log" 2>&1; then
      rm -f "$log"
      echo "$project"
      continue
    fi
    other_errors=$(grep -E 'error' "$log" | grep -Eiv 'NU110[1-3].*(akka|dotnetty)' || true)
    if grep -Eiq 'NU110[1-3].*(akka|dotnetty)' "$log" && [[ -z "$other_errors" ]]; then
      skipped+=("$project")
    else
      cat "$log" >&2
      echo "error: restoring $project failed for a reason other than missing Akka.NET/DotNetty packages" >&2
      exit 1
    fi
    rm -f "$log"
  done
  if ((${#skipped[@]})); then
    echo "######## SKIPPED ${#skipped[@]} project(s) that need Akka.NET/DotNetty, which this machine's NuGet source does not serve: ${skipped[*]} ########" >&2
  fi
}

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

case "$command" in
  test)
    mapfile -t projects < <(core_projects)
    restored=$(mktemp)
    restorable_adapters >"$restored" # not in a process substitution, so that its failure stops the run
    mapfile -t adapters <"$restored"
    rm -f "$restored"
    projects+=("${adapters[@]}")
    for project in "${projects[@]}"; do
      dotnet build "$project" -c "$configuration"
    done

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

    # The benchmarks must run: short smoke runs, not measurements. TransportPingPong and the BenchmarkDotNet suite
    # everywhere; RemotePingPong where Akka.NET restored.
    dotnet run -c "$configuration" --no-build --project benchmarks/TransportPingPong -- --pairs 1,2 --messages 2000
    dotnet run -c "$configuration" --no-build --project benchmarks/FlushBatching.Benchmarks -- \
      --filter '*FlushPolicy*' '*Framing*' --job dry --inProcess --artifacts "$artifacts/benchmarks"
    if grep -qxF benchmarks/RemotePingPong/RemotePingPong.csproj <<<"$(printf '%s\n' "${adapters[@]}")"; then
      dotnet run -c "$configuration" --no-build --project benchmarks/RemotePingPong -- --clients 1 --messages 2000 --latency --round-trips 200
      dotnet run -c "$configuration" --no-build --project benchmarks/FlushBatching.Akka.Benchmarks -- \
        --filter '*' --job dry --inProcess --artifacts "$artifacts/benchmarks"
    fi

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
