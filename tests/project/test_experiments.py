"""experiments/run_all.py regenerates every report a page of the docs cites.

A static check: each ``reports/NAME`` a page under docs/ cites (NAME a file, or the folder a
script writes into) must be named in the source of a script that run_all runs.
"""

from __future__ import annotations

import ast
import re

from tests.paths import ROOT

EXPERIMENTS = ROOT / "experiments"
CITED = re.compile(r"(?<![\w./-])reports/([\w.-]+)")


def run_all_scripts() -> list[str]:
    """The scripts run_all.py runs: the files of its ``SCRIPTS`` list, arguments aside."""
    tree = ast.parse((EXPERIMENTS / "run_all.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "SCRIPTS" for t in node.targets
        ):
            return [line.split()[0] for line in ast.literal_eval(node.value)]
    raise AssertionError("run_all.py has no SCRIPTS list")


def cited_reports() -> dict[str, list[str]]:
    """Each name under reports/ that a page cites, and the pages that cite it."""
    out: dict[str, list[str]] = {}
    for page in sorted((ROOT / "docs").rglob("*.md")):
        for name in CITED.findall(page.read_text(encoding="utf-8")):
            out.setdefault(name, []).append(page.relative_to(ROOT).as_posix())
    return out


def produced_by(name: str, source: str) -> bool:
    """Whether a script's `source` names the report `name`: a file by its whole name, a
    folder as a quoted path part."""
    if "." in name:
        return name in source
    return re.search(rf"[\"'/]{re.escape(name)}[\"'/]", source) is not None


def test_the_check_tells_a_named_report_from_an_unnamed_one():
    writes = (
        'OUT = ROOT / "reports" / "sequential-shared-rate.md"\nLOOP = REPORTS / "plugin-loop"\n'
    )
    assert produced_by("sequential-shared-rate.md", writes)
    assert produced_by("plugin-loop", writes)
    assert not produced_by("sequential-savings.md", writes)
    assert not produced_by("report", writes)  # "reports" is not the folder "report"
    assert CITED.findall("see `reports/a.md` and target/surefire-reports/TEST-x.xml") == ["a.md"]


def test_every_report_a_page_cites_is_regenerated_by_run_all():
    sources = [(EXPERIMENTS / s).read_text(encoding="utf-8") for s in run_all_scripts()]
    cited = cited_reports()
    assert len(cited) > 20
    missing = {
        name: pages
        for name, pages in cited.items()
        if not any(produced_by(name, source) for source in sources)
    }
    assert missing == {}
