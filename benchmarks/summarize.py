#!/usr/bin/env python3
"""Tables of medians from benchmarks/measure.sh's output folder, in Markdown: summarize.py OUT."""
import csv
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


# flushbatching-dotnetty is the DotNetty stack on its default thread-pool event loops; -dedicated on DotNetty's own.
TRANSPORTS = ("flushbatching", "flushbatching-dotnetty", "flushbatching-dotnetty-dedicated", "stock", "ceiling")


def rows_of(data):
    """The closed-loop rows of RemotePingPong runs by (transport, clients)."""
    return grouped((r for d in data for r in d["Rows"]), lambda r: (r["Transport"], r["Clients"]))


def ratio(mine, theirs, key):
    """The median of each run's own ratio of key, mine over theirs; "-" when there is nothing to compare with."""
    return f'{st.median(a[key] / b[key] for a, b in zip(mine, theirs)):.2f}×' if theirs else "-"


def remote(folders, title, note=""):
    """One table for every payload: the rows of each folder (one payload each) after the other's."""
    data = {folder: runs(folder) for folder in folders}
    print(f"### {title}\n")
    print(f"{len(data[folders[0]])} runs, medians; ratios are the median of each run's own ratio. {note}\n")
    print("| clients | payload | transport | msgs/s | × stock | × ceiling | CPU µs/msg | CPU × stock | CPU × ceiling | queue delay p50 / p99 µs |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for folder in folders:
        payload = folder.rsplit("-", 1)[1]
        rows = rows_of(data[folder])
        for clients in sorted({c for _, c in rows}):
            stock, ceiling = rows.get(("stock", clients), []), rows.get(("ceiling", clients), [])
            for t in (t for t in TRANSPORTS if (t, clients) in rows):
                mine = rows[(t, clients)]
                print(f'| {clients} | {payload} B | {t} | {st.median(r["MsgsPerSec"] for r in mine):,.0f} | {ratio(mine, stock, "MsgsPerSec")} | '
                      f'{ratio(mine, ceiling, "MsgsPerSec")} | {st.median(r["CpuUsPerMessage"] for r in mine):.2f} | '
                      f'{ratio(mine, stock, "CpuUsPerMessage")} | {ratio(mine, ceiling, "CpuUsPerMessage")} | {queue_delay(mine)} |')
    print()


def remote_by_payload(folders, title, note=""):
    """The same rows with every payload side by side: msgs/s and CPU per message, each beside stock's (docs/performance.md)."""
    first_runs = runs(folders[0])
    data = {folder: rows_of(first_runs if folder == folders[0] else runs(folder)) for folder in folders}
    payloads = [folder.rsplit("-", 1)[1] for folder in folders]
    print(f"### {title}\n")
    print(f"{len(first_runs)} runs, medians; ratios are the median of each run's own ratio. {note}\n")
    print("| clients | transport | " + " | ".join(f"{p} B: msgs/s | × stock | CPU µs/msg | CPU × stock" for p in payloads) + " |")
    print("|---:|---|" + "---:|---:|---:|---:|" * len(payloads))
    first = data[folders[0]]
    for clients in sorted({c for _, c in first}):
        for t in (t for t in TRANSPORTS if (t, clients) in first):
            cells = []
            for folder in folders:
                mine, stock = data[folder][(t, clients)], data[folder].get(("stock", clients), [])
                cells.append(f'{st.median(r["MsgsPerSec"] for r in mine):,.0f} | {ratio(mine, stock, "MsgsPerSec")} | '
                             f'{st.median(r["CpuUsPerMessage"] for r in mine):.2f} | {ratio(mine, stock, "CpuUsPerMessage")}')
            print(f"| {clients} | {t} | " + " | ".join(cells) + " |")
    print()


def hand_offs():
    """The ceiling with thread hand-offs beside the sockets stack: each as × ceiling, and the CPU per message."""
    print("### The ceiling's thread hand-offs, one process\n")
    print("| clients | payload | ceiling-handoff | ceiling-handoff2 | flushbatching | CPU µs/msg: ceiling, ceiling-handoff2, flushbatching |")
    print("|---:|---:|---:|---:|---:|---|")
    for payload in (100, 3):
        rows = rows_of(runs(f"handoff-{payload}"))
        for clients in sorted({c for _, c in rows}):
            ceiling = rows[("ceiling", clients)]

            def of(t):
                return st.median(a["MsgsPerSec"] / b["MsgsPerSec"] for a, b in zip(rows[(t, clients)], ceiling))

            cpu = ", ".join(f'{st.median(r["CpuUsPerMessage"] for r in rows[(t, clients)]):.2f}'
                            for t in ("ceiling", "ceiling-handoff2", "flushbatching"))
            print(f"| {clients} | {payload} B | {of('ceiling-handoff'):.2f}× | {of('ceiling-handoff2'):.2f}× | "
                  f"{of('flushbatching'):.2f}× | {cpu} |")
    print()


def queue_delay(rows):
    """Medians of each run's flushbatching.queue_delay p50 and p99, for this project's transports (the clients' side)."""
    p50 = [r["QueueDelayP50Us"] for r in rows if r.get("QueueDelayP50Us") is not None]
    p99 = [r["QueueDelayP99Us"] for r in rows if r.get("QueueDelayP99Us") is not None]
    return f"{st.median(p50):,.0f} / {st.median(p99):,.0f}" if p50 else "-"


def open_loop(payloads=(100, 3), bound_ms=5):
    """One table of latencies for every payload, then, per payload, the best rate under the bound and the queue delay."""
    data = {payload: runs(f"open-loop-{payload}") for payload in payloads}
    if not data[payloads[0]]:
        return
    print("### Latency against offered load, two processes\n")
    print(f"{len(data[payloads[0]])} runs, medians; latency from each message's due time (open loop, coordinated omission "
          "corrected), in ms.\n")
    rows = {payload: grouped((r for d in data[payload] for r in d["OpenLoop"]), lambda r: (r["Transport"], r["OfferedPerSec"]))
            for payload in payloads}
    transports = [t for t in TRANSPORTS if any(k[0] == t for k in rows[payloads[0]])]
    print("| offered round trips/s | " + " | ".join(f"{p} B: {t} p50 / p99" for p in payloads for t in transports) + " |")
    print("|---:|" + "---:|" * (len(transports) * len(payloads)))
    for rate in sorted({r for _, r in rows[payloads[0]]}):
        cells = []
        for payload in payloads:
            for t in transports:
                rs = rows[payload].get((t, rate), [])
                back = "" if all(r["Sustained"] for r in rs) else " (not all back)"
                cells.append(f'{st.median(r["P50Us"] for r in rs) / 1000:.1f} / {st.median(r["P99Us"] for r in rs) / 1000:.1f}{back}'
                             if rs else "-")
        print(f"| {rate:,} | " + " | ".join(cells) + " |")
    print()
    print("p99.9, ms:\n")
    print("| offered round trips/s | " + " | ".join(f"{p} B: {t}" for p in payloads for t in transports) + " |")
    print("|---:|" + "---:|" * (len(transports) * len(payloads)))
    for rate in sorted({r for _, r in rows[payloads[0]]}):
        cells = [f'{st.median(r["P999Us"] for r in rows[payload][(t, rate)]) / 1000:.1f}' if (t, rate) in rows[payload] else "-"
                 for payload in payloads for t in transports]
        print(f"| {rate:,} | " + " | ".join(cells) + " |")
    print()
    def sustained_before_first_miss(payload, t):
        # Rates in order: the last that held before the first that did not (a rate that held again above a miss is
        # luck of the run, not capacity).
        best = 0
        for rate in sorted(rate for (tt, rate) in rows[payload] if tt == t):
            rs = rows[payload][(t, rate)]
            if not (all(r["Sustained"] for r in rs) and st.median(r["P99Us"] for r in rs) < bound_ms * 1000):
                break
            best = rate
        return best

    for payload in payloads:
        best = {t: sustained_before_first_miss(payload, t) for t in transports}
        print(f"Highest offered rate sustained with a median p99 under {bound_ms} ms, every lower rate too, {payload} B: " +
              ", ".join(f"{t} {rate:,}" + (f" ({rate / best['stock']:.2f}× stock)" if best.get('stock') and t != 'stock' else "")
                        for t, rate in best.items()) + "\n")
    ours = [t for t in transports if any(r.get("QueueDelayP50Us") is not None for (tt, _), rs in rows[payloads[0]].items() if tt == t for r in rs)]
    if ours:
        print("Queue delay, from a frame's write to the send that carried it (`flushbatching.queue_delay`, the clients' "
              "sends), p50 / p99 µs:\n")
        print("| offered round trips/s | payload | " + " | ".join(ours) + " |")
        print("|---:|---:|" + "---:|" * len(ours))
        for payload in payloads:
            for rate in sorted({r for _, r in rows[payload]}):
                print(f"| {rate:,} | {payload} B | " + " | ".join(queue_delay(rows[payload].get((t, rate), [])) for t in ours) + " |")
        print()


def cores():
    one, two = runs("cores-1"), runs("cores-2")
    if not one or not two:
        return
    print("### One core and two: both processes pinned with taskset, 100-byte payload\n")
    print(f"{len(one)} runs each, medians. × 1 core = msgs/s on two cores over msgs/s on one.\n")
    print("| clients | transport | 1 core msgs/s | 1 core CPU µs/msg | 2 cores msgs/s | 2 cores CPU µs/msg | × 1 core |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    a, b = rows_of(one), rows_of(two)
    for clients in sorted({c for _, c in a}):
        for t in (t for t in TRANSPORTS if (t, clients) in a and (t, clients) in b):
            r1, r2 = a[(t, clients)], b[(t, clients)]
            m1, m2 = st.median(r["MsgsPerSec"] for r in r1), st.median(r["MsgsPerSec"] for r in r2)
            print(f'| {clients} | {t} | {m1:,.0f} | {st.median(r["CpuUsPerMessage"] for r in r1):.2f} | {m2:,.0f} | '
                  f'{st.median(r["CpuUsPerMessage"] for r in r2):.2f} | {m2 / m1:.2f}× |')
    print()


def many_peers():
    data = runs("many-peers")
    if not data:
        return
    print("### Many peers: one hub node, peer ActorSystems in processes of 50, each pinged by the hub once a second\n")
    print(f"{len(data)} runs, medians; the hub process only. Per association: what the hub holds with every peer up, less "
          "what it held before they came (both after a full collection), over the number of peers.\n")
    print("| peers | transport | working set MB | per association: working set KB | live heap KB | threads + | descriptors + | CPU % of a core | round trip p50 / p99 ms |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    rows = grouped((r for d in data for r in d["ManyPeers"]), lambda r: (r["Transport"], r["Peers"]))
    for peers in sorted({p for _, p in rows}):
        for t in (t for t in TRANSPORTS if (t, peers) in rows):
            rs = rows[(t, peers)]
            per = lambda now, before: st.median((r[now] - r[before]) * 1024 / peers for r in rs)
            print(f'| {peers} | {t} | {st.median(r["WorkingSetMb"] for r in rs):.0f} | {per("WorkingSetMb", "BaselineWorkingSetMb"):,.0f} | '
                  f'{per("LiveHeapMb", "BaselineLiveHeapMb"):,.0f} | {round(st.median(r["Threads"] - r["BaselineThreads"] for r in rs))} | '
                  f'{st.median(r["OpenFiles"] - r["BaselineOpenFiles"] for r in rs):.0f} | {st.median(r["CpuPercentOfCore"] for r in rs):.1f} | '
                  f'{st.median(r["RttP50Us"] for r in rs) / 1000:.1f} / {st.median(r["RttP99Us"] for r in rs) / 1000:.1f} |')
    print()


def large():
    folders = sorted((f for f in glob.glob(os.path.join(out, "large-*")) if os.path.isdir(f) and f.rsplit("-", 1)[1].isdigit()),
                     key=lambda f: int(f.rsplit("-", 1)[1]))
    if not folders:
        return
    first = runs(os.path.basename(folders[0]))
    print("### Large messages, two processes, maximum-frame-size = 2MB on every transport\n")
    print(f'{len(first)} runs, medians; {first[0].get("InFlight")} in flight per client. MB/s counts payload bytes both ways '
          f'(1 MB = 10^6 bytes); CPU is both processes\' per MB of payload, allocated both processes\' per message.\n')
    print("| payload | clients | transport | msgs/s | MB/s | × stock | CPU ms per MB | CPU × stock | allocated MB per message |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    for folder in folders:
        data = runs(os.path.basename(folder))
        payload = data[0]["Payload"]
        rows = rows_of(data)
        for clients in sorted({c for _, c in rows}):
            stock = rows.get(("stock", clients), [])
            for t in (t for t in TRANSPORTS if (t, clients) in rows):
                mine = rows[(t, clients)]
                rate = st.median(r["MsgsPerSec"] for r in mine)
                print(f'| {payload // 1024:,} KiB | {clients} | {t} | {rate:,.0f} | {rate * payload / 1e6:,.0f} | {ratio(mine, stock, "MsgsPerSec")} | '
                      f'{st.median(r["CpuUsPerMessage"] for r in mine) / payload * 1e3:.1f} | {ratio(mine, stock, "CpuUsPerMessage")} | '
                      f'{st.median(r["AllocatedBytesPerMessage"] for r in mine) / 1e6:.2f} |')
    print()


def large_marks():
    """benchmarks/large-marks.sh: 1 MB with 5 clients at each high-water mark, stock beside each (docs/tuning.md)."""
    # The unset mark first, as users leave it; the fixed marks after it, by name.
    folders = sorted((f for f in glob.glob(os.path.join(out, "large-marks-*")) if os.path.isdir(f)),
                     key=lambda f: (not f.endswith("-default"), f))
    if not folders:
        return
    print("### Large messages and the high-water mark: 1 MB, 5 clients, 10 in flight each, two processes\n")
    print(f'{len(runs(os.path.basename(folders[0])))} runs, medians; ratios are the median of each run\'s own ratio. '
          'Allocated: both processes, per message.\n')
    print("| write-buffer-high-water-mark | transport | msgs/s | × stock | CPU ms per message | CPU × stock | allocated MB per message |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for folder in folders:
        mark = folder.rsplit("large-marks-", 1)[1]
        mark = "unset (following the rate)" if mark == "default" else mark
        rows = rows_of(runs(os.path.basename(folder)))
        stock = rows.get(("stock", 5), [])
        for t in (t for t in TRANSPORTS if (t, 5) in rows):
            mine = rows[(t, 5)]
            print(f'| {mark} | {t} | {st.median(r["MsgsPerSec"] for r in mine):,.0f} | {ratio(mine, stock, "MsgsPerSec")} | '
                  f'{st.median(r["CpuUsPerMessage"] for r in mine) / 1000:.1f} | {ratio(mine, stock, "CpuUsPerMessage")} | '
                  f'{st.median(r["AllocatedBytesPerMessage"] for r in mine) / 1e6:.1f} |')
    print()


def latency():
    data = runs("latency")
    print("### Light load: one message in flight, 3-byte payload\n")
    print(f"{len(data)} runs of 20,000 round trips each, medians.\n")
    print("| transport | p50 µs | p90 µs | p99 µs | p50 × stock-nobatching | p50 × ceiling | CPU µs per round trip |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    by = grouped((r for d in data for r in d["Latency"]), lambda r: r["Transport"])
    base, ceiling = by["stock-nobatching"], by["ceiling"]
    for t, rs in by.items():
        print(f'| {t} | {st.median(r["P50Us"] for r in rs):.0f} | {st.median(r["P90Us"] for r in rs):.0f} | {st.median(r["P99Us"] for r in rs):.0f} | '
              f'{st.median(a["P50Us"] / b["P50Us"] for a, b in zip(rs, base)):.2f}× | '
              f'{st.median(a["P50Us"] / b["P50Us"] for a, b in zip(rs, ceiling)):.2f}× | {st.median(r["CpuUsPerRoundTrip"] for r in rs):.0f} |')
    print()


def starved_pool():
    """benchmarks/starved-pool.sh: the round trip at one message in flight, with the server's pool as it is and starved."""
    print("### A starved thread pool: one message in flight, two processes\n")
    print(f"{len(runs('starved-off'))} runs each, medians; × stock is the median of each run's own ratio.\n")
    print("| server's thread pool | transport | round trip p50 µs | p99 µs | p50 × stock |")
    print("|---|---|---:|---:|---:|")
    for mode, name in (("off", "as it is"), ("on", "starved")):
        by = grouped((r for d in runs(f"starved-{mode}") for r in d["Latency"]), lambda r: r["Transport"])
        stock = by["stock"]
        for t, rs in by.items():
            print(f'| {name} | {t} | {st.median(r["P50Us"] for r in rs):,.0f} | {st.median(r["P99Us"] for r in rs):,.0f} | '
                  f'{st.median(a["P50Us"] / b["P50Us"] for a, b in zip(rs, stock)):.2f}× |')
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


UNITS = {"ns": 1e-3, "μs": 1.0, "us": 1.0, "ms": 1e3, "s": 1e6}


def bdn(report, title, note=""):
    """A BenchmarkDotNet CSV report as params, mean, error and bytes, each mean also over stock's with the same params."""
    rows = list(csv.DictReader(open(report)))
    if not rows:
        return
    for r in (r for r in rows if "Transport" in r):  # BenchmarkDotNet shortens long parameter values in its reports
        r["Transport"] = r["Transport"].replace("flush(...)netty [22]", "flushbatching-dotnetty")
    names = list(rows[0])
    params = names[names.index("WarmupCount") + 1:names.index("Mean")]
    micros = lambda text: float(text.split()[0].replace(",", "")) * UNITS[text.split()[1]]
    key = lambda row: tuple(row[p] for p in params if p != "Transport")
    stock = {key(r): micros(r["Mean"]) for r in rows if r.get("Transport") == "stock"}
    print(f"### {title} (BenchmarkDotNet {rows[0]['Job']})\n")
    if note:
        print(f"{note}\n")
    print("| " + " | ".join(params) + " | mean µs | error µs | × stock | allocated |")
    print("|" + "---|" * len(params) + "---:|---:|---:|---:|")
    for r in rows:
        over_stock = f"{micros(r['Mean']) / stock[key(r)]:.2f}×" if key(r) in stock else "-"
        print("| " + " | ".join(r[p] for p in params) + f" | {micros(r['Mean']):,.1f} | {micros(r['Error']):,.1f} | {over_stock} | "
              f"{r['Allocated']} |")
    print()


# remote-100 names the machine; a step run alone (large-marks.sh, open-loop.sh) has none, and its own output does.
machine = next((json.load(open(f)).get("Machine", "") for f in
                sorted(glob.glob(os.path.join(out, "*", "run-*.json")), key=lambda f: "remote-100" not in f)), "")
print(f"Machine: {machine}\n")


def ran(folder):
    """Whether the step that writes folder ran: measure.sh runs every step, a step's own script only its own."""
    return bool(glob.glob(os.path.join(out, folder, "run-*.json")))


two = "The ceiling's rows run both systems in the client process: Akka.Remote with no I/O has no second process."
if ran("remote-100"):
    remote_by_payload(["remote-100", "remote-3"], "RemotePingPong, two processes, by payload, 20,000 messages per client", two)
    remote(["remote-100", "remote-3"], "RemotePingPong, two processes, 20,000 messages per client", two)
if ran("inproc-100"):
    remote(["inproc-100", "inproc-3"], "RemotePingPong, one process, 20,000 messages per client", "Both systems in one process, every transport alike.")
if ran("handoff-100"):
    hand_offs()
if ran("latency"):
    latency()
if ran("transport"):
    transport()
if ran("starved-off"):
    starved_pool()
if ran("open-loop-100"):
    open_loop()
if ran("cores-1"):
    cores()
large()
large_marks()
if ran("many-peers"):
    many_peers()
for report in sorted(glob.glob(os.path.join(out, "bdn-akka", "results", "*-report.csv")) +
                     glob.glob(os.path.join(out, "bdn-sharded", "results", "*-report.csv"))):
    bdn(report, os.path.basename(report).replace("-report.csv", "").rsplit(".", 1)[1] + ", per message",
        "Mean and error per operation as BenchmarkDotNet reports them (OperationsPerInvoke: per message or per request); "
        "× stock: the mean over stock's with the same other parameters.")
for name in ("bdn-core", "bdn-akka", "bdn-sharded"):
    for report in sorted(glob.glob(os.path.join(out, name, "results", "*-report-github.md"))):
        print(f"### {os.path.basename(report).replace('-report-github.md', '')}\n")
        print(open(report).read())
