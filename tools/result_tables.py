#!/usr/bin/env python3
"""Writes a run's numbers into the table that keeps them, so that re-scoring is a run and a commit, not a hand edit.

    python3 tools/result_tables.py mutation REPORT.json COMMIT     tools/mutate.sh runs it after each group
    python3 tools/result_tables.py fuzz TARGET FUZZER_STATS MINUTES  tools/fuzz.sh runs it after each run

mutation: each file of Stryker's JSON report gets its row of tools/mutation-scores.md: "last run" (the score),
"recorded at" (COMMIT) and "time-outs" (of the mutants detected); a file without a row gets one, its first score the
same. The survivors' column, a sentence a person writes (tools/mutation-survivors.md has the long form), is kept.
fuzz: the target's row of tests/FlushBatching.Fuzz/fuzz-runs.md gets the run's date and length, executions, rate,
paths and edges; "found" is kept, and says how many crashes and hangs the run saved when it saved any.
"""
import datetime
import json
import os
import re
import sys

MUTATION_TABLE = "tools/mutation-scores.md"
FUZZ_TABLE = "tests/FlushBatching.Fuzz/fuzz-runs.md"
PROJECTS = {"src/FlushBatching.Akka/": "Akka", "src/FlushBatching.DotNetty/": "DotNetty", "src/FlushBatching/": None}


def cells(line):
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def row(values):
    return "| " + " | ".join(values) + " |"


def file_key(cell):
    """(path, project) of a mutation row's first cell: `PATH` (PROJECT, group)."""
    match = re.match(r"`([^`]+)`(?: \(([^)]*)\))?", cell)
    where = (match.group(2) or "").split(",")[0].strip()
    return match.group(1), where if where in ("Akka", "DotNetty") else None


def mutation(report_path, commit):
    report = json.load(open(report_path, encoding="utf-8"))
    lines = open(MUTATION_TABLE, encoding="utf-8").read().split("\n")
    rows = {file_key(cells(line)[0]): i for i, line in enumerate(lines) if line.startswith("| `")}
    last_row = max(rows.values())
    for path, file in sorted(report["files"].items()):
        relative = os.path.relpath(path).replace(os.sep, "/")
        prefix = next((p for p in PROJECTS if relative.startswith(p)), None)
        mutants = [m for m in file["mutants"] if m["status"] not in ("Ignored", "CompileError")]
        if prefix is None or not mutants:
            continue
        key = (relative[len(prefix):], PROJECTS[prefix])
        count = lambda *statuses: sum(m["status"] in statuses for m in mutants)
        detected = count("Killed", "Timeout")
        valid = detected + count("Survived", "NoCoverage")
        score = f"{100 * detected / valid:.1f}%".replace(".0%", "%") if valid else "-"
        timeouts = f"{count('Timeout')} of {detected}"
        if key in rows:
            values = cells(lines[rows[key]])
            values[2:5] = [score, commit, timeouts]
            lines[rows[key]] = row(values)
        else:
            name = f"`{key[0]}`" + (f" ({key[1]})" if key[1] else "")
            last_row += 1
            lines.insert(last_row, row([name, score, score, commit, timeouts, ""]))
            rows[key] = last_row
        print(f"{MUTATION_TABLE}: {key[0]} {score} at {commit}")
    open(MUTATION_TABLE, "w", encoding="utf-8").write("\n".join(lines))


def short(number):
    return f"{number / 1e6:.3g} M" if number >= 1e6 else f"{number / 1e3:.3g} k" if number >= 1e3 else str(number)


def fuzz(target, stats_path, minutes):
    stats = dict(re.split(r"\s*:\s*", line.strip(), maxsplit=1) for line in open(stats_path) if ":" in line)
    lines = open(FUZZ_TABLE, encoding="utf-8").read().split("\n")
    index = next(i for i, line in enumerate(lines) if line.startswith(f"| `{target}` |"))
    values = cells(lines[index])
    saved = int(stats.get("saved_crashes", 0)), int(stats.get("saved_hangs", 0))
    found = values[7]
    if any(saved):
        found = f"{found}; {datetime.date.today()}: {saved[0]} crash(es) and {saved[1]} hang(s) saved to its corpus"
    values[2:8] = [f"{datetime.date.today()}, {minutes} min", short(int(stats["execs_done"])),
                   f"{float(stats['execs_per_sec']):,.0f}", stats["corpus_count"], stats["edges_found"], found]
    lines[index] = row(values)
    open(FUZZ_TABLE, "w", encoding="utf-8").write("\n".join(lines))
    print(f"{FUZZ_TABLE}: {target} written")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "mutation":
        mutation(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 5 and sys.argv[1] == "fuzz":
        fuzz(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(__doc__)
