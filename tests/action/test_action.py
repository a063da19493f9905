"""The GitHub Action (action.yml) run as GitHub runs a composite action: its steps in order
from action.yml itself (the `if:` conditions, each step's `env:` mapping and its `run:` line
through `bash --noprofile --norc -eo pipefail`), with the variables GitHub sets
(GITHUB_OUTPUT and GITHUB_STEP_SUMMARY per step, GITHUB_ACTION_PATH, RUNNER_TEMP), the
outputs read back as the runner reads GITHUB_OUTPUT, and the action's outputs evaluated
from their expressions. actions/setup-python and pip are the only stand-ins: a python on a
shim that records `-m pip` instead of installing, and otherwise runs this interpreter."""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.analyses.check.test_gate import baseline_runs, current, write_runs
from tests.paths import FIXTURES, ROOT

ACTION_TEXT = (ROOT / "action.yml").read_text(encoding="utf-8")


# --- action.yml, read without a YAML library (the test extra has none) ---------------------


def _scalar(text):
    if text.startswith("'") and text.endswith("'"):
        return text[1:-1].replace("''", "'")
    if text.startswith('"') and text.endswith('"'):
        return json.loads(text)
    return {"true": True, "false": False}.get(text, text)


def _block(lines, i, indent):
    """The block at `indent` from line i: a sequence or a mapping; (value, next line)."""
    if lines[i][1].startswith("- "):
        items = []
        while i < len(lines) and lines[i][0] == indent and lines[i][1].startswith("- "):
            lines[i] = (indent + 2, lines[i][1][2:])  # the item's first key, as a mapping's
            item, i = _block(lines, i, indent + 2)
            items.append(item)
        return items, i
    mapping = {}
    while i < len(lines) and lines[i][0] == indent:
        line = lines[i][1]
        assert ": " in line or line.endswith(":"), f"action.yml: not a key: {line!r}"
        key, _, rest = line.partition(": ") if ": " in line else (line[:-1], ":", "")
        i += 1
        if rest in (">-", "|-"):
            block = []
            while i < len(lines) and lines[i][0] > indent:
                block.append(lines[i][1])
                i += 1
            mapping[key] = (" " if rest == ">-" else "\n").join(block)
        elif rest:
            mapping[key] = _scalar(rest)
        elif i < len(lines) and lines[i][0] > indent:
            mapping[key], i = _block(lines, i, lines[i][0])
        else:
            mapping[key] = None
    return mapping, i


def read_action(text):
    """action.yml's subset of YAML: block mappings and sequences, plain and quoted scalars,
    '>-' and '|-' blocks (no blank lines or comments inside them)."""
    lines = [
        (len(line) - len(line.lstrip(" ")), line.strip())
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    value, end = _block(lines, 0, 0)
    assert end == len(lines), f"action.yml: line {end} not read: {lines[end]!r}"
    return value


ACTION = read_action(ACTION_TEXT)
STEPS = ACTION["runs"]["steps"]


def test_action_yml_is_read_as_yaml_reads_it():
    yaml = pytest.importorskip("yaml")
    assert read_action(ACTION_TEXT) == yaml.safe_load(ACTION_TEXT)


# --- GitHub's expressions, as far as action.yml uses them ------------------------------------

_OPERAND = r"inputs\.[a-z-]+|steps\.[a-z-]+\.outputs\.[a-z_-]+|'[^']*'"


def evaluate(expression, context):
    """`a || b`, `a == b`, `a != b` over inputs.X, steps.ID.outputs.X and '...' literals;
    a missing step output is null, which `||` passes over and `!=` compares as ''."""
    result = None
    for part in expression.split("||"):
        sides = re.fullmatch(rf"\s*({_OPERAND})\s*(?:(==|!=)\s*({_OPERAND})\s*)?", part)
        assert sides, f"not an expression this test evaluates: {part!r}"
        left, op, right = sides.groups()
        value = _operand(left, context)
        if op:
            equal = (value or "") == (_operand(right, context) or "")
            value = equal if op == "==" else not equal
        if value:
            return value
        result = value
    return result


def _operand(text, context):
    if text.startswith("'"):
        return text[1:-1]
    if text.startswith("inputs."):
        return context["inputs"][text.split(".", 1)[1]]
    _, step, _, name = text.split(".")
    return context["steps"].get(step, {}).get(name)


def substitute(template, context):
    def one(match):
        value = evaluate(match.group(1), context)
        return "" if value is None else str(value)

    return re.sub(r"\$\{\{(.*?)\}\}", one, template)


def read_github_output(path):
    """GITHUB_OUTPUT as the runner reads it: `name=value` lines, or `name<<DELIMITER`, the
    value's lines and the delimiter alone on a line; anything else is the runner's error."""
    lines, values, i = path.read_text(encoding="utf-8").split("\n"), {}, 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line:
            continue
        if "=" in line and ("<<" not in line or line.index("=") < line.index("<<")):
            name, text = line.split("=", 1)
        else:
            name, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, i)  # ValueError: no closing delimiter
            text, i = "\n".join(lines[i:end]), end + 1
        assert name and name not in values, f"GITHUB_OUTPUT: {name!r} again or empty"
        values[name] = text
    return values


# --- the runner ------------------------------------------------------------------------------


@dataclass
class Run:
    returncode: int
    outputs: dict  # the action's outputs, from their expressions
    steps: dict  # each step id's outputs
    ran: list  # the step ids that ran
    stdout: str
    stderr: str
    summary: str
    pip: list = field(default_factory=list)  # each pip call: [python, arg, ...]
    raw: dict = field(default_factory=dict)  # each step id's GITHUB_OUTPUT as written


def shim(folder, name, version=None):
    """A python at folder/name that records `-m pip ...` in folder/pip.log instead of
    installing, answers version probes with `version` if given, and otherwise runs this
    interpreter (which imports this checkout's gatecal)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    probe = f'if [ "${{1:-}}" = -c ]; then echo {version}; exit 0; fi\n' if version else ""
    path.write_text(
        "#!/usr/bin/env bash\n"
        'if [ "${1:-}" = -m ] && [ "${2:-}" = pip ]; then\n'
        f"  printf '%s\\t' \"$0\" \"$@\" >>'{folder / 'pip.log'}'; echo >>'{folder / 'pip.log'}'\n"
        f"  exit ${{PIP_STATUS:-0}}\nfi\n{probe}"
        f"exec '{sys.executable}' \"$@\"\n"
    )
    path.chmod(0o755)
    return path


def run_action(work, setup_version=None, runner_version=None, pip_status=0, **inputs):
    """Run the action's steps in `work` with `inputs` (keyword names with '_' for '-'), as
    GitHub does: setup-python stands in as a python of `setup_version` (default: this
    one), the runner's own python3 as one of `runner_version` (default: this one)."""
    declared = ACTION["inputs"]
    given = {k.replace("_", "-"): v for k, v in inputs.items()}
    assert set(given) <= set(declared), f"not inputs of action.yml: {set(given) - set(declared)}"
    context = {
        "inputs": {k: given.get(k, spec.get("default", "")) for k, spec in declared.items()},
        "steps": {},
    }
    tools = Path(tempfile.mkdtemp(prefix="runner-", dir=work.parent))  # one per run
    setup_python = shim(tools / "setup", "python", setup_version)
    for name in ("python3", "python"):  # the runner's own, on PATH
        shim(tools / "runner", name, runner_version)
    temp = tools / "runner-temp"
    temp.mkdir(exist_ok=True)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GATECAL_", "GITHUB_"))}
    base["PATH"] = os.pathsep.join([str(tools / "runner"), base.get("PATH", "")])
    base["PIP_STATUS"] = str(pip_status)
    ran, out, err, summary, raw, returncode = [], [], [], [], {}, 0
    for number, step in enumerate(STEPS):
        if "if" in step and not evaluate(step["if"], context):
            continue
        step = {"id": f"step-{number}", **step}  # GitHub's name for a step without an id
        ran.append(step["id"])
        if "uses" in step:
            assert step["uses"].startswith("actions/setup-python@"), step["uses"]
            assert step["with"]["update-environment"] is False  # the job's python stays its own
            wanted = substitute(step["with"]["python-version"], context)
            assert wanted == context["inputs"]["python-version"]
            context["steps"][step["id"]] = {"python-path": str(setup_python)}
            continue
        files = {name: tools / f"{number}-{name}" for name in ("output", "summary", "script")}
        files["output"].write_text("")
        files["summary"].write_text("")
        files["script"].write_text(step["run"] + "\n")
        env = dict(base)
        env.update({k: substitute(v, context) for k, v in step.get("env", {}).items()})
        env.update(
            GITHUB_ACTION_PATH=str(ROOT),
            GITHUB_OUTPUT=str(files["output"]),
            GITHUB_STEP_SUMMARY=str(files["summary"]),
            RUNNER_TEMP=str(temp),
        )
        assert step["shell"] == "bash"
        proc = subprocess.run(
            [shutil.which("bash") or "bash", "--noprofile", "--norc", "-eo", "pipefail",
             str(files["script"])],
            env=env, capture_output=True, text=True, cwd=work, timeout=120,
        )  # fmt: skip
        out.append(proc.stdout)
        err.append(proc.stderr)
        summary.append(files["summary"].read_text())
        context["steps"][step["id"]] = read_github_output(files["output"])
        raw[step["id"]] = files["output"].read_text()
        if proc.returncode != 0:  # the composite stops at a failing step
            returncode = proc.returncode
            break
    outputs = {name: substitute(spec["value"], context) for name, spec in ACTION["outputs"].items()}
    log = tools / "setup" / "pip.log", tools / "runner" / "pip.log"
    pip = [line.rstrip("\t").split("\t") for f in log if f.exists() for line in
           f.read_text().splitlines()]  # fmt: skip
    return Run(returncode, outputs, context["steps"], ran, "".join(out), "".join(err),
               "".join(summary), pip, raw)  # fmt: skip


# --- inputs: real files from gatecal's writers and the fixtures ------------------------------


@pytest.fixture
def work(tmp_path):
    """nightly/night-{0,1,2}.jsonl, 30 known-good runs; ci.jsonl passes (one known-flaky
    case fails); bad.jsonl fails 7 cases."""
    work = tmp_path / "work"
    (work / "nightly").mkdir(parents=True)
    runs = baseline_runs(30)
    for i in range(3):
        chunk = list(runs)[10 * i : 10 * i + 10]
        write_runs(work / "nightly" / f"night-{i}.jsonl", {r: runs[r] for r in chunk})
    current(work, failing=["case-01"])  # flaky: failed 6 of 30 known-good runs
    current(work, failing=[f"case-{i:02d}" for i in range(2, 9)], name="bad.jsonl")
    return work


def one_error_line(run):
    """The one line on stderr, which the job summary shows too, in a code block."""
    lines = run.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("gatecal: error: "), run.stderr
    fence = max(re.findall("`{3,}", run.summary), key=len)
    assert len(fence) > max(map(len, re.findall("`+", lines[0])), default=0)  # a fence of its own
    fence = re.escape(fence)
    shown = rf"### gatecal check: ERROR\n\n({fence})text\n{re.escape(lines[0])}\n\1\n"
    assert re.fullmatch(shown, run.summary), run.summary
    return lines[0]


def refused(run):
    """Exit 2, decision=error, one error line, and no evidence."""
    assert run.returncode == 2 and run.outputs["decision"] == "error", run
    assert run.outputs["k_min"] == run.outputs["passed"] == ""
    return one_error_line(run)


# --- the decision ----------------------------------------------------------------------------


def test_the_steps_read_only_declared_inputs_and_set_the_outputs():
    used = set(re.findall(r"inputs\.([a-z-]+)", ACTION_TEXT))
    assert used == set(ACTION["inputs"])  # each input declared is used, and only those
    scripts = [(ROOT / "action" / name).read_text() for name in ("install.sh", "step.py")]
    variables = set(re.findall(r"GATECAL_[A-Z_]+", "".join(scripts)))
    mapped = {v for step in STEPS for v in step.get("env", {})}
    assert variables == mapped  # each variable a script reads comes from action.yml
    for step in STEPS:
        assert "$GITHUB_ACTION_PATH/action/" in step.get("run", "$GITHUB_ACTION_PATH/action/")
    assert set(ACTION["outputs"]) == {
        "decision", "k_min", "passed", "p_value", "new_failures", "systematic", "gate-file",
    }  # fmt: skip


def test_a_passing_run_sets_the_outputs_and_the_summary(work):
    run = run_action(work, current="ci.jsonl", baseline="nightly/*.jsonl")
    assert run.returncode == 0, run.stderr
    assert run.ran == ["python", "install", "check"]
    assert run.outputs["decision"] == "pass" and run.outputs["passed"] == "11"
    assert 0 < float(run.outputs["p_value"]) <= 1
    assert run.outputs["k_min"] == ""  # the cases differ: the case-aware gate, not a count
    assert "gatecal check: PASS" in run.summary
    # gatecal installed once, from this action's own copy, into setup-python's python
    [(python, *args)] = run.pip
    assert python.endswith("setup/python")
    assert args == ["-m", "pip", "install", "--quiet", str(ROOT)]
    assert run.steps["install"]["python"] == python


def test_a_failing_run_fails_the_step(work):
    run = run_action(work, current="bad.jsonl", baseline="nightly")
    assert run.returncode == 1 and run.outputs["decision"] == "fail"
    assert "gatecal check: FAIL" in run.summary
    new = [f"case-{i:02d}" for i in range(2, 9)]
    assert run.outputs["new_failures"].splitlines() == new and run.outputs["systematic"] == ""


def test_the_cases_the_judge_gets_wrong_every_time_are_named(work):
    """A case that failed every known-good run is named systematic, in the outputs and in
    the job summary, never known flaky."""
    runs = baseline_runs(30, flaky={"case-00": 3, "case-05": 1})  # case-05 fails every run
    for i in range(3):
        chunk = list(runs)[10 * i : 10 * i + 10]
        write_runs(work / "nightly" / f"night-{i}.jsonl", {r: runs[r] for r in chunk})
    current(work, failing=["case-05"])
    run = run_action(work, current="ci.jsonl", baseline="nightly")
    assert run.returncode == 0 and run.outputs["decision"] == "pass", run.stderr
    assert run.outputs["systematic"] == "case-05" and run.outputs["new_failures"] == ""
    assert "systematic" in run.summary and "known flaky" not in run.summary


def test_incomplete_evidence_fails_the_step_with_no_p_value(work):
    current(work, skipped=["case-03"])
    run = run_action(work, current="ci.jsonl", baseline="nightly")
    assert run.returncode == 1 and run.outputs["decision"] == "incomplete"
    assert run.outputs["p_value"] == ""


def test_a_bad_option_value_is_exit_2_and_says_so(work):
    run = run_action(work, current="ci.jsonl", baseline="nightly", gate="bogus")
    assert run.returncode == 2 and run.outputs["decision"] == "error"
    assert one_error_line(run).startswith("gatecal: error: --gate ")


def test_a_sequential_gate_that_continues_is_exit_3_and_says_continue(work):
    # a run whose passing cases lie between the first look's two boundaries
    import gatecal

    base = gatecal.read_runs([work / "nightly"])
    probe = gatecal.check_sequential(gatecal.read_runs([work / "ci.jsonl"]), base, policy="sprt-5")
    first = probe.gate.design.boundaries[0]
    assert first.fail_at_most + 1 < first.pass_at_least  # a first look that can continue
    failing = probe.cases - (first.fail_at_most + 1)
    current(work, failing=[f"case-{i:02d}" for i in range(failing)], name="mid.jsonl")
    run = run_action(work, current="mid.jsonl", baseline="nightly", policy="sprt-5")
    assert run.returncode == 3 and run.outputs["decision"] == "continue", run.stderr
    assert run.outputs["k_min"] == run.outputs["p_value"] == ""  # no count gate to quote


# --- list inputs: lines and words, each a path or pattern, never an option -----------------


def test_a_block_list_is_read_whole_as_the_same_words_on_one_line_are(work):
    """`current: |` with two files was read as its first line only: a silent pass."""
    lines = run_action(work, current="ci.jsonl\nbad.jsonl\n", baseline="nightly")
    words = run_action(work, current="ci.jsonl bad.jsonl", baseline="nightly")
    assert lines.returncode == words.returncode == 2  # two runs need a --policy
    assert lines.outputs["decision"] == words.outputs["decision"] == "error"
    assert one_error_line(lines) == one_error_line(words)
    assert "duplicate verdict" in lines.stderr


def test_a_missing_file_on_a_later_line_is_an_error(work):
    run = run_action(work, current="ci.jsonl", baseline="nightly/night-0.jsonl\n  missing.jsonl\n")
    assert run.returncode == 2 and run.outputs["decision"] == "error"
    assert "missing.jsonl" in one_error_line(run)


def test_every_line_and_word_of_a_block_list_is_read(work):
    baseline = "nightly/night-[01].jsonl\n\n  nightly/night-2.jsonl  \n"
    run = run_action(work, current="ci.jsonl", baseline=baseline)
    whole = run_action(work, current="ci.jsonl", baseline="nightly")
    assert run.returncode == whole.returncode == 0, run.stderr
    assert run.outputs == whole.outputs  # all 30 runs: the same evidence as the folder's


@pytest.mark.parametrize(
    ("name", "text", "word"),
    [
        ("current", "bad.jsonl --summary {out}", "--summary"),
        ("current", "ci.jsonl\n--out={out}", "--out={out}"),
        ("baseline", "nightly -o {out}", "-o"),
        ("baseline", "nightly\n'--summary' {out}", "--summary"),
        ("current", "-", "-"),
        ("current", "ci.jsonl -`x````", "-`x````"),  # the summary's fence outgrows the value's
    ],
)
def test_a_word_starting_with_a_dash_is_refused_not_an_option(work, name, text, word):
    out = work / "written.md"
    inputs = {"current": "ci.jsonl", "baseline": "nightly"}
    inputs[name] = text.format(out=out)
    run = run_action(work, **inputs)
    line = refused(run)
    assert not out.exists()
    assert line.startswith(f"gatecal: error: input '{name}' takes paths and glob patterns")
    assert repr(word.format(out=out)) in line and repr(inputs[name]) in line
    assert run.ran == ["python", "install"] and run.pip == []  # refused before installing


def test_a_file_named_with_a_dash_is_reached_by_dot_slash(work):
    (work / "ci.jsonl").rename(work / "-ci.jsonl")
    run = run_action(work, current="./-ci.jsonl", baseline="nightly")
    assert run.returncode == 0 and run.outputs["decision"] == "pass", run.stderr


def test_a_path_with_spaces_is_quoted_whole_and_unquoted_is_two_words(work):
    (work / "nightly").rename(work / "nightly runs")
    (work / "ci.jsonl").rename(work / "my ci.jsonl")
    run = run_action(work, current="'my ci.jsonl'", baseline='"nightly runs/night-*.jsonl"\n')
    assert run.returncode == 0 and run.outputs["decision"] == "pass", run.stderr
    unquoted = run_action(work, current="my ci.jsonl", baseline="nightly runs")
    assert unquoted.returncode == 2 and unquoted.outputs["decision"] == "error"
    assert one_error_line(unquoted).endswith("--baseline nightly: no such file, directory or match")


@pytest.mark.parametrize(
    ("text", "rule"),
    [("", "is empty"), (" \n\n  ", "is empty"), ("ci.jsonl ''", "holds an empty path"),
     ("'ci.jsonl", "has a quote that is never closed")],
)  # fmt: skip
def test_an_empty_or_broken_list_is_refused(work, text, rule):
    line = refused(run_action(work, current=text, baseline="nightly"))
    assert line.startswith(f"gatecal: error: input 'current' {rule}") and repr(text) in line


# --- single values: newlines and % -----------------------------------------------------------


def test_a_value_from_a_block_scalar_loses_its_newline(work):
    block = run_action(
        work, current="ci.jsonl", baseline="nightly", gate="0.90\n", max_errors=" 0\n"
    )
    plain = run_action(work, current="ci.jsonl", baseline="nightly", gate="0.90")
    assert block.returncode == plain.returncode == 0, block.stderr
    assert block.outputs == plain.outputs


@pytest.mark.parametrize(
    ("inputs", "option"),
    [({"gate": "%0Ak_min=0"}, "--gate"), ({"policy": "rerun-1\nk_min=0"}, "--policy"),
     ({"false-alarm": "5%"}, "--false-alarm"), ({"gate": "-1"}, "--gate")],
)  # fmt: skip
def test_a_newline_or_percent_in_a_value_is_one_error_line_and_no_output_of_its_own(
    work, inputs, option
):
    run = run_action(work, current="ci.jsonl", baseline="nightly", **inputs)
    assert run.returncode == 2 and run.outputs["decision"] == "error"
    assert run.steps["check"] == {"decision": "error"}  # nothing injected
    assert one_error_line(run).startswith(f"gatecal: error: {option}")


def test_a_percent_sign_in_a_value_or_a_path_is_itself(work):
    percent = run_action(work, current="ci.jsonl", baseline="nightly", gate="50%")
    rate = run_action(work, current="ci.jsonl", baseline="nightly", gate="0.50")
    assert percent.returncode == rate.returncode == 0 and percent.outputs == rate.outputs
    assert percent.outputs["k_min"] == "6"
    (work / "100%").mkdir()
    (work / "ci.jsonl").rename(work / "100%" / "ci%0A.jsonl")
    run = run_action(work, current="100%/ci%0A.jsonl", baseline="nightly")
    assert run.returncode == 0 and run.outputs["decision"] == "pass", run.stderr


def test_outputs_are_written_in_the_delimited_form(work, monkeypatch):
    run = run_action(work, current="ci.jsonl", baseline="nightly")
    assert run.returncode == 0
    for name in ("install", "check"):
        assert re.fullmatch(r"([a-z_]+<<(gatecal_[0-9a-f]{32})\n[^\n]*\n\2\n)+", run.raw[name])
    output = work / "github_output"
    output.write_text("")
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    _load_step().set_outputs({"decision": "pass\nk_min=0\nx<<y", "passed": "1%0A2"})
    assert read_github_output(output) == {"decision": "pass\nk_min=0\nx<<y", "passed": "1%0A2"}


def _load_step():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gatecal_action_step", ROOT / "action/step.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- python ----------------------------------------------------------------------------------


def test_setup_python_provides_the_python_unless_the_input_is_empty(work):
    run = run_action(work, current="ci.jsonl", baseline="nightly", python_version="")
    assert run.returncode == 0 and run.ran == ["install", "check"], run.stderr
    [(python, *_)] = run.pip
    assert python.endswith("runner/python3") and run.steps["install"]["python"] == python


def test_a_runner_python_older_than_3_11_is_one_error_line(work):
    run = run_action(
        work, current="ci.jsonl", baseline="nightly", python_version="", runner_version="3.10.12"
    )
    line = refused(run)
    assert line.startswith("gatecal: error: input 'python-version' is '' (the runner's python)")
    assert "3.11 or newer" in line and "3.10.12" in line and run.pip == []


def test_a_python_version_older_than_3_11_is_one_error_line(work):
    run = run_action(
        work, current="ci.jsonl", baseline="nightly", python_version="3.10", setup_version="3.10.16"
    )
    line = refused(run)
    assert line == (
        "gatecal: error: input 'python-version' must be 3.11 or newer, as gatecal requires "
        "(got '3.10', which is Python 3.10.16)"
    )


def test_a_failed_install_is_decision_error(work):
    run = run_action(work, current="ci.jsonl", baseline="nightly", pip_status=1)
    assert run.returncode == 1 and run.outputs["decision"] == "error"
    assert run.ran == ["python", "install"] and "pip could not install" in run.stderr


# --- extras ----------------------------------------------------------------------------------


def _pip_spec(run):
    [(_, *args)] = run.pip
    return args[-1]


def test_inspect_logs_install_the_frameworks_extra_and_are_read(work):
    loop = FIXTURES / "inspect_ai" / "loop"
    run = run_action(work, current=str(loop / "ci.eval"), baseline=str(loop / "baseline.eval"))
    assert _pip_spec(run) == f"{ROOT}[frameworks]"
    assert "installing the extras frameworks" in run.stdout
    # the logs were read and decided: 20 known-good runs are enough for the case-aware gate
    # (its two failing cases failed in 15 of them: the run passes)
    assert run.returncode == 0 and run.outputs["decision"] == "pass", run.stderr
    assert run.outputs["passed"] == "2"


def test_the_extras_come_from_folders_and_globs_too(work):
    logs = work / "logs" / "deep"
    logs.mkdir(parents=True)
    shutil.copy(FIXTURES / "inspect_ai" / "loop" / "baseline.eval", logs)
    table = work / "tables" / "nightly.parquet"
    table.parent.mkdir()
    subprocess.run([sys.executable, "-m", "gatecal", "runs", str(work / "nightly"), "--format",
                    "parquet", "--out", str(table)], check=True, capture_output=True)  # fmt: skip
    run = run_action(work, current="ci.jsonl", baseline="logs\ntables/*.parquet", extras="auto")
    assert _pip_spec(run) == f"{ROOT}[frameworks,parquet]"
    assert _pip_spec(run_action(work, current="ci.jsonl", baseline="tables/**/*.parquet")) == (
        f"{ROOT}[parquet]"
    )
    plain = run_action(work, current="ci.jsonl", baseline="tables/*.parquet", extras="none")
    assert _pip_spec(plain) == str(ROOT) and plain.returncode == 0, plain.stderr


def test_extras_named_or_a_custom_install(work):
    named = run_action(work, current="ci.jsonl", baseline="nightly", extras="parquet, frameworks")
    assert _pip_spec(named) == f"{ROOT}[frameworks,parquet]" and named.returncode == 0
    custom = run_action(
        work,
        current="x.eval",
        baseline="nightly",
        install="gatecal[frameworks] @ file:///srv/gatecal",
    )
    assert (
        _pip_spec(custom) == "gatecal[frameworks] @ file:///srv/gatecal"
    )  # as given, extras and all
    line = refused(run_action(work, current="ci.jsonl", baseline="nightly", extras="inspekt"))
    assert line.startswith("gatecal: error: input 'extras' must be 'auto', 'none' or extras")
    assert "'inspekt'" in line and "frameworks" in line
    both = run_action(
        work, current="ci.jsonl", baseline="nightly", extras="frameworks", install="x"
    )
    assert refused(both).startswith("gatecal: error: input 'extras' applies to this action's")


# --- case names in the outputs ----------------------------------------------------------------


def _renamed_runs(work, names):
    """The work's runs with cases renamed (`names`: old id -> new id)."""
    for path in [*work.joinpath("nightly").iterdir(), work / "ci.jsonl", work / "bad.jsonl"]:
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        for row in rows:
            row["case"] = names.get(row["case"], row["case"])
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def test_a_case_name_is_one_line_of_an_output_and_never_a_workflow_command(work):
    """A name holding a newline and a workflow command is one entry, escaped: it neither
    splits into two cases nor puts a command on a line of its own."""
    hostile = {"case-02": "a\n::error::X", "case-03": "b\r\n::add-mask::Y", "case-04": "::c"}
    _renamed_runs(work, hostile)
    run = run_action(work, current="bad.jsonl", baseline="nightly")
    assert run.returncode == 1 and run.outputs["decision"] == "fail", run.stderr
    listed = run.outputs["new_failures"].split("\n")
    assert listed[:3] == ["a\\n::error::X", "b\\r\\n::add-mask::Y", "\\x3a:c"]
    assert len(listed) == 7
    for line in [*listed, *run.stdout.splitlines(), *run.stderr.splitlines()]:
        assert not line.lstrip().startswith("::"), line


def test_k_min_is_empty_when_the_gate_is_not_a_count(work):
    """The case-aware gate has no count of passing cases: k_min is empty, not 0."""
    run = run_action(work, current="bad.jsonl", baseline="nightly", gate="cases")
    assert run.returncode == 1 and run.outputs["decision"] == "fail", run.stderr
    assert run.outputs["k_min"] == "" and run.outputs["passed"] == "5"
    count = run_action(work, current="bad.jsonl", baseline="nightly", gate="fails<=2")
    assert count.outputs["k_min"] == "10"


# --- the nightly half: repeat, record, recommend, keep the gate --------------------------------


def test_the_nightly_mode_records_recommends_and_check_decides_from_the_store(work):
    store = "history.db"  # a file here; a postgresql:// URL from a secret in a real workflow
    run = run_action(
        work,
        mode="nightly",
        repeat="cp nightly/night-2.jsonl repeated.jsonl",  # stands in for the suite's repeats
        runs="nightly/night-0.jsonl nightly/night-1.jsonl repeated.jsonl",
        store=store,
        judge="judge-1",
        build="nightly-7",
    )
    assert run.returncode == 0, run.stderr
    assert run.ran == ["python", "install", "repeat", "nightly"]
    assert run.outputs["decision"] == "recorded" and run.outputs["gate-file"] == "gate.json"
    gate = json.loads((work / "gate.json").read_text())
    assert gate["format"] == "gatecal.recommend"
    assert "recorded 30 known-good run(s)" in run.summary
    again = run_action(work, mode="nightly", runs="nightly", store=store, judge="judge-1",
                       build="nightly-8")  # fmt: skip
    assert again.returncode == 0 and "nothing new" in again.summary  # a retried job adds nothing
    decided = run_action(work, current="ci.jsonl", store=store, judge="judge-1",
                         gate_from="gate.json", record="true", build="ci-9")  # fmt: skip
    assert decided.returncode == 0, decided.stderr
    assert decided.outputs["decision"] == "pass"
    assert "baseline: 30 known-good runs" in decided.stderr
    assert "recorded 1 run(s)" in decided.stderr  # check --record, not as known-good


def test_the_nightly_mode_needs_a_store_and_a_judge(work):
    assert "input 'store' is empty" in refused(run_action(work, mode="nightly", runs="nightly"))
    no_judge = run_action(work, mode="nightly", runs="nightly", store="h.db", build="1")
    assert "input 'judge' is empty" in refused(no_judge)
    both = run_action(work, current="ci.jsonl", baseline="nightly", store="h.db")
    assert "can't be combined with 'store'" in refused(both)
