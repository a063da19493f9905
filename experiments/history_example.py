"""A worked example of the run history: the nightly loop with a store, and a judge change.

Twenty-four nightly runs of a 20-case suite (gatecal's long JSONL table, seeded: most
cases stable, three flaky at 15-25%, one systematic), the first sixteen judged by
``gpt-4o-2024-08-06``, the last eight by ``gpt-4o-2024-11-20``, under which three cases
fail every time (the judge changed its mind about them). Each night is recorded into a
store with ``gatecal record --known-good`` (times given with ``--at``, twelve hours
apart, so the transcript is the same on every machine); then a retried recording adds
nothing, ``gatecal history`` names the three cases, ``check --store`` warns that its
baseline spans the change and decides from the new judge's runs once told to, and the
history is exported to Parquet and queried with DuckDB; last, an unreachable and a
mistyped store are each one line.

Everything lands in reports/history-example/: the runs (``nightly/``, ``ci.jsonl``) and
transcript.txt (each command and its real output). docs/how-to/history.md quotes it.

Usage: python experiments/history_example.py
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SEED = 20261206
CASES = [f"tests/golden/test_support.py::test_answer[{name}]" for name in (
    "refund-annual", "refund-monthly", "cancel-trial", "cancel-annual", "invoice-copy",
    "invoice-vat", "sso-setup", "sso-okta", "export-csv", "export-api", "seats-add",
    "seats-remove", "plan-upgrade", "plan-downgrade", "data-retention", "data-delete",
    "outage-status", "outage-credit", "language-de", "language-ja",
)]  # fmt: skip
#: Failure rates under the first judge: three flaky cases, one systematic.
RATES = {CASES[3]: 0.2, CASES[7]: 0.15, CASES[11]: 0.25, CASES[19]: 1.0}
#: What the second judge fails every time.
MOVED = (CASES[4], CASES[9], CASES[14])
JUDGES = ("gpt-4o-2024-08-06", "gpt-4o-2024-11-20")
OLD, NEW = 16, 8


def _runs(folder: Path) -> list[tuple[Path, str]]:
    rng = random.Random(SEED)
    out = []
    for night in range(OLD + NEW):
        judge = JUDGES[night >= OLD]
        rates = RATES | (dict.fromkeys(MOVED, 1.0) if night >= OLD else {})
        rows = [
            {
                "run": f"night-{night:02d}",
                "case": case,
                "passed": rng.random() >= rates.get(case, 0),
            }
            for case in CASES
        ]
        path = folder / f"night-{night:02d}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        out.append((path, judge))
    return out


def main() -> None:
    root = Path(__file__).resolve().parent.parent
    out = root / "reports" / "history-example"
    if out.exists():
        shutil.rmtree(out)
    (out / "nightly").mkdir(parents=True)
    transcript: list[str] = []

    def shell(cmd: list[str], show: bool = True) -> str:
        argv = [sys.executable, "-m", "gatecal", *cmd[1:]] if cmd[0] == "gatecal" else cmd
        env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
        done = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True,
                              check=False)  # fmt: skip
        text = done.stdout + done.stderr
        if show:
            shown = " ".join(("'" + c + "'") if " " in c or "*" in c else c for c in cmd)
            transcript.append(f"$ {shown}\n{text.rstrip()}\n[exit {done.returncode}]\n")
        elif done.returncode:
            raise SystemExit(f"{cmd}: {text}")
        return text

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "nightly").mkdir()
        runs = _runs(work / "nightly")
        ci = work / "ci.jsonl"
        ci.write_text(
            "".join(
                json.dumps({"run": "ci-812", "case": c, "passed": c not in (CASES[19],)}) + "\n"
                for c in CASES
            ),
            encoding="utf-8",
        )
        for night, (path, judge) in enumerate(runs):
            at = f"2026-11-{1 + night // 2:02d}T{2 + 12 * (night % 2):02d}:00Z"
            shell(
                ["gatecal", "record", f"nightly/{path.name}", "--store", "history.db",
                 "--build", f"nightly-{night + 1}", "--judge", judge, "--branch", "main",
                 "--known-good", "--at", at],
                show=night in (0, OLD + NEW - 1),
            )  # fmt: skip
        last = runs[-1][0].name
        shell(["gatecal", "record", f"nightly/{last}", "--store", "history.db", "--build",
               "nightly-24-retry", "--judge", JUDGES[1], "--known-good"])  # fmt: skip
        shell(["gatecal", "history", "--store", "history.db"])
        shell(["gatecal", "check", "ci.jsonl", "--store", "history.db"])
        shell(["gatecal", "check", "ci.jsonl", "--store", "history.db", "--judge", JUDGES[1]])
        shell(["gatecal", "recommend", "--store", "history.db", "--judge", JUDGES[1]])
        shell(["gatecal", "history", "--store", "history.db", "--export", "history.parquet",
               "--format", "json", "--out", "history.json"])  # fmt: skip
        query = (
            "SELECT judge, count(DISTINCT run) AS runs, "
            "round(avg(CASE WHEN passed THEN 0 ELSE 1 END), 3) AS failure_rate "
            "FROM 'history.parquet' GROUP BY judge ORDER BY judge"
        )
        shown = shell([sys.executable, "-c", f"import duckdb; duckdb.sql({query!r}).show()"],
                      show=False)  # fmt: skip
        transcript.append(
            f'$ python -c "import duckdb; duckdb.sql({query!r}).show()"\n{shown.rstrip()}\n'
        )
        # a store that is not there: one line, exit 2, the password masked
        shell(["gatecal", "check", "ci.jsonl", "--store",
               "postgresql://ci:s3cret@127.0.0.1:1/evals"])  # fmt: skip
        shell(["gatecal", "check", "ci.jsonl", "--store", "histroy.db"])
        for path, _ in runs:
            shutil.copy(path, out / "nightly" / path.name)
        shutil.copy(ci, out / "ci.jsonl")
    text = "\n".join(transcript)
    (out / "transcript.txt").write_text(text, encoding="utf-8")
    print(text, end="")


if __name__ == "__main__":
    main()
