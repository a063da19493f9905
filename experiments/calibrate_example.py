"""The README's worked example for ``gatecal calibrate``: 160 labelled answers, a nightly rate.

A support team labelled 160 answers of its assistant (110 the humans call correct, 50 they
call wrong; failures were oversampled, as teams do) and ran its LLM judge three times on
each. The judge is made realistic, not uniform: every answer has its own chance of being
passed by the judge (Beta-distributed around a 6% false "no" and a 15% false "yes"), so
repeats of the same answer agree more than independent coin flips would; 1% of replies
are unparseable. Last night the judge passed K of 400 answers of a build whose true pass
rate is 0.88.

Writes, all seeded (the seed is below):
    reports/calibrate-example/labels.csv        the label table (480 judgements)
    reports/calibrate-example/judge-suite.json  ``--export-suite`` (point estimates)
    reports/calibrate-example.txt               ``gatecal calibrate`` (the README quotes it)
    reports/calibrate-example-simulate.txt      ``gatecal simulate --suite`` on the export

Usage: python experiments/calibrate_example.py
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
from pathlib import Path

import numpy as np

from gatecal.cli import main as gatecal_main

SEED = 20261213
ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "reports" / "calibrate-example"
PASSING, FAILING, REPEATS = 110, 50, 3
FNR, FPR, UNPARSEABLE, SPREAD = 0.06, 0.15, 0.01, 0.25  # SPREAD: icc of the per-answer rate
TRUE_PASS_RATE, NIGHTLY = 0.88, 400


def nightly_passes(rng: np.random.Generator) -> int:
    """Judge passes among last night's answers (fresh answers, each judged once)."""
    truth = rng.random(NIGHTLY) < TRUE_PASS_RATE
    chance = np.where(truth, 1 - FNR, FPR) * (1 - UNPARSEABLE)
    return int((rng.random(NIGHTLY) < chance).sum())


def write_labels(path: Path, rng: np.random.Generator) -> None:
    rows = []
    for i in range(PASSING + FAILING):
        human = i < PASSING
        mean = 1 - FNR if human else FPR  # P(judge says pass) for a typical answer
        a, b = mean * (1 - SPREAD) / SPREAD, (1 - mean) * (1 - SPREAD) / SPREAD
        p_pass = rng.beta(a, b)  # this answer's own chance of a judge pass
        for repeat in range(1, REPEATS + 1):
            if rng.random() < UNPARSEABLE:
                judge = "unparseable"
            else:
                judge = "pass" if rng.random() < p_pass else "fail"
            rows.append((f"answer-{i + 1:03d}", "pass" if human else "fail", judge, repeat))
    order = rng.permutation(len(rows) // REPEATS)  # labels arrive in no particular order
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["item", "human", "judge", "repeat"])
        for j in order:
            writer.writerows(rows[REPEATS * j : REPEATS * (j + 1)])


def command(observed: str) -> list[str]:
    return [
        "calibrate",
        "reports/calibrate-example/labels.csv",
        "--observed",
        observed,
        "--export-suite",
        "reports/calibrate-example/judge-suite.json",
    ]


SIMULATE = ["simulate", "--suite", "reports/calibrate-example/judge-suite.json", "--flip", "0"]


def run(args: list[str]) -> str:
    """``gatecal ARGS`` from the repository root; its stdout."""
    buffer = io.StringIO()
    cwd = Path.cwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(buffer):
            code = gatecal_main(args)
    finally:
        os.chdir(cwd)
    if code != 0:
        raise SystemExit(f"gatecal {' '.join(args)} exited with {code}")
    return buffer.getvalue()


def observed() -> str:
    """The nightly K/N, from the seed (a separate stream from the labels')."""
    _, nightly_rng = np.random.default_rng(SEED).spawn(2)
    return f"{nightly_passes(nightly_rng)}/{NIGHTLY}"


def main() -> None:
    FOLDER.mkdir(parents=True, exist_ok=True)
    labels_rng, _ = np.random.default_rng(SEED).spawn(2)
    write_labels(FOLDER / "labels.csv", labels_rng)
    text = run(command(observed()))
    (ROOT / "reports" / "calibrate-example.txt").write_text(text, encoding="utf-8")
    simulated = run(SIMULATE)
    (ROOT / "reports" / "calibrate-example-simulate.txt").write_text(simulated, encoding="utf-8")
    print(f"$ gatecal {' '.join(command(observed()))}\n{text}")
    print(f"$ gatecal {' '.join(SIMULATE)}\n{simulated}")


if __name__ == "__main__":
    main()
