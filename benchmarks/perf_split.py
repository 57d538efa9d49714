#!/usr/bin/env python3
"""Where CPU samples fell, side by side: one column per perf report, rows by kind of work.

    python3 benchmarks/perf_split.py [--messages N] LABEL=REPORT.txt [LABEL=REPORT.txt ...]

Each REPORT is `perf report --sort comm,dso,sym -n -t ';' --stdio` of a recording (with DOTNET_PerfMapEnabled=1, so
JIT-compiled methods have names). Samples of the idle task, of perf itself and of the
kernel's memory monitor (kdamond) are left out, so a system-wide
recording (perf record -a) counts only work. The first report is the reference: every other column gets its
difference from it, and with two reports, each row's share of the whole difference. Recordings of the same work
compare sample for sample; the kinds are read from flat symbols, so they say where the CPU was, not who asked for it.

With --messages N, each REPORT.txt has a REPORT.stat beside it (`perf stat -x, -o`), and a second table gives its
context switches, CPU migrations and system calls per 1,000 of the N messages.
"""
import re
import sys

# Kernel symbols, first match wins: what a leaf function of the kernel was doing.
KERNEL = [
    ("kernel: scheduling, wake-ups, futex",
     r"schedule|switch|futex|wake|ttwu|enqueue|dequeue|pick_next|update_curr|update_load|select_task|psi_|"
     r"load_balance|finish_task|hrtimer|tick|idle|halt|rcu"),
    ("kernel: epoll", r"ep_|epoll"),
    ("kernel: copies to and from user memory", r"copy_user|copy_to|copy_from|_copy_|rep_movs|memcpy|memmove"),
    ("kernel: TCP/IP over loopback",
     r"tcp|ip_|ipv|skb|sock|net_|netif|napi|inet|loopback|__dev|dev_|nf_|sk_|softirq|validate_xmit|qdisc"),
    ("kernel: system call entry and exit", r"syscall|entry_|exit_to_user|__x64_sys|fdget|fput|_raw_spin"),
]


def where(comm, dso, kind, sym):
    if kind == "k":
        return next((name for name, pattern in KERNEL if re.search(pattern, sym)), "kernel: other")
    if "clrjit" in dso:
        return "JIT compiler"
    if "coreclr" in dso:
        return "runtime (GC, thread pool, stubs)"
    if re.search(r"libc|ld-linux|vdso", dso):
        return "libc (memset, memmove, clock, locks)"
    if re.search(r"\[(FlushBatching|System\.IO\.Pipelines|System\.Net\.Sockets|System\.Net\.Security|DotNetty[^\]]*)\]", sym):
        return "transport's managed code"
    if re.search(r"\[(Akka[^\]]*|Google\.Protobuf)\]", sym):
        return "Akka and protobuf managed code"
    if re.search(r"System\.Threading", sym):
        return "CoreLib threading (tasks, thread pool, locks)"
    return "other managed code (CoreLib, stubs)"


def samples(path):
    found = {}
    for line in open(path, errors="replace"):
        if line.startswith("#") or ";" not in line:
            continue
        fields = [f.strip() for f in line.split(";")]
        if len(fields) < 5 or not fields[1].isdigit():
            continue
        count, comm, dso, sym = int(fields[1]), fields[2], fields[3], ";".join(fields[4:])
        if comm in ("swapper", "perf", "perf-exec") or comm.startswith("kdamond"):
            continue
        m = re.match(r"\[(.)\]\s*(.*)", sym)
        kind, name = (m[1], m[2]) if m else (".", sym)
        key = where(comm, dso, kind, name)
        found[key] = found.get(key, 0) + count
    return found


def per_thousand(labels, paths, messages):
    events = ["context-switches", "cpu-migrations", "raw_syscalls:sys_enter"]
    counts = []
    for path in paths:
        found = {}
        for line in open(path.rsplit(".", 1)[0] + ".stat"):
            fields = line.split(",")
            if len(fields) > 2 and fields[0].isdigit():
                found[fields[2]] = int(fields[0])
        counts.append(found)
    print("\n| per 1,000 messages | " + " | ".join(labels) + " |")
    print("|---|" + "---:|" * len(labels))
    for event in events:
        print(f"| {event} | " + " | ".join(f"{c.get(event, 0) * 1000 / messages:.1f}" for c in counts) + " |")


def main(args):
    messages = None
    if args[:1] == ["--messages"] and len(args) > 1:
        messages, args = int(args[1]), args[2:]
    if not args or any("=" not in a for a in args):
        sys.exit(__doc__)
    labels = [a.split("=", 1)[0] for a in args]
    found = [samples(a.split("=", 1)[1]) for a in args]
    reference = found[0]
    keys = sorted(set().union(*found), key=lambda k: -sum(f.get(k, 0) for f in found))
    head = labels + [f"{label} − {labels[0]}" for label in labels[1:]]
    two = len(found) == 2
    gap = sum(found[1].values()) - sum(reference.values()) if two else 0
    print("| where | " + " | ".join(head) + (" | share of the difference |" if two else " |"))
    print("|---|" + "---:|" * (len(head) + (1 if two else 0)))

    def row(name, values):
        cells = [f"{v:,}" for v in values] + [f"{v - values[0]:+,}" for v in values[1:]]
        share = f" | {100 * (values[1] - values[0]) / gap:.0f}%" if two and gap else (" | -" if two else "")
        print(f"| {name} | " + " | ".join(cells) + share + " |")

    for key in keys:
        row(key, [f.get(key, 0) for f in found])
    row("all", [sum(f.values()) for f in found])
    if messages:
        per_thousand(labels, [a.split("=", 1)[1] for a in args], messages)


if __name__ == "__main__":
    main(sys.argv[1:])
