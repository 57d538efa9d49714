#!/usr/bin/env python3
"""Names each file of tools/mutation-scores.md that changed after the commit its score was recorded at.

    python3 tools/mutation_staleness.py        (from the repository's root; build.sh runs it and only warns)

A row reads | `PATH` (PROJECT, group) | first | last run | COMMIT | ... |: PATH is relative to its project's folder
(src/FlushBatching, or src/FlushBatching.Akka or src/FlushBatching.DotNetty when the row says Akka or DotNetty).
Prints one line per stale or unresolvable row and exits 0: a stale score is a prompt to run tools/mutate.sh changed
COMMIT, not a failure.
"""
import re
import subprocess
import sys

ROW = re.compile(r"^\| `(?P<path>[^`]+)`(?: \((?P<where>[^)]*)\))? \| [^|]* \| [^|]* \| (?P<commit>[0-9a-f]{7,40}) \|")


def git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout


def project_of(where):
    if where and where.startswith("Akka"):
        return "src/FlushBatching.Akka/"
    if where and where.startswith("DotNetty"):
        return "src/FlushBatching.DotNetty/"
    return "src/FlushBatching/"


def main():
    text = open("tools/mutation-scores.md", encoding="utf-8").read()
    rows = [m for m in map(ROW.match, text.splitlines()) if m]
    if not rows:
        print("warning: tools/mutation-scores.md has no row with a commit", file=sys.stderr)
        return 0
    for row in rows:
        path = project_of(row["where"]) + row["path"]
        if not git("ls-files", path).strip():
            print(f"warning: the mutation table names {row['path']}, which is not at {path}", file=sys.stderr)
            continue
        changes = git("rev-list", "--count", f"{row['commit']}..HEAD", "--", path).strip()
        if changes != "0":
            print(f"warning: {path} changed in {changes} commit(s) since its mutation score was recorded at "
                  f"{row['commit']}: tools/mutate.sh changed {row['commit']}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
