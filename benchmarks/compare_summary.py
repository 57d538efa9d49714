#!/usr/bin/env python3
"""The table of benchmarks/compare-builds.sh: compare_summary.py OUT, from OUT's before-N.json and after-N.json.

Per transport and client count, each build's median with its spread (the lowest and highest of its runs): a row is
slower only where the after median falls outside the before spread. Ratios to stock (and to the ceiling, when it ran)
are the median of each run's own ratio, taken within one build's run.
"""
import glob
import json
import os
import statistics as st
import sys

out = sys.argv[1]
rows = {}
for build in ("before", "after"):
    for path in sorted(glob.glob(os.path.join(out, f"{build}-*.json"))):
        for r in json.load(open(path))["Rows"]:
            rows.setdefault((build, r["Transport"], r["Clients"]), []).append(r)


def spread(build, t, c, key, fmt):
    values = [r[key] for r in rows.get((build, t, c), [])]
    return f"{st.median(values):{fmt}} ({min(values):{fmt}}–{max(values):{fmt}})" if values else "-"


def over(build, t, c, reference, key):
    mine, theirs = rows.get((build, t, c)), rows.get((build, reference, c))
    return f"{st.median(a[key] / b[key] for a, b in zip(mine, theirs)):.2f}" if mine and theirs else "-"


runs = len(glob.glob(os.path.join(out, "after-*.json")))
print(f"{runs} runs of each build, interleaved; each cell the median, with the lowest and highest run in brackets.\n")
print("| transport | clients | msgs/s before | msgs/s after | msgs/s × stock before | after | CPU µs/msg before | CPU µs/msg after | CPU × stock before | after |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for t, c in sorted({(k[1], k[2]) for k in rows}):
    print(f"| {t} | {c} | {spread('before', t, c, 'MsgsPerSec', ',.0f')} | {spread('after', t, c, 'MsgsPerSec', ',.0f')} | "
          f"{over('before', t, c, 'stock', 'MsgsPerSec')} | {over('after', t, c, 'stock', 'MsgsPerSec')} | "
          f"{spread('before', t, c, 'CpuUsPerMessage', '.2f')} | {spread('after', t, c, 'CpuUsPerMessage', '.2f')} | "
          f"{over('before', t, c, 'stock', 'CpuUsPerMessage')} | {over('after', t, c, 'stock', 'CpuUsPerMessage')} |")

# The DotNetty stack against the sockets stack, each run's own ratio: where the two stacks' difference is smaller than
# the spread between runs, only a ratio taken within one run shows it.
others = sorted({k[1] for k in rows if k[1].startswith("flushbatching-")})
if others and any(k[1] == "flushbatching" for k in rows):
    print("\nCPU µs per message as a ratio to the sockets stack's (flushbatching) in the same run, median of the runs; "
          "below 1, the transport used less.\n")
    print("| transport | clients | before | after |")
    print("|---|---:|---:|---:|")
    for t, c in sorted({(k[1], k[2]) for k in rows if k[1] in others}):
        print(f"| {t} | {c} | {over('before', t, c, 'flushbatching', 'CpuUsPerMessage')} | "
              f"{over('after', t, c, 'flushbatching', 'CpuUsPerMessage')} |")
