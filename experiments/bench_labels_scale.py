"""Big label tables: ``gatecal calibrate`` of 10^6 labels, reading at the speed of reading.

Writes reports/benchmark-labels-scale.md. Every row is measured in this run, each in its
own process (peak memory is the process's VmHWM), with bench_scale.py's runner and
baselines beside it:

- 10^6 labels (2 checks x 10^5 items x 5 repeats) as CSV against ``pandas.read_csv``
  (default and dtype=object), as JSONL against a plain ``json.loads`` loop, read by
  ``gatecal.read_labels``;
- the whole ``gatecal calibrate LABELS`` command, the time its reading took and the time
  after it, with this tree's gatecal and with the commit before the change (``--before``,
  taken from git into a temporary folder); both write the same bytes (checked here).

Usage: python experiments/bench_labels_scale.py [--small] [--before COMMIT]
(--small: a tenth of the size)
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script, too
from experiments.bench_scale import _compiled, _run

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "reports" / "benchmark-labels-scale.md"
BEFORE = "ba8a841"  # main before labels were read in blocks

_CHILD = textwrap.dedent(
    """
    import json, sys, time
    what, path, root = sys.argv[1], sys.argv[2], sys.argv[-1]
    start = time.perf_counter()
    import gatecal
    assert gatecal.__file__.startswith(root), (gatecal.__file__, root)  # the tree measured
    if what == "read":
        assert len(gatecal.read_labels(path)) > 0
        print(json.dumps({"seconds": time.perf_counter() - start}))
    elif what == "calibrate":
        from gatecal.cli import main
        real, took = gatecal.read_labels, []
        def timed(labels):  # the command reads through gatecal.read_labels
            began = time.perf_counter()
            got = real(labels)
            took.append(time.perf_counter() - began)
            return got
        gatecal.read_labels = timed
        began = time.perf_counter()
        assert main(["calibrate", path, "--out", sys.argv[3]]) == 0 and len(took) == 1
        command = time.perf_counter() - began
        print(json.dumps({"command": command, "read": took[0], "after": command - took[0]}))
    with open("/proc/self/status") as status:
        peak = next(int(l.split()[1]) for l in status if l.startswith("VmHWM")) / 1024
    print(json.dumps({"peak_mb": peak}))
    """
)


def _write_labels(folder: Path, scale: int) -> dict[str, Path]:
    """10^6 labels: 2 checks x 10^5 items x 5 repeats, 70% truly passing, the judge
    right 85% of the time and unparseable 2.5%; the same rows as CSV and JSONL."""
    paths = {"csv": folder / "labels.csv", "jsonl": folder / "labels.jsonl"}
    items = 100_000 // scale
    with open(paths["csv"], "w") as csv, open(paths["jsonl"], "w") as jsonl:
        csv.write("item,check,human,judge,repeat\n")
        for i in range(items):
            item = f"answer-{i:06d}"
            for c, check in enumerate(("relevancy", "grounded")):
                human = "pass" if (i * 31 + c * 7) % 10 < 7 else "fail"
                other = "fail" if human == "pass" else "pass"
                for r in range(1, 6):
                    k = (i * 17 + c * 5 + r * 3) % 40
                    judge = "unparseable" if k == 0 else human if k < 35 else other
                    csv.write(f"{item},{check},{human},{judge},{r}\n")
                    jsonl.write(
                        f'{{"item": "{item}", "check": "{check}", "human": "{human}", '
                        f'"judge": "{judge}", "repeat": {r}}}\n'
                    )
    return paths


def _before(folder: Path, commit: str) -> Path:
    """`commit`'s gatecal package, from git, in `folder`."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit, "gatecal"], capture_output=True, check=True
    ).stdout
    folder.mkdir()
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def _calibrate(path: Path, out: Path, root: Path) -> dict[str, float]:
    began = time.perf_counter()
    got = _run("calibrate", str(path), str(out), str(root), child=_CHILD, root=root)
    got["process"] = time.perf_counter() - began  # the interpreter, imports and command
    return got


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="a tenth of the size")
    parser.add_argument("--before", default=BEFORE, help="the commit to compare with")
    args = parser.parse_args()
    scale = 10 if args.small else 1
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        before_root = _before(folder / "before", args.before)
        for root in (ROOT, before_root):  # both from bytecode, as after pip install
            _compiled(root)
        paths = _write_labels(folder, scale)
        before = {
            fmt: _calibrate(path, folder / f"before-{fmt}.txt", before_root)
            for fmt, path in paths.items()
        }
        reading = [
            ("CSV", "pandas.read_csv", _run("pandas", str(paths["csv"])), "csv"),
            ("CSV", "pandas.read_csv(dtype=object)", _run("pandas-object", str(paths["csv"])),
             "csv"),
            ("JSONL", "json.loads loop", _run("json", str(paths["jsonl"])), "jsonl"),
        ]  # fmt: skip
        ours = {
            fmt: _run("read", str(path), str(ROOT), child=_CHILD) for fmt, path in paths.items()
        }
        after = {
            fmt: _calibrate(path, folder / f"after-{fmt}.txt", ROOT) for fmt, path in paths.items()
        }
        for fmt in paths:  # the same numbers, the same bytes
            same = (folder / f"before-{fmt}.txt").read_bytes() == (
                folder / f"after-{fmt}.txt"
            ).read_bytes()
            if not same:
                raise SystemExit(f"calibrate's output of the {fmt} table differs from before")
    n = f"{10**6 // scale:,}"
    unit = "" if scale == 1 else f" (--small: sizes / {scale})"
    lines = [
        "# Big label tables: calibrate at the speed of reading, memory by counts",
        "",
        f"`python experiments/bench_labels_scale.py`{unit} on {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}; every row measured "
        "in this run, each in its own process (peak = the process's VmHWM, its maximum "
        "resident memory, Python and its imports included), the baseline beside it. "
        f"{n} labels: 2 checks x {100_000 // scale:,} items x 5 repeats, columns item, "
        "check, human, judge, repeat. Timings on a shared machine vary from run to run; "
        "the ratios are measured side by side.",
        "",
        "## Reading",
        "",
        "| input | baseline | baseline time | gatecal.read_labels | ratio | gatecal peak memory |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for label, name, base, fmt in reading:
        got = ours[fmt]
        lines.append(
            f"| {label}, {n} labels | {name} | {base['seconds']:.2f} s | "
            f"{got['seconds']:.2f} s | {got['seconds'] / base['seconds']:.2f}x | "
            f"{got['peak_mb']:.0f} MB |"
        )
    lines += [
        "",
        "Targets: within 3x of the baseline, under 300 MB for 10^6 labels.",
        "",
        f"## `gatecal calibrate LABELS`, before ({args.before}) and after",
        "",
        "| input | gatecal | whole process | reading | after reading | after / reading "
        "| peak memory |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for fmt in paths:
        for name, got in ((f"before ({args.before})", before[fmt]), ("after", after[fmt])):
            lines.append(
                f"| {fmt.upper()}, {n} labels | {name} | {got['process']:.2f} s | "
                f"{got['read']:.2f} s | {got['after']:.2f} s | "
                f"{got['after'] / got['read']:.2f}x | {got['peak_mb']:.0f} MB |"
            )
    lines += [
        "",
        "Whole process: the interpreter, its imports and the command. Reading: "
        "`gatecal.read_labels` inside the command; after reading: the rest of the command "
        "(measuring, importing scipy.special for the intervals, rendering, writing --out). "
        "Before and after wrote the same bytes for both tables (checked in this run). "
        "Both run from bytecode, as after `pip install` (the shell here sets "
        "PYTHONDONTWRITEBYTECODE, under which each process would compile gatecal from "
        "source). Target: at most as long after reading as reading took.",
        "",
    ]
    OUT.write_text("\n".join(lines))
    print(OUT.read_text())


if __name__ == "__main__":
    main()
