"""The loop per framework, from real files: known-good repeats -> runs -> recommend -> check.

For each of promptfoo, inspect_ai and DeepEval, a fixture folder under ``tests/fixtures/<tool>/``
holds files written by the tool itself, offline (each fixture README and its
``source/regenerate.sh`` give the command and the version):

- ``baseline``: the known-good repeats in one invocation (promptfoo ``--repeat 30``,
  inspect ``--epochs 30``, DeepEval ``deepeval test run -r 30``);
- ``ci``: one later CI run of the same build (a separate invocation);
- for the realistic suites (``loop-20/`` of each: 20 cases, most stable, a few flaky, one
  judged wrongly every time), ``regressed``: one CI run of a build that broke 2 stable cases.

In a temporary folder holding copies of them, this runs

1. ``gatecal runs BASELINE`` (how the file was read),
2. ``gatecal recommend BASELINE --format json --out gate.json`` and the text report,
3. ``gatecal check CI --baseline BASELINE --gate-from gate.json``, then
4. with a regressed run, ``gatecal check REGRESSED --baseline BASELINE --gate-from gate.json``
   (the gate must fail it); without one (the toy 4-case suites, where no gate also meets the
   detection target and ``--gate-from`` says so), ``gatecal check`` with its default gate (the
   strictest within the false-alarm budget),

and writes each command with its real output and exit code to
``reports/loops/<framework>.txt``. Run it again to regenerate them.

Usage: python experiments/framework_loops.py [promptfoo|inspect_ai|deepeval ...]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FRAMEWORKS = {
    # name: (fixture folder, baseline file, CI file, regressed CI file or "", what made them)
    "promptfoo": (
        "promptfoo/loop-20", "baseline.json", "ci.json", "ci-regressed.json",
        "promptfoo 0.123.1 (Node 24.22.3), 20 cases: `promptfoo eval -c loop20.yaml --repeat 30 "
        "-o baseline.json` (good build, judge seed 20240601), then `promptfoo eval -c "
        "loop20.yaml` on the good build (seed 7) and on a build that broke 2 stable cases "
        "(seed 8)",
    ),
    "inspect_ai": (
        "inspect_ai/loop-20", "baseline.eval", "ci.eval", "ci-regressed.eval",
        "inspect_ai 0.3.285, 20 samples: `inspect eval qa_task.py@qa_loop20 --epochs 30 "
        "--log-format eval` (good build), then the same without --epochs on the good build "
        "and on a build that broke 2 stable cases",
    ),
    "deepeval": (
        "deepeval/loop-20", "baseline.json", "ci.json", "ci-regressed.json",
        "DeepEval 4.3.1, 20 cases: `deepeval test run test_loop20.py -r 30 -i` (good build, "
        "judge seed 20240601), then `deepeval test run test_loop20.py -i` on the good build "
        "(seed 7) and on a build that broke 2 stable cases (seed 8)",
    ),
}  # fmt: skip


def loop(name: str) -> str:
    """The transcript of one framework's loop."""
    folder, baseline, ci, regressed, made = FRAMEWORKS[name]
    source = ROOT / "tests" / "fixtures" / folder
    lines = [
        f"# {name}: files from tests/fixtures/{folder}/ ({made})",
        "",
    ]
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_STEP_SUMMARY",)}
    with tempfile.TemporaryDirectory() as work:
        tmp = Path(work)
        for file in (baseline, ci, regressed):
            if file:
                shutil.copy(source / file, tmp / file)
        steps = [
            ["gatecal", "runs", baseline],
            ["gatecal", "recommend", baseline, "--format", "json", "--out", "gate.json"],
            ["gatecal", "recommend", baseline],
            ["gatecal", "check", ci, "--baseline", baseline, "--gate-from", "gate.json"],
            # the regressed build, which the gate must fail; without one, check's own default
            # gate (the strictest within the false-alarm budget), for when the recommendation
            # found none that also meets the detection target
            ["gatecal", "check", regressed, "--baseline", baseline, "--gate-from", "gate.json"]
            if regressed
            else ["gatecal", "check", ci, "--baseline", baseline],
        ]
        for cmd in steps:
            argv = [sys.executable, "-m", "gatecal", *cmd[1:]]
            done = subprocess.run(argv, cwd=tmp, env=env, capture_output=True, text=True,
                                  check=False)  # fmt: skip
            output = (done.stdout + done.stderr).rstrip()
            lines += [f"$ {' '.join(cmd)}", *([output] if output else []),
                      f"[exit {done.returncode}]", ""]  # fmt: skip
    return "\n".join(lines)


def main(names: list[str]) -> None:
    unknown = [n for n in names if n not in FRAMEWORKS]
    if unknown:
        sys.exit(f"framework_loops.py: unknown framework {unknown[0]!r} "
                 f"(one of {', '.join(FRAMEWORKS)})")  # fmt: skip
    out = ROOT / "reports" / "loops"
    out.mkdir(parents=True, exist_ok=True)
    for name in names or list(FRAMEWORKS):
        text = loop(name)
        (out / f"{name}.txt").write_text(text, encoding="utf-8")
        print(text)


if __name__ == "__main__":
    main(sys.argv[1:])
