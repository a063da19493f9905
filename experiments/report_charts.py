"""The report folder (charts, tables, index.md, index.html) for the article's setting.

Runs ``gatecal report`` with the 30 nightly JUnit files of experiments/nightly_junit.py into
reports/report/. Text files and SVGs are byte-for-byte reproducible (the tests check them);
PNGs are for the HTML page and GitHub.

Usage: python experiments/report_charts.py
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from gatecal.cli import main as gatecal_main

ROOT = Path(__file__).resolve().parent.parent


def arguments(out: Path) -> list[str]:
    """The ``gatecal report`` command line that writes the folder `out` (run from ROOT, so
    the report names its input files relative to the repository)."""
    return [
        "report", "--out", str(out), "--cases", "12", "--flip", "0.03,0.08",
        "--runs-file", "reports/nightly-junit", "--regression", "3",
    ]  # fmt: skip


def main() -> None:
    out = ROOT / "reports" / "report"
    if out.exists():
        shutil.rmtree(out)
    os.chdir(ROOT)
    code = gatecal_main(arguments(out))
    if code != 0:
        raise SystemExit(code)


if __name__ == "__main__":
    main()
