#!/usr/bin/env python3
"""Tables of medians from benchmarks/measure.sh's output folder, in Markdown: summarize.py OUT."""
import glob
import json
import os
import statistics as st
import sys

out = sys.argv[1]


def runs(folder):
    return [json.load(open(f)) for f in sorted(glob.glob(os.path.join(out, folder, "run-*.json")))]


def grouped(rows, key):
    """The rows of every run by key(row), each list in run order, so lists of two keys pair up run by run."""
    groups = {}
    for r in rows:
        groups.setdefault(key(r), []).append(r)
    return groups


def remote(folder, title):
    data = runs(folder)
    print(f"### {title}\n")
    print(f"{len(data)} runs, medians; ratios are the median of each run's own ratio to stock.\n")
    print("| clients | flushbatching msgs/s | × stock | CPU µs/msg | × stock | flushbatching-dotnetty msgs/s | × stock | CPU µs/msg | × stock | stock msgs/s | CPU µs/msg |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows = grouped((r for d in data for r in d["Rows"]), lambda r: (r["Transport"], r["Clients"]))
    for clients in sorted({c for _, c in rows}):
        stock = rows[("stock", clients)]
        cells = [str(clients)]
        for t in ("flushbatching", "flushbatching-dotnetty"):
            mine = rows[(t, clients)]
            cells += [f'{st.median(r["MsgsPerSec"] for r in mine):,.0f}',
                      f'{st.median(a["MsgsPerSec"] / s["MsgsPerSec"] for a, s in zip(mine, stock)):.2f}×',
                      f'{st.median(r["CpuUsPerMessage"] for r in mine):.2f}',
                      f'{st.median(a["CpuUsPerMessage"] / s["CpuUsPerMessage"] for a, s in zip(mine, stock)):.2f}×']
        cells += [f'{st.median(r["MsgsPerSec"] for r in stock):,.0f}', f'{st.median(r["CpuUsPerMessage"] for r in stock):.2f}']
        print("| " + " | ".join(cells) + " |")
    print()


def latency():
    data = runs("latency")
    print("### Light load: one message in flight, 3-byte payload\n")
    print(f"{len(data)} runs of 20,000 round trips each, medians.\n")
    print("| transport | p50 µs | p90 µs | p99 µs | p50 × stock-nobatching | CPU µs per round trip |")
    print("|---|---:|---:|---:|---:|---:|")
    by = grouped((r for d in data for r in d["Latency"]), lambda r: r["Transport"])
    base = by["stock-nobatching"]
    for t, rs in by.items():
        print(f'| {t} | {st.median(r["P50Us"] for r in rs):.0f} | {st.median(r["P90Us"] for r in rs):.0f} | {st.median(r["P99Us"] for r in rs):.0f} | '
              f'{st.median(a["P50Us"] / b["P50Us"] for a, b in zip(rs, base)):.2f}× | {st.median(r["CpuUsPerRoundTrip"] for r in rs):.0f} |')
    print()


def transport():
    data = runs("transport")
    print("### TransportPingPong: the core alone, 100-byte payload, 50 in flight per pair\n")
    print(f"{len(data)} runs, medians.\n")
    print("| pairs | batching off msgs/s | on msgs/s | on ÷ off | frames per send, on |")
    print("|---:|---:|---:|---:|---:|")
    rows = grouped((r for d in data for r in d), lambda r: (r["Batching"], r["Pairs"]))
    for pairs in sorted({p for _, p in rows}):
        off, on = rows[("off", pairs)], rows[("on", pairs)]
        print(f'| {pairs} | {st.median(r["MsgsPerSec"] for r in off):,.0f} | {st.median(r["MsgsPerSec"] for r in on):,.0f} | '
              f'{st.median(a["MsgsPerSec"] / b["MsgsPerSec"] for a, b in zip(on, off)):.2f}× | {st.median(r["FramesPerSend"] for r in on):.1f} |')
    print()


machine = runs("remote-100")[0].get("Machine", "")
print(f"Machine: {machine}\n")
remote("remote-100", "RemotePingPong, two processes, 100-byte payload, 20,000 messages per client")
remote("remote-3", "RemotePingPong, two processes, 3-byte payload, 20,000 messages per client")
latency()
transport()
for name in ("bdn-core", "bdn-akka"):
    for report in sorted(glob.glob(os.path.join(out, name, "results", "*-report-github.md"))):
        print(f"### {os.path.basename(report).replace('-report-github.md', '')}\n")
        print(open(report).read())
