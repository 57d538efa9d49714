#!/usr/bin/env python3
"""Reads a test run's TRX file (the results `dotnet test --logger trx` writes) for build.sh.

  trx.py counts FILE    prints "passed failed skipped incomplete", where incomplete is 1 for a run that did not
                        complete (a hung test host killed by --blame-hang-timeout, a crash), and failed counts it too
  trx.py failed FILE    prints the fully qualified name of each failed test, one per line
  trx.py report FILE    prints each failed test with its message, and why the run did not complete, for the log's end;
                        for a run that did not complete, the tests it started and never finished, from the blame
                        collector's sequence file in the results directory named as FILE without .trx (build.sh
                        passes it as --results-directory)
"""
import glob
import os
import sys
import xml.etree.ElementTree as ET

NS = {"t": "http://microsoft.com/schemas/VisualStudio/TeamTest/2010"}


def unfinished(path):
    """The tests a killed or crashed test host started and never finished, as the blame collector recorded them."""
    names = []
    for sequence in sorted(glob.glob(os.path.join(path[:-len(".trx")], "*", "Sequence_*.xml"))):
        names += [test.get("Name") for test in ET.parse(sequence).getroot().iter("Test") if test.get("Completed") != "True"]
    return sorted(set(names))


def main(command, path):
    root = ET.parse(path).getroot()
    summary = root.find("t:ResultSummary", NS)
    counters = summary.find("t:Counters", NS).attrib
    # A run the test host did not finish (killed as hung, crashed) says so in its outcome or in a RunInfo.
    aborted = [info for info in summary.iterfind("t:RunInfos/t:RunInfo", NS)
               if "test run was aborted" in info.findtext("t:Text", default="", namespaces=NS)]
    incomplete = bool(aborted) or summary.get("outcome") not in ("Completed", "Failed", "Passed")
    names = {d.get("id"): d.find("t:TestMethod", NS) for d in root.iterfind("t:TestDefinitions/t:UnitTest", NS)}
    results = list(root.iterfind("t:Results/t:UnitTestResult", NS))
    failed = [r for r in results if r.get("outcome") == "Failed"]
    skipped = sum(1 for r in results if r.get("outcome") == "NotExecuted")

    def qualified(result):
        method = names[result.get("testId")]
        return f'{method.get("className")}.{method.get("name")}'

    if command == "counts":
        print(counters["passed"], int(counters["failed"]) + int(counters.get("error", 0)) + (1 if incomplete else 0), skipped,
              1 if incomplete else 0)
    elif command == "failed":
        print("\n".join(sorted({qualified(r) for r in failed})))
    elif command == "report":
        for result in failed:
            message = result.findtext("t:Output/t:ErrorInfo/t:Message", default="", namespaces=NS).strip()
            print(f'  Failed {result.get("testName")}\n    {message}')
        if incomplete:
            for info in summary.iterfind("t:RunInfos/t:RunInfo", NS):
                if not any(word in info.findtext("t:Text", default="", namespaces=NS) for word in ("aborted", "Blame", "hang")):
                    continue
                text = info.findtext("t:Text", default="", namespaces=NS).strip().splitlines()
                print(f'  Run {summary.get("outcome")}: ' + "\n    ".join(text[:3]))
            for name in unfinished(path):
                print(f'  Never finished: {name}')
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
