#!/usr/bin/env python3
"""Keeps the measured figures of docs/ and the README with the runs they come from, so that none outlives its run.

    python3 tools/doc_figures.py check     build.sh runs it: names each page, line and figure that its run does not hold
    python3 tools/doc_figures.py write     rewrites every generated table from the summary it names

A page cites a run by naming a path under benchmarks/results/ (a link or a path in backticks). A folder stands for its
summary.md when it has one, else for every text file in it; a path may hold a * wildcard. What a section cites holds for
it and for the sections under it, and what the page cites before its first heading holds for the whole page.

Generated tables: a table right under the line `<!-- table: HEADING -->` is the first table under that heading of
benchmarks/results/current/summary.md, as it is (`<!-- table from PATH: HEADING -->`: of the summary at PATH); `write`
copies it in, `check` fails when they differ.

Every other figure is looked for in what its section cites: ratios (1.38×), times (55 µs, 0.11 ms), percentages,
numbers grouped by thousands (353,670) and decimals, in prose and in tables, each end of a range (1.38–2.80×) on its
own. A figure is found when a number of the cited files rounds to it (2.1× is found as 2.10× or 2.08×; a ratio only
as a ratio). A number in
backticks is a setting or a command, not a figure, and is not looked for. A section that cites no run may not quote a
ratio or a time in microseconds: those are measured.
"""
import glob
import os
import re
import sys
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
root = ROOT
SUMMARY = "benchmarks/results/current/summary.md"
TEXT_FILES = (".md", ".txt", ".json", ".csv", ".log")

NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
RANGE = rf"(?<![\w.,])({NUMBER})(?:\s?[–-]\s?({NUMBER}))?"
# A measured figure: a ratio, a time, a share, a count grouped by thousands, or a decimal. Never part of a version
# (1.5.75) or a word (net8.0, p99).
FIGURE = re.compile(rf"{RANGE}(?:(×|%)|\s?(µs|ms)(?!\w)|(?![\w.,]*\d)(?!\w))")
MEASURED_WITHOUT_A_RUN = ("×", "µs")
CITED = re.compile(r"benchmarks/results/[\w./*#-]*")
TABLE_MARK = re.compile(r"^<!-- table(?: from (\S+))?: (.+?) -->$")


def pages():
    return ["README.md"] + sorted(glob.glob("docs/*.md", root_dir=root))


def read(path):
    with open(os.path.join(root, path), encoding="utf-8") as file:
        return file.read()


def prose(line):
    """The line without what is not prose: code spans, HTML comments, links' targets."""
    line = re.sub(r"<!--.*?-->", " ", line)
    line = re.sub(r"\b\d{4}-\d{2}(-\d{2})?\b|\b\d{2}:\d{2}\b", " ", line)
    line = re.sub(r"`[^`]*`", " ", line)
    return re.sub(r"\]\([^)]*\)", "] ", line)


def cited_files(citation):
    """The files a citation stands for: a file, a folder's summary.md, or every text file of a folder."""
    path = citation.split("#")[0].rstrip("/.")
    matches = sorted(glob.glob(path, root_dir=root)) or [path]
    files = []
    for match in matches:
        full = os.path.join(root, match)
        if os.path.isfile(full):
            files.append(match)
        elif os.path.isdir(full):
            if os.path.isfile(os.path.join(full, "summary.md")):
                files.append(os.path.join(match, "summary.md"))
            else:
                files += [os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(full) for f in sorted(fs)
                          if f.endswith(TEXT_FILES)]
        else:
            raise FileNotFoundError(match)
    return files


class Sources:
    """The numbers of the files cited, each as every figure it may be written as: all of them, and the ratios alone."""

    def __init__(self):
        self.cache = {}

    def numbers(self, files):
        found, ratios = set(), set()
        for file in files:
            if file not in self.cache:
                text = read(file)
                self.cache[file] = ({form for n in re.findall(NUMBER, text) for form in written_as(n)},
                                    {form for n in re.findall(rf"({NUMBER})×", text) for form in written_as(n)})
            found |= self.cache[file][0]
            ratios |= self.cache[file][1]
        return found, ratios


def value(number):
    return Decimal(number.replace(",", ""))


def written_as(number):
    """Every way a figure may write this number: as it is, and rounded to fewer decimals."""
    exact = value(number)
    places = -exact.as_tuple().exponent
    forms = {exact.normalize()}
    for fewer in range(places):
        step = Decimal(1).scaleb(-fewer)
        forms |= {exact.quantize(step, rounding).normalize() for rounding in (ROUND_HALF_UP, ROUND_HALF_EVEN)}
    return forms


def sections(lines):
    """Each line's sources: the citations of its section and of the sections it is under."""
    own, stack, keys = {}, [(0, "intro")], []
    in_code = False
    for number, line in enumerate(lines):
        if line.startswith("```"):
            in_code = not in_code
        heading = re.match(r"(#+) ", line) if not in_code else None
        if heading:
            level = len(heading.group(1))
            while stack[-1][0] >= level:
                stack.pop()
            stack.append((level, number))
        keys.append(tuple(key for _, key in stack))
        own.setdefault(stack[-1][1], set()).update(CITED.findall(line))
    return [set().union(*(own.get(key, set()) for key in chain)) for chain in keys]


def summary_tables(summary):
    """The first table under each heading of a summary."""
    tables, heading = {}, None
    for line in read(summary).split("\n"):
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        elif line.startswith("|") and heading is not None:
            tables.setdefault(heading, []).append(line)
        elif heading in tables:
            heading = None
    return tables


def generated(lines, page, errors):
    """The page with each marked table replaced by its summary's; a marked table with no summary table is an error."""
    out, i, tables = [], 0, {}
    while i < len(lines):
        out.append(lines[i])
        mark = TABLE_MARK.match(lines[i])
        i += 1
        if not mark:
            continue
        summary, heading = mark.group(1) or SUMMARY, mark.group(2)
        if summary not in tables:
            try:
                tables[summary] = summary_tables(summary)
            except FileNotFoundError:
                errors.append(f"{page}:{i}: {summary} does not exist")
                continue
        if heading not in tables[summary]:
            errors.append(f"{page}:{i}: no table under '{heading}' in {summary}")
            continue
        while i < len(lines) and lines[i].startswith("|"):
            i += 1
        out += tables[summary][heading]
    return out


def check_figures(page, lines, sources, errors):
    cited = sections(lines)
    in_code, in_generated = False, False
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            in_code = not in_code
        if TABLE_MARK.match(line):
            in_generated = True
            continue
        if in_generated and line.startswith("|"):
            continue
        in_generated = False
        if in_code or line.startswith("#"):
            continue
        try:
            files = sorted({f for c in cited[number - 1] for f in cited_files(c)})
        except FileNotFoundError as missing:
            errors.append(f"{page}:{number}: cites {missing}, which does not exist")
            continue
        numbers, ratios = sources.numbers(files)
        for match in FIGURE.finditer(prose(line)):
            low, high, ratio_or_share, time = match.groups()
            unit = ratio_or_share or time
            figure = match.group(0)
            if not files:
                if unit in MEASURED_WITHOUT_A_RUN:
                    errors.append(f"{page}:{number}: {figure}: a measured figure, and its section cites no run under benchmarks/results/")
                continue
            # A whole number alone with no unit or in milliseconds (1 client, 5 s, every 100 ms) is a count or a
            # setting as often as a figure; in a range (7–19 ms) it is measured.
            if unit in (None, "ms") and "." not in low and "," not in low and high is None:
                continue
            for end in (low, high):
                if end is not None and value(end).normalize() not in (ratios if unit == "×" else numbers):
                    errors.append(f"{page}:{number}: {figure}: {end} is not in {', '.join(files)}")


def main(command, tree=ROOT):
    """Checks or writes the pages of the repository at tree; 1 when a page is wrong, and each error on stderr."""
    global root
    root = tree
    sources, errors = Sources(), []
    for page in pages():
        text = read(page)
        lines = text.split("\n")
        fresh = generated(lines, page, errors)
        if command == "write" and fresh != lines:
            with open(os.path.join(root, page), "w", encoding="utf-8") as file:
                file.write("\n".join(fresh))
            print(f"{page}: tables written")
        elif command == "check" and fresh != lines:
            first = next((i for i, (a, b) in enumerate(zip(lines, fresh)) if a != b), min(len(lines), len(fresh)))
            errors.append(f"{page}:{first + 1}: a generated table differs from its summary: run python3 tools/doc_figures.py write")
        check_figures(page, fresh, sources, errors)
    for error in errors:
        print(f"error: {error}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in ("check", "write"):
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
