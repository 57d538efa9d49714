#!/usr/bin/env python3
"""tools/doc_figures.py against small trees of its own: python3 -m unittest tools/test_doc_figures.py (build.sh runs it)."""
import contextlib
import io
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import doc_figures  # noqa: E402

SUMMARY = """### Light load

| transport | p50 µs | × stock |
|---|---:|---:|
| flushbatching | 55 | 0.47× |
| stock | 116 | 1.00× |

### Throughput

| clients | msgs/s | × stock |
|---:|---:|---:|
| 1 | 353,670 | 2.10× |
| 30 | 483,224 | 1.38× |
"""


class DocFiguresTests(unittest.TestCase):
    def run_tool(self, page, command="check", summary=SUMMARY):
        """(exit code, errors, the page after the run) for a tree of README.md, docs/page.md and a current summary."""
        with tempfile.TemporaryDirectory() as tree:
            os.makedirs(os.path.join(tree, "docs"))
            os.makedirs(os.path.join(tree, "benchmarks/results/current"))
            for path, text in (("README.md", "# Readme\n"), ("docs/page.md", page),
                               ("benchmarks/results/current/summary.md", summary)):
                with open(os.path.join(tree, path), "w", encoding="utf-8") as file:
                    file.write(text)
            errors = io.StringIO()
            with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
                code = doc_figures.main(command, tree)
            with open(os.path.join(tree, "docs/page.md"), encoding="utf-8") as file:
                return code, errors.getvalue(), file.read()

    def test_figures_the_cited_run_holds_pass(self):
        page = ("# Page\n\nRaw output: [current](../benchmarks/results/current/).\n\n## Result\n\n"
                "The sockets stack sent 1.38–2.10× stock's messages, 483,224 msgs/s at 30 clients, a round trip of "
                "55 µs against 116 (2.1× rounded).\n")
        code, errors, _ = self.run_tool(page)
        self.assertEqual("", errors)
        self.assertEqual(0, code)

    def test_a_figure_the_run_does_not_hold_fails_naming_page_line_and_figure(self):
        page = "# Page\n\n[current](../benchmarks/results/current/)\n\nIt sent 1.38–2.20× stock's messages.\n"
        code, errors, _ = self.run_tool(page)
        self.assertEqual(1, code)
        self.assertIn("docs/page.md:5: 1.38–2.20×: 2.20 is not in benchmarks/results/current/summary.md", errors)

    def test_a_measured_figure_in_a_section_that_cites_no_run_fails(self):
        code, errors, _ = self.run_tool("# Page\n\nIt sent 1.38× stock's messages at 55 µs.\n")
        self.assertEqual(1, code)
        self.assertIn("docs/page.md:3: 1.38×: a measured figure, and its section cites no run", errors)
        self.assertIn("docs/page.md:3: 55 µs: a measured figure", errors)

    def test_a_citation_holds_for_its_section_only(self):
        page = ("# Page\n\n## One\n\n[current](../benchmarks/results/current/): 2.10×.\n\n"
                "## Two\n\nAnd 2.10× here.\n")
        code, errors, _ = self.run_tool(page)
        self.assertEqual(1, code)
        self.assertIn("docs/page.md:9: 2.10×", errors)
        self.assertNotIn("docs/page.md:5", errors)

    def test_settings_in_backticks_and_code_blocks_are_not_figures(self):
        page = ("# Page\n\n[current](../benchmarks/results/current/)\n\nSet `flush-interval = 12.5ms` and `4.2×`.\n\n"
                "```\n--messages 20,001 --ratio 9.99×\n```\n")
        code, errors, _ = self.run_tool(page)
        self.assertEqual("", errors)
        self.assertEqual(0, code)

    def test_a_citation_of_a_missing_file_fails(self):
        code, errors, _ = self.run_tool("# Page\n\nSee [gone](../benchmarks/results/gone.txt): 1.5×.\n")
        self.assertEqual(1, code)
        self.assertIn("cites benchmarks/results/gone.txt, which does not exist", errors)

    def test_write_copies_the_summary_table_in_and_check_then_passes(self):
        page = "# Page\n\n<!-- table: Light load -->\n| transport | p50 µs | × stock |\n|---|---:|---:|\n| old | 1 | 9.99× |\n\nAfter.\n"
        code, errors, _ = self.run_tool(page)
        self.assertEqual(1, code)
        self.assertIn("docs/page.md:6: a generated table differs from its summary", errors)
        _, _, written = self.run_tool(page, "write")
        self.assertIn("| flushbatching | 55 | 0.47× |\n| stock | 116 | 1.00× |\n\nAfter.", written)
        self.assertNotIn("old", written)
        code, errors, _ = self.run_tool(written)
        self.assertEqual((0, ""), (code, errors))

    def test_a_generated_table_whose_heading_is_gone_fails(self):
        code, errors, _ = self.run_tool("# Page\n\n<!-- table: Renamed -->\n| a |\n|---|\n")
        self.assertEqual(1, code)
        self.assertIn("no table under 'Renamed'", errors)


if __name__ == "__main__":
    unittest.main()
