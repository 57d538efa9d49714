# Each row of a compare-builds.sh OUT folder: its median with the min-max over the runs, per build, and CPU per
# message as a ratio to stock's in the same run.   python3 spread.py OUT > OUT/spread.md
import glob, json, statistics as st, sys
out = sys.argv[1]
rows = {}
for build in ("before", "after"):
    for f in sorted(glob.glob(f"{out}/{build}-*.json")):
        for r in json.load(open(f))["Rows"]:
            rows.setdefault((r["Transport"], r["Clients"], build), []).append(r)
keys = sorted({(k[0], k[1]) for k in rows})
print(f"runs per build: {len(rows[(keys[0][0], keys[0][1], 'before')])}")
print("| transport | clients | msgs/s before: median (min–max) | after | CPU µs/msg before: median (min–max) | after |")
print("|---|---|---|---|---|---|")
def cell(v, fmt):
    return f"{fmt(st.median(v))} ({fmt(min(v))}–{fmt(max(v))})"
for t, c in keys:
    b, a = rows[(t, c, "before")], rows[(t, c, "after")]
    m = lambda rs: [r["MsgsPerSec"] for r in rs]
    cpu = lambda rs: [r["CpuUsPerMessage"] for r in rs]
    k = lambda x: f"{x:,.0f}"
    u = lambda x: f"{x:.2f}"
    print(f"| {t} | {c} | {cell(m(b), k)} | {cell(m(a), k)} | {cell(cpu(b), u)} | {cell(cpu(a), u)} |")
print()
print("CPU per message as a ratio to stock's in the same run (median of the runs' ratios, min–max): lower is better")
print("| transport | clients | before | after |")
print("|---|---|---|---|")
for t, c in keys:
    if t == "stock":
        continue
    def ratios(build):
        return [x["CpuUsPerMessage"] / s["CpuUsPerMessage"] for x, s in zip(rows[(t, c, build)], rows[("stock", c, build)])]
    b, a = ratios("before"), ratios("after")
    print(f"| {t} | {c} | {st.median(b):.2f} ({min(b):.2f}–{max(b):.2f}) | {st.median(a):.2f} ({min(a):.2f}–{max(a):.2f}) |")
