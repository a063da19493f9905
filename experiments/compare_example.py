"""A worked example of ``gatecal compare`` on real runs of the golden suite under pytest.

The same pytest suite as experiments/plugin_loop.py (the 12 golden cases through the real
evaluators, the seeded flaky judge flipping 1% of judge verdicts, three checks per case
recorded with the ``gatecal_verdicts`` fixture) is run for real, 10 runs per build with
``--gatecal-repeat 10``:

1. the baseline: the healthy build, judge seed 0 -> ``baseline.jsonl``;
2. a candidate that changed nothing: the healthy build again, judge seed 1 ->
   ``healthy-candidate.jsonl``;
3. a candidate with the bad prompt change: the regressed build, judge seed 2 ->
   ``regressed-candidate.jsonl``;

then ``gatecal compare`` decides each candidate against the baseline (table, and JSON for
the regressed one), once with a single run of each build (the first run of each file,
``--gatecal-repeat 1`` with the same seeds) to show what one run can and cannot tell, and
once on a candidate that lost a case (``-k "not sso"``: incomplete evidence, then
``--allow-missing``). Everything lands in reports/compare-example/: the runs files, the charts
and transcript.txt (each command and its real output; pytest's timing dropped).

Usage: python experiments/compare_example.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script, too
from experiments.plugin_loop import FLIP, TEST_FILE, _quiet

REPEATS = 10


def main() -> None:
    root = Path(__file__).resolve().parent.parent
    out = root / "reports" / "compare-example"
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    transcript: list[str] = []

    def shell(cmd: list[str], env: dict[str, str] | None = None, keep: str = "all") -> int:
        shown = " ".join(("'" + c + "'") if " " in c else c for c in cmd)
        prefix = " ".join(f"{k}={v}" for k, v in (env or {}).items())
        full = os.environ | (env or {})
        full.pop("OPENAI_API_KEY", None)
        full.pop("GITHUB_STEP_SUMMARY", None)
        argv = [sys.executable, "-m", "pytest", *cmd[1:]] if cmd[0] == "pytest" else cmd
        if cmd[0] == "gatecal":
            argv = [sys.executable, "-m", "gatecal", *cmd[1:]]
        done = subprocess.run(argv, cwd=tmp, env=full, capture_output=True, text=True, check=False)
        text = done.stdout + done.stderr
        if keep == "summary":  # pytest: the plugin's lines and pytest's own last line
            lines = text.splitlines()
            kept = [x for x in lines if x.startswith("gatecal: ") and "did not pass" not in x]
            text = "\n".join([*kept, lines[-1]])
        transcript.append(f"$ {prefix + ' ' if prefix else ''}{shown}\n{_quiet(text).rstrip()}"
                          f"\n[exit {done.returncode}]\n")  # fmt: skip
        return done.returncode

    with tempfile.TemporaryDirectory() as work:
        tmp = Path(work)
        (tmp / "test_golden.py").write_text(TEST_FILE)
        healthy = {"BUILD": "healthy", "FLIP": str(FLIP)}
        regressed = healthy | {"BUILD": "regressed"}
        py = ["pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "test_golden.py"]
        runs = [
            ("baseline", healthy | {"SEED": "0"}),
            ("healthy-candidate", healthy | {"SEED": "1"}),
            ("regressed-candidate", regressed | {"SEED": "2"}),
        ]
        for name, env in runs:
            shell([*py, f"--gatecal-repeat={REPEATS}", f"--gatecal-runs-out={name}.jsonl"],
                  env, "summary")  # fmt: skip
        for name, env in runs:
            shell([*py, "--gatecal-repeat=1", f"--gatecal-runs-out={name}-1run.jsonl"],
                  env, "summary")  # fmt: skip
        shell([*py, f"--gatecal-repeat={REPEATS}", "--gatecal-runs-out=partial-candidate.jsonl",
               "-k", "not sso"], healthy | {"SEED": "1"}, "summary")  # fmt: skip
        compare = ["gatecal", "compare", "--baseline", "baseline.jsonl"]
        steps = [
            [*compare, "--candidate", "healthy-candidate.jsonl", "--chart", "healthy.svg"],
            [*compare, "--candidate", "regressed-candidate.jsonl", "--chart", "regressed.svg"],
            [*compare, "--candidate", "regressed-candidate.jsonl", "--regression", "1",
             "--format", "json", "--out", "regressed.json"],
            ["gatecal", "compare", "--baseline", "baseline-1run.jsonl", "--candidate",
             "regressed-candidate-1run.jsonl"],
            ["gatecal", "compare", "--baseline", "baseline-1run.jsonl", "--candidate",
             "healthy-candidate-1run.jsonl"],
            [*compare, "--candidate", "partial-candidate.jsonl"],
            [*compare, "--candidate", "partial-candidate.jsonl", "--allow-missing"],
        ]  # fmt: skip
        for cmd in steps:
            shell(cmd)
        for name, _ in runs:
            shutil.copy(tmp / f"{name}.jsonl", out / f"{name}.jsonl")
            shutil.copy(tmp / f"{name}-1run.jsonl", out / f"{name}-1run.jsonl")
        for name in ("partial-candidate.jsonl", "healthy.svg", "regressed.svg", "regressed.json"):
            shutil.copy(tmp / name, out / name)
        (out / "test_golden.py").write_text(TEST_FILE.lstrip())
    text = "\n".join(transcript)
    (out / "transcript.txt").write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
