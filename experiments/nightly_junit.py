"""Thirty nightly runs of the golden suite under pytest, as JUnit XML, then ``gatecal recommend``.

A real pytest suite (written to a temporary folder) runs the 12 golden cases through the
real evaluators with the seeded flaky judge (3% of verdicts flipped, seed = night), one
test per case, and writes ``--junitxml``. The XML files land in reports/nightly-junit/ and
``gatecal recommend`` on them in reports/recommend-nightly.txt. Timestamps and durations in
the XML change from one regeneration to the next; the verdicts, and so the recommendation,
do not.

Usage: python experiments/nightly_junit.py [--nights 30] [--flip 0.03]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from gatecal.cli import main as gatecal_main

TEST_FILE = """
import os

import pytest

from gatecal import evaluators as ev

CASES = ev.load_golden()
JUDGE = ev.FlakyJudge(ev.RuleBasedJudge(), float(os.environ["FLIP"]), seed=int(os.environ["NIGHT"]))
REPORT = ev.run_golden("healthy", JUDGE, CASES)
RESULTS = {r.id: r for r in REPORT.results}


@pytest.mark.parametrize("case", [c.id for c in CASES])
def test_golden(case):
    result = RESULTS[case]
    assert result.passed, f"{case}: relevant={result.relevant} grounded={result.grounded}"


@pytest.mark.skipif(not os.environ.get("OPENAI_API_KEY"), reason="needs OPENAI_API_KEY")
def test_live_judge():
    pass
"""

RECOMMEND = ["recommend", "reports/nightly-junit", "--regression", "3"]


def recommend_text(root: Path) -> str:
    """``gatecal recommend`` on the committed nightly files (the README's example)."""
    buffer = io.StringIO()
    cwd = Path.cwd()
    os.chdir(root)
    try:
        with contextlib.redirect_stdout(buffer):
            code = gatecal_main(RECOMMEND)
    finally:
        os.chdir(cwd)
    if code != 0:
        raise SystemExit(f"gatecal {' '.join(RECOMMEND)} exited with {code}")
    return buffer.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nights", type=int, default=30)
    parser.add_argument("--flip", type=float, default=0.03)
    args = parser.parse_args()
    root = Path(__file__).resolve().parent.parent
    out = root / "reports" / "nightly-junit"
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.xml"):
        old.unlink()
    with tempfile.TemporaryDirectory() as tmp:
        test_file = Path(tmp) / "test_golden_nightly.py"
        test_file.write_text(TEST_FILE)
        env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
        for night in range(args.nights):
            env.update(NIGHT=str(night), FLIP=str(args.flip))
            subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file),
                 f"--junitxml={out / f'night-{night:02d}.xml'}"],
                env=env, cwd=tmp, capture_output=True, check=False,
            )  # fmt: skip
    text = recommend_text(root)
    (root / "reports" / "recommend-nightly.txt").write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
