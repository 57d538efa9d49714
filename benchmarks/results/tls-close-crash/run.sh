#!/usr/bin/env bash
# Runs close-during-read.cs five times with ShutdownAsync during reads and five times without, alternating, and
# prints each run's exit status and last line (134 is glibc's abort, 139 a segmentation fault).
set -uo pipefail
cd "$(dirname "$0")"
dotnet build close-during-read.cs -c Release >/dev/null
for run in 1 2 3 4 5; do
  for mode in shutdown none; do
    out=$(dotnet run close-during-read.cs -c Release -- 5000 "$mode" 2>&1)
    echo "$mode run $run: exit $? · $(tail -1 <<<"$out")"
  done
done
