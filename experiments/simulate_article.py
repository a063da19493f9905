"""The CLI's reports on the seed article's setting: simulate, plan and policies.

Writes, byte for byte reproducibly (fixed seeds):

* reports/simulate-article.txt   - ``gatecal simulate --cases 12 --flip 0.03,0.08``
* reports/simulate-article.json  - the same with ``--format json``
* reports/simulate-article-100k.md - 100,000 runs per cell, where the simulated rates
  sit close to the exact ones (markdown)
* reports/simulate-correlated.txt - the same suite when each run draws its flip rate
  (run-level correlation, icc 0.1)
* reports/plan-article.txt - ``gatecal plan`` for the issue's reference targets
* reports/policies-article.txt - ``gatecal policies`` at 8% noise

Usage: python experiments/simulate_article.py [--reports DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import io
from pathlib import Path

from gatecal.cli import main as main_cli

COMMANDS = {
    "simulate-article.txt": ["simulate", "--cases", "12", "--flip", "0.03,0.08"],
    "simulate-article.json": [
        "simulate", "--cases", "12", "--flip", "0.03,0.08", "--format", "json",
    ],
    "simulate-article-100k.md": [
        "simulate", "--cases", "12", "--flip", "0.03,0.08", "--runs", "100000",
        "--format", "markdown",
    ],
    "simulate-correlated.txt": [
        "simulate", "--cases", "12", "--flip", "0.03,0.08", "--icc", "0.1", "--runs", "20000",
    ],
    "plan-article.txt": [
        "plan", "--flip", "0.08", "--regression", "0.10", "--false-alarm", "0.05",
        "--detection", "0.95",
    ],
    "policies-article.txt": ["policies", "--flip", "0.08", "--gates", "all,0.80"],
}  # fmt: skip


def render(name: str) -> str:
    """What ``gatecal`` prints for the command behind report `name` (the real CLI path)."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main_cli(COMMANDS[name])
    if code != 0:
        raise SystemExit(f"gatecal {' '.join(COMMANDS[name])} exited with {code}")
    return buffer.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reports", type=Path, default=Path("reports"))
    args = parser.parse_args()
    args.reports.mkdir(parents=True, exist_ok=True)
    for name, command in COMMANDS.items():
        (args.reports / name).write_text(render(name))
        print(f"wrote {args.reports / name}  (gatecal {' '.join(command)})")


if __name__ == "__main__":
    main()
