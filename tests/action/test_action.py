"""The GitHub Action (action.yml): its check step run as GitHub runs it, with the variables
GitHub sets (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, RUNNER_TEMP, GITHUB_ACTION_PATH)."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.analyses.check.test_gate import baseline_runs, current, write_runs
from tests.paths import ROOT

ACTION = (ROOT / "action.yml").read_text()


def _inputs() -> set[str]:
    block = ACTION.split("\ninputs:\n", 1)[1].split("\noutputs:\n", 1)[0]
    return set(re.findall(r"^  ([a-z-]+):$", block, re.M))


def test_every_variable_the_step_reads_comes_from_a_declared_input():
    mapped = dict(
        re.findall(r"^ {8}(GATECAL_[A-Z_]+): \$\{\{ inputs\.([a-z-]+) \}\}$", ACTION, re.M)
    )
    assert set(mapped.values()) <= _inputs() and len(mapped) == len(_inputs())
    script = (ROOT / "action" / "check.sh").read_text()
    assert set(re.findall(r"GATECAL_[A-Z_]+", script)) <= set(mapped)
    outputs = set(re.findall(r"steps\.check\.outputs\.([a-z_]+)", ACTION))
    assert outputs == {"decision", "k_min", "passed", "p_value"}


def run_step(tmp_path, **inputs):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GATECAL_", "GITHUB_"))}
    out, summary = tmp_path / "github_output", tmp_path / "step_summary"
    out.write_text("")
    summary.write_text("")
    env.update(
        GITHUB_ACTION_PATH=str(ROOT),
        GITHUB_OUTPUT=str(out),
        GITHUB_STEP_SUMMARY=str(summary),
        RUNNER_TEMP=str(tmp_path),
        PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
        **{f"GATECAL_{k.upper()}": v for k, v in inputs.items()},
    )
    proc = subprocess.run(
        [shutil.which("bash") or "bash", str(ROOT / "action" / "check.sh")],
        env=env, capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )  # fmt: skip
    values = dict(line.split("=", 1) for line in out.read_text().splitlines())
    return proc, values, summary.read_text()


@pytest.fixture
def files(tmp_path):
    folder = tmp_path / "nightly"
    folder.mkdir()
    runs = baseline_runs(30)
    for i in range(3):
        chunk = list(runs)[10 * i : 10 * i + 10]
        write_runs(folder / f"night-{i}.jsonl", {r: runs[r] for r in chunk})
    return tmp_path


def test_a_passing_run_sets_the_outputs_and_the_summary(files):
    current(files, failing=["case-07"])
    proc, values, summary = run_step(files, current="ci.jsonl", baseline="nightly/*.jsonl")
    assert proc.returncode == 0, proc.stderr
    assert values["decision"] == "pass" and values["passed"] == "11"
    assert int(values["k_min"]) <= 11 and 0 < float(values["p_value"]) <= 1
    assert "gatecal check: PASS" in summary


def test_a_failing_run_fails_the_step(files):
    current(files, failing=[f"case-{i:02d}" for i in range(2, 9)])
    proc, values, summary = run_step(files, current="ci.jsonl", baseline="nightly")
    assert proc.returncode == 1 and values["decision"] == "fail"
    assert "gatecal check: FAIL" in summary


def test_incomplete_evidence_fails_the_step_with_no_p_value(files):
    current(files, skipped=["case-03"])
    proc, values, _ = run_step(files, current="ci.jsonl", baseline="nightly")
    assert proc.returncode == 1 and values["decision"] == "incomplete" and values["p_value"] == ""


def test_bad_input_is_exit_2_and_says_so(files):
    current(files)
    proc, values, summary = run_step(files, current="ci.jsonl", baseline="nightly", gate="bogus")
    assert proc.returncode == 2 and values == {"decision": "error"} and summary == ""
    assert proc.stderr.startswith("gatecal: error: --gate ")
