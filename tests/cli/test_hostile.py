"""Hostile and unusual input: one line and exit 2, never a traceback, never a silent pass.

Each class of defect found in the hostile-input pass has a test that tries many members of the
class; the last test is the standing guard, a Hypothesis fuzzer of every command's arguments.
"""

import json
import math
import os
import re
import stat
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import gatecal
from tests.conftest import run_cli
from tests.paths import ROOT

NIGHTLY = ROOT / "reports" / "nightly-junit"


def _one_error(args, message=None):
    code, out, err = run_cli(*args)
    assert code == 2 and out == "", (args, code, err)
    assert err.startswith("gatecal: error: ") and err.count("\n") == 1, (args, err)
    assert "Traceback" not in err
    if message is not None:
        assert message in err, (args, err)
    return err


# -- class 4: encodings ----------------------------------------------------------------

SPEC = {"format": "gatecal-suite/1", "cases": ["a", "b"],
        "checks": [{"name": "j", "kind": "judge"}],
        "truth": {"healthy": [[True], [True]], "regressed": [[True], [False]]}}  # fmt: skip

ENCODINGS = [
    ("utf-8", b""),
    ("utf-8", b"\xef\xbb\xbf"),
    ("utf-16", b""),  # Python's utf-16 codec writes the BOM itself
]


@pytest.mark.parametrize(("encoding", "prefix"), ENCODINGS)
def test_suite_specs_in_every_unicode_encoding_users_save(tmp_path, encoding, prefix):
    path = tmp_path / "spec.json"
    path.write_bytes(prefix + json.dumps(SPEC).encode(encoding))
    code, out, err = run_cli("simulate", "--suite", path, "--runs", "10")
    assert code == 0, err
    assert "suite: 2 cases" in out


@pytest.mark.parametrize(
    ("command", "name", "make"),
    [
        (["simulate", "--suite"], "spec.json", lambda: '{"cases": ["café"]}'.encode("latin-1")),
        (["golden", "--dataset"], "golden.json", lambda: '[{"id": "café"}]'.encode("cp1252")),
        (
            ["calibrate"],
            "labels.csv",
            lambda: "item,human,judge\ncafé,pass,pass\n".encode("latin-1"),
        ),
        (["recommend"], "runs.csv", lambda: "run,case,passed\nr1,café,true\n".encode("latin-1")),
        (["runs"], "runs.jsonl", lambda: b'{"run": "r1", "case": "\xff", "passed": true}\n'),
        (
            ["recommend"],
            "junit.xml",
            lambda: '<testsuite><testcase name="café"/></testsuite>'.encode("latin-1"),
        ),
    ],
)
def test_text_that_is_not_utf8_is_one_line_naming_the_byte(tmp_path, command, name, make):
    path = tmp_path / name
    path.write_bytes(make())
    err = _one_error([*command, path])
    assert name in err and ("byte offset" in err or "not well-formed" in err or "invalid" in err)


# -- class 5: options validated up front, in the CLI's words ---------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["report", "--out", "{tmp}/r", "--regression", "bogus"], "--regression must be"),
        (
            ["report", "--out", "{tmp}/r", "--regressed", "missing.csv"],
            "--regressed needs --runs-file",
        ),
        (["report", "--out", "{tmp}/r", "--observed", "3/4"], "--observed needs --labels"),
        (["plan", "--call-icc", "1"], "--call-icc must be a number in [0, 1)"),
        (["policies", "--seed", "-1"], "--seed must be a whole number >= 0 (got '-1')"),
        (["simulate", "--seed", "-5"], "--seed must be a whole number >= 0"),
        (
            ["simulate", "--judge-checks", "0", "--code-checks", "0"],
            "--judge-checks and --code-checks can't both be 0",
        ),
        (["simulate", "--icc", "1"], "--icc must be a number in [0, 1) (got '1')"),
        (["simulate", "--icc", "-0.1"], "--icc must be a number in [0, 1) (got '-0.1')"),
        (["recommend", NIGHTLY, "--confidence", "0"], "--confidence must be a number in (0, 1)"),
        (["recommend", NIGHTLY, "--confidence", "1"], "--confidence must be a number in (0, 1)"),
        (["recommend", NIGHTLY, "--confidence", "nan"], "--confidence must be a number in (0, 1)"),
        (["simulate", "--cases", "100000000"], "--cases must be at most 50,000"),
    ],
)
def test_options_are_checked_in_the_clis_words(tmp_path, args, message):
    args = [str(a).replace("{tmp}", str(tmp_path)) for a in args]
    _one_error(args, message)
    assert not (tmp_path / "r").exists()


# -- class 6: odd but legal-looking text ----------------------------------------------

# superscript two, Arabic-Indic three, fullwidth twelve, a minus sign, a no-break space
ODD = ["²", "٣", "1_000", "\uff11\uff12", "3.0", "0x10", "1e3", "\u22121", "\u00a05", "", " ", "NaN",
       "inf"]  # fmt: skip


@pytest.mark.parametrize("value", ODD)
@pytest.mark.parametrize(
    "option",
    [
        ["simulate", "--cases"],
        ["simulate", "--runs"],
        ["simulate", "--gates"],
        ["plan", "--regression"],
        ["simulate", "--flip"],
        ["policies", "--policies"],
        ["simulate", "--gates", "0.8,fails<="],
    ],
)
def test_odd_numbers_never_trace_back(option, value):
    args = [*option[:-1], option[-1] + value] if option[-1].endswith("<=") else [*option, value]
    code, _, err = run_cli(*[*args, "--runs", "10"] if "--runs" not in args else args)
    assert code in (0, 2) and "Traceback" not in err
    if code == 2:
        assert err.count("\n") == 1
    if code == 0:
        assert value.strip() not in ODD[:2] + ODD[3:4]  # no Unicode digit is taken as a number


# -- class 8: misleading output --------------------------------------------------------


def test_case_names_cannot_inject_markup_or_control_the_terminal(tmp_path):
    runs = tmp_path / "runs.csv"
    names = ["<script>alert(1)</script>", "evil\x1b[2J", "a|b", "ok"]
    rows = [f"r{r},{json.dumps(n)},{'false' if (7 * r + i) % 11 == 0 else 'true'}"
            for r in range(20) for i, n in enumerate(names)]  # fmt: skip
    runs.write_text("run,case,passed\n" + "\n".join(rows) + "\n")
    code, out, _ = run_cli("recommend", runs, "--format", "markdown", "--regression", "1")
    assert code == 0
    assert "<script>" not in out and "&lt;script&gt;" in out and "a\\|b" in out
    report = tmp_path / "report"
    code, _, err = run_cli("report", "--out", report, "--runs-file", runs, "--regression", "1",
                         "--runs", "20")  # fmt: skip
    assert code == 0, err
    index = (report / "index.md").read_text()
    # recommend's own output is quoted in a fenced block, where markdown shows it as text
    outside = re.sub(r"^(```|~~~~)text\n.*?^\1$", "", index, flags=re.S | re.M)
    assert "<script>" not in outside and "```text" in index
    assert "<script>alert" not in (report / "index.html").read_text()
    from gatecal._common.tables import safe_terminal

    assert safe_terminal("evil\x1b[2J\u202e") == "evil\\x1b[2J\\u202e"
    err = _one_error(["simulate", "--gates", "0.5,\x1b[31mred"])
    assert "\x1b" not in err and "\\x1b" in err


def test_a_measured_suite_does_not_claim_a_flip_rate(tmp_path):
    spec = tmp_path / "measured.json"
    code, _, _ = run_cli("recommend", NIGHTLY, "--regression", "3", "--export-suite", spec,
                       "--out", tmp_path / "rec.txt")  # fmt: skip
    assert code == 0
    code, out, _ = run_cli("simulate", "--suite", spec, "--flip", "0.5", "--runs", "20")
    assert code == 0 and "50% of judge verdicts flipped" not in out
    assert "--flip 0.5 does not apply" in out


def test_grammar_of_one():
    code, out, _ = run_cli("simulate", "--cases", "4", "--failing", "1", "--runs", "10")
    assert code == 0 and "1 case fails a code check" in out
    text = gatecal.render_recommendation(
        gatecal.recommend_gate(gatecal.read_runs([NIGHTLY / "night-00.xml"]), regression="3")
    )
    assert "1 known-good run of" in text and "1 known-good runs" not in text


# -- class 9: the API's promise --------------------------------------------------------


SUITE = gatecal.Suite.uniform(cases=3)
NOISE = gatecal.JudgeNoise.flip(0.1)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: gatecal.render(gatecal.simulate_gates(SUITE, n_runs=5), "xml"),
            "`fmt` must be one of",
        ),
        (
            lambda: gatecal.simulate_gates(SUITE, n_runs=5, confidence_level=1),
            "`confidence_level` must be a number in (0, 1)",
        ),
        (
            lambda: gatecal.binomial_interval(10, 0.5, 1.0),
            "`confidence_level` must be a number in (0, 1)",
        ),
        (
            lambda: gatecal.simulate_gates("suite", n_runs=5),
            "`suite` must be a gatecal.Suite (got 'str')",
        ),
        (
            lambda: gatecal.simulate_gates(SUITE, flips="0.1", n_runs=5),
            "`flips` must be a sequence of numbers",
        ),
        (
            lambda: gatecal.exact_pass_counts(SUITE, "healthy", "0.1"),
            "`noise` must be a gatecal.JudgeNoise (got 'str')",
        ),
        (
            lambda: gatecal.exact_pass_counts(None, "healthy", NOISE),
            "`suite` must be a gatecal.Suite (got 'NoneType')",
        ),
        (
            lambda: gatecal.simulate_pass_counts(SUITE, "healthy", {"fnr": 0.1}, n_runs=5),
            "`noise` must be a gatecal.JudgeNoise",
        ),
        (
            lambda: gatecal.plan_suite(noise=0.1, regression="0.1"),
            "`noise` must be a gatecal.JudgeNoise (got 'float')",
        ),
        (lambda: gatecal.recommend_gate("runs.csv"), "`data` must be a gatecal.RunsData"),
        (lambda: gatecal.read_runs("runs.csv"), "`paths` must be a list of files"),
        (lambda: gatecal.read_runs([NIGHTLY], attempts="all"), "attempts must be first or last"),
        (
            lambda: gatecal.proportion_interval(3, 10, 1.5),
            "`confidence_level` must be a number in [0, 1]",
        ),
        (lambda: gatecal.parse_regression("²"), "`regression` must be"),
        (lambda: gatecal.parse_gate("fails<=²"), "fails<=F needs a whole number"),
        (lambda: gatecal.JudgeNoise(fnr=float("nan"), fpr=0.1), "`fnr` must be a number in [0, 1]"),
    ],
)
def test_public_functions_refuse_bad_arguments_with_their_own_errors(call, message):
    with pytest.raises((gatecal.ParameterError, gatecal.RunsError)) as caught:
        call()
    assert message in str(caught.value)


# -- the standing guard: a fuzzer of every command -------------------------------------

VALUES = {
    "number": [
        "0",
        "1",
        "0.5",
        "0.03,0.08",
        "-1",
        "1e-300",
        "1.5",
        "nan",
        "inf",
        "²",
        "٣",
        "abc",
        "",
        " ",
        "1" * 40,
        "0x1",
        "12abc",
        "3/4",
        "%",
        "∞",
    ],
    "count": ["0", "1", "2", "12", "-3", "1.5", "²", "1_0", "", "abc", "9" * 30, "100000000"],
    # run counts that are quick to simulate, or refused at once (legal but long work is
    # the benchmarks' business, not the fuzzer's)
    "runs": ["0", "1", "30", "-3", "1.5", "²", "", "abc", "9" * 30, "10000000001"],
    "text": [
        "all",
        "0.90",
        "fails<=2",
        "rate>=0.8",
        "majority-3",
        "single",
        "repeat-2-of-3",
        "csv",
        "json",
        "table",
        "markdown",
        "first",
        "last",
        "junit",
        "two-sided",
        "holm",
        "sprt-5",
        "pass^3",
        "auto",
        "none",
        "\x00",
        "\x1b[2J",
        "<script>",
        "é" * 300,
        "../../etc/passwd",
        "-",
        "--",
        "'",
        '"',
    ],
}
OPTIONS = {
    "simulate": {"--cases": "count", "--flip": "number", "--runs": "runs", "--seed": "count",
                 "--gates": "text", "--judge-checks": "count", "--code-checks": "count",
                 "--failing": "count", "--format": "text", "--icc": "number", "--fpr": "number",
                 "--unparseable": "number"},
    "plan": {"--flip": "number", "--regression": "number", "--false-alarm": "number",
             "--detection": "number", "--max-cases": "runs", "--policies": "text",
             "--format": "text", "--call-icc": "number"},
    "policies": {"--flip": "number", "--gates": "text", "--policies": "text", "--runs": "runs",
                 "--seed": "count", "--format": "text", "--cases": "count"},
    "recommend": {"--regression": "number", "--false-alarm": "number", "--detection": "number",
                  "--confidence": "number", "--interval": "text", "--format": "text",
                  "--attempts": "text", "--junit-repeats": "text", "--partial": "text",
                  "--input-format": "text", "--threshold": "text", "--target": "text",
                  "--score-threshold": "text"},
    "runs": {"--format": "text", "--attempts": "text", "--input-format": "text",
             "--junit-repeats": "text", "--threshold": "text", "--score-threshold": "text"},
    "golden": {"--build": "text", "--threshold": "number", "--pass-rate": "number",
               "--format": "text", "--judge": "text"},
    "check": {"--gate": "text", "--false-alarm": "number", "--policy": "text",
              "--max-errors": "count", "--flaky-rate": "number", "--confidence": "number",
              "--format": "text", "--interval": "text", "--attempts": "text",
              "--score-threshold": "text"},
    "compare": {"--alpha": "number", "--alternative": "text", "--multiplicity": "text",
                "--format": "text", "--test": "text", "--regression": "number",
                "--oc-samples": "count"},
}  # fmt: skip
#: commands whose exit 1 is a decision (the gate failed, a regression, incomplete evidence)
DECIDES = {"check", "compare"}
PATHS = ["new", "regular", "devnull", "directory", "missing-dir", "symlink", "input", "proc"]
SMALL = {"simulate": ["--runs", "30"], "policies": ["--runs", "30"], "plan": ["--max-cases", "60"]}


@st.composite
def _argv(draw):
    command = draw(st.sampled_from(sorted(OPTIONS)))
    argv = [command]
    if command in ("recommend", "runs"):
        argv.append("{runs}")
    elif command == "check":
        argv += ["{ci}", "--baseline", "{runs}"]
    elif command == "compare":
        argv += ["--baseline", "{runs}", "--candidate", "{ci}", "--oc-samples", "20"]
    argv += SMALL.get(command, [])
    for option in draw(
        st.lists(st.sampled_from(sorted(OPTIONS[command])), max_size=4, unique=True)
    ):
        argv += [option, draw(st.sampled_from(VALUES[OPTIONS[command][option]]))]
    if draw(st.booleans()):
        argv += ["--out", "{path:" + draw(st.sampled_from(PATHS)) + "}"]
    return argv


def _place(kind: str, folder: Path) -> str:
    path = folder / "out.txt"
    if kind == "regular":
        path.write_text("precious")
    elif kind == "devnull":
        return "/dev/null"
    elif kind == "directory":
        path.mkdir()
    elif kind == "missing-dir":
        return str(folder / "no" / "out.txt")
    elif kind == "symlink":
        (folder / "real.txt").write_text("precious")
        path.symlink_to(folder / "real.txt")
    elif kind == "input":
        return str(folder / "runs" / "night-00.xml")
    elif kind == "proc":
        return "/proc/self/status"
    return str(path)


def _state(folder: Path) -> dict[str, object]:
    out: dict[str, object] = {}
    for p in sorted(folder.rglob("*")):
        kind = "link" if p.is_symlink() else "dir" if p.is_dir() else "file"
        out[str(p.relative_to(folder))] = (kind, p.read_bytes() if kind == "file" else None)
    return out


@settings(max_examples=int(os.environ.get("GATECAL_FUZZ_EXAMPLES", "120")), deadline=None,
          derandomize=not os.environ.get("GATECAL_FUZZ_RANDOM"),
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])  # fmt: skip
@given(argv=_argv())
def test_fuzz_every_command_keeps_the_contract(tmp_path_factory, argv):
    """Exit 0 or 2; on 2 one stderr line, no traceback; nothing written but the declared
    output; no path turned into something it was not. GATECAL_FUZZ_EXAMPLES=5000
    GATECAL_FUZZ_RANDOM=1 runs a longer, random search on demand."""
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "runs").mkdir()
    for night in sorted(NIGHTLY.iterdir())[:8]:
        (folder / "runs" / night.name).write_bytes(night.read_bytes())
    ci = folder / "ci.xml"  # a later run, not one of the baseline's files
    ci.write_bytes(sorted(NIGHTLY.iterdir())[8].read_bytes())
    out_path = None
    resolved = []
    for arg in argv:
        if arg.startswith("{path:"):
            out_path = _place(arg[6:-1], folder)
            arg = out_path
        resolved.append(arg.replace("{runs}", str(folder / "runs")).replace("{ci}", str(ci)))
    before = _state(folder)
    if os.environ.get("GATECAL_FUZZ_LOG"):  # the argument vector, before it runs
        with open(os.environ["GATECAL_FUZZ_LOG"], "a", encoding="utf-8") as log:
            log.write(repr(resolved) + "\n")
    null_mode = os.stat("/dev/null").st_mode
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        code, _, err = run_cli(*resolved)
    finally:
        os.chdir(cwd)
    assert code in ((0, 1, 2) if argv[0] in DECIDES else (0, 2)), (resolved, code, err)
    assert "Traceback" not in err, (resolved, err)
    assert os.stat("/dev/null").st_mode == null_mode and stat.S_ISCHR(null_mode)
    after = _state(folder)
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    if code == 2:
        assert err.count("\n") == 1, (resolved, err)
        assert changed == set(), (resolved, changed)
        return
    allowed = set()
    if out_path is not None and out_path.startswith(str(folder)):
        allowed = {str(Path(os.path.realpath(out_path)).relative_to(folder))}
    assert changed <= allowed, (resolved, changed)
    for key in changed:  # the output kept its kind (a symlink's target is what changed)
        assert before.get(key, ("file", None))[0] == after[key][0]


# -- class 7: a judge endpoint that accepts and never answers --------------------------


def test_a_silent_judge_endpoint_is_one_error_within_the_timeout():
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept_and_say_nothing():
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept_and_say_nothing, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        err = _one_error(["golden", "--judge", "openai", "--base-url", url, "--timeout", "0.3"])
        assert "golden run failed" in err
        assert len(held) == 2  # the call and its one retry, each given up after 0.3 s
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        listener.close()
    _one_error(["golden", "--timeout", "0"], "--timeout must be a number of seconds in (0, 3600]")


# -- class 3: every engine exact and finite over the whole domain ----------------------

FLIPS = [0.0, 1e-300, 1e-17, 0.03, 0.5, 1 - 1e-16, 1.0]
ICCS = [0.0, 1e-300, 1e-120, 1e-60, 1e-6, 1e-4, 5e-4, 0.1, 0.5, 1 - 1e-9]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    flip=st.sampled_from(FLIPS),
    icc=st.sampled_from(ICCS),
    build=st.sampled_from(["healthy", "regressed"]),
)
def test_exact_engine_is_finite_and_a_distribution_everywhere(flip, icc, build):
    suite = gatecal.Suite.uniform(cases=12)
    noise = gatecal.JudgeNoise(fnr=flip, fpr=flip, icc=icc)
    pmf = np.asarray(gatecal.exact_pass_counts(suite, build, noise).pmf)
    assert np.all(np.isfinite(pmf)) and np.all(pmf >= 0)
    assert abs(pmf.sum() - 1) < 1e-9
    sample = gatecal.simulate_pass_counts(suite, build, noise, n_runs=200, rng=1)
    assert sum(sample.counts) == 200


def test_degenerate_rates_have_their_obvious_answers():
    suite = gatecal.Suite.uniform(cases=12)
    for icc in (0.0, 0.1):
        never = gatecal.exact_pass_counts(
            suite, "healthy", gatecal.JudgeNoise(fnr=0.0, fpr=0.0, icc=icc)
        )
        assert never.pmf[-1] == 1.0 and never.failure_probability(12) == 0.0
        always = gatecal.exact_pass_counts(
            suite, "healthy", gatecal.JudgeNoise(fnr=1.0, fpr=1.0, icc=icc)
        )
        assert always.pmf[0] == 1.0 and always.failure_probability(1) == 1.0


def test_tiny_flip_rates_keep_their_tails():
    from fractions import Fraction

    suite = gatecal.Suite.uniform(cases=12)
    dist = gatecal.exact_pass_counts(suite, "healthy", gatecal.JudgeNoise(fnr=1e-17, fpr=1e-17))
    p = Fraction(1e-17)  # the float's exact value
    reference = 1 - (1 - p) ** 24  # all 24 judge verdicts pass: python -c as here
    assert dist.failure_probability(12) == pytest.approx(float(reference), rel=1e-12)
    q = (1 - p) ** 2
    two_fail = sum(Fraction(math.comb(12, k)) * q**k * (1 - q) ** (12 - k) for k in range(11))
    assert dist.failure_probability(11) == pytest.approx(float(two_fail), rel=1e-9)


@pytest.mark.parametrize("icc", [1e-6, 1e-4, 5e-4])
def test_small_icc_moves_the_binomial_by_at_most_its_second_order_bound(icc):
    """Where scipy's Gauss-Jacobi rule returns NaN (a + b near 1e3 and up), the Jacobi
    matrix rule takes over; the mixture must sit next to the binomial, by O(d^2 icc)."""
    suite = gatecal.Suite.uniform(cases=12)
    plain = np.asarray(
        gatecal.exact_pass_counts(suite, "healthy", gatecal.JudgeNoise.flip(0.03)).pmf
    )
    mixed = np.asarray(
        gatecal.exact_pass_counts(
            suite, "healthy", gatecal.JudgeNoise(fnr=0.03, fpr=0.03, icc=icc)
        ).pmf
    )
    assert np.all(np.isfinite(mixed))
    # relative change of P(k of 24 verdicts fail) is at most (k^2 (1-p)/p + (24-k)^2 p/(1-p)) icc/2
    bound = (24**2 / 0.03 + 24**2) * icc
    mask = plain > 1e-200
    assert np.all(np.abs(mixed[mask] / plain[mask] - 1) <= bound)
    assert np.any(mixed != plain)  # the correlation is not dropped at these sizes


@pytest.mark.parametrize(
    "args",
    [
        ["--flip", "0", "--icc", "0.1"],
        ["--flip", "1", "--icc", "0.1"],
        ["--icc", "0.0005"],
        ["--icc", "1e-300"],
        ["--icc", "0.5"],
        ["--flip", "1e-17"],
    ],
)
def test_degenerate_noise_on_the_command_line(args):
    code, out, err = run_cli("simulate", *args, "--runs", "50")
    assert code == 0 and err == "", err
    assert "nan" not in out.lower()


# -- issue 36: the small ones -------------------------------------------------------------


def test_plan_refuses_a_false_alarm_budget_below_its_documented_floor():
    """Before: --false-alarm 1e-300 searched for about 100 s with no end in sight."""
    err = _one_error(["plan", "--false-alarm", "1e-300"], "--false-alarm must be at least 1e-12")
    assert "(got 1e-300)" in err


def test_a_bad_policy_with_regression_is_a_policy_error(tmp_path):
    """Before: "--regression needs a sequential --policy" for a misspelt --policy rerun-x."""
    runs = tmp_path / "r.jsonl"
    runs.write_text(json.dumps({"run": "r", "case": "c", "passed": True}) + "\n")
    err = _one_error(["check", runs, "--baseline", runs, "--policy", "rerun-x",
                      "--regression", "2"])  # fmt: skip
    assert "--policy" in err and "--regression needs" not in err


def test_a_current_file_named_twice_is_not_called_known_good(tmp_path):
    runs = tmp_path / "r.jsonl"
    runs.write_text(json.dumps({"run": "r", "case": "c", "passed": True}) + "\n")
    base = tmp_path / "b.jsonl"
    base.write_text(runs.read_text())
    err = _one_error(["check", runs, runs, "--baseline", base], "named twice")
    assert "known-good" not in err and err.startswith(f"gatecal: error: CURRENT {runs}")


def test_a_list_typed_parquet_column_is_refused_not_read_as_text(tmp_path):
    """Before: a run column of lists read as run ids like "['b0']"."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "lists.parquet"
    pq.write_table(pa.table({"run": [["b0"], ["b1"]], "case": ["c", "c"],
                             "passed": [True, False]}), path)  # fmt: skip
    _one_error(["runs", path], "column run must hold text, numbers or booleans")


# -- issue 47: names that would be commands, unbounded reads, duplicate columns -----------

#: Names a pull request's own tests can carry into a CI log: a newline and a workflow
#: command, a carriage return, a name that is a command itself, the older command form.
COMMANDS = ["a\n::error::X", "b\r::add-mask::Y", "::warning::Z", "##[error]W", "ok"]


def _hostile_runs(folder: Path) -> tuple[Path, Path]:
    """30 known-good runs of the COMMANDS cases and 12 plain ones (case-00 flaky), and a
    current run where every COMMANDS case fails (each one new)."""
    plain = [f"case-{i:02d}" for i in range(12)]
    rows = [
        {"run": f"night-{r:02d}", "case": c, "passed": c != "case-00" or r % 3 != 0}
        for r in range(30)
        for c in [*COMMANDS, *plain]
    ]
    base = folder / "base.jsonl"
    base.write_text("".join(json.dumps(x) + "\n" for x in rows))
    cur = folder / "cur.jsonl"
    cur.write_text(
        "".join(
            json.dumps({"run": "ci", "case": c, "passed": c not in COMMANDS}) + "\n"
            for c in [*COMMANDS, *plain]
        )
    )
    return base, cur


def _no_command_lines(text: str) -> None:
    """No line a CI runner would read as a workflow command (it trims leading blanks)."""
    for line in text.splitlines():
        assert not line.lstrip().startswith(("::", "##[")), line
    assert "\r" not in text


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_no_case_name_starts_a_line_of_text_whatever_stdout_is(tmp_path, fmt):
    """check, recommend, runs and compare print names with their control characters as
    escapes when stdout is a pipe (as in CI), and no name starts a line as a command."""
    base, cur = _hostile_runs(tmp_path)
    for args in (
        ["check", cur, "--baseline", base],
        ["check", cur, "--baseline", base, "--gate", "count"],
        ["recommend", base],
        ["runs", base],
        ["compare", "--baseline", base, "--candidate", cur],
    ):
        code, out, err = run_cli(*args, "--format", fmt)
        assert code in (0, 1), err
        _no_command_lines(out)
        _no_command_lines(err)
        if fmt == "table" and args[0] != "recommend":  # recommend names its flakiest only
            assert "a\\n::error::X" in out, (args, out)
    code, out, err = run_cli("check", cur, "--baseline", base, "--format", "junit")
    assert code == 1, err
    _no_command_lines(out)  # the XML a CI reporter reads, and a log shows


def test_a_case_name_cannot_break_out_of_the_reports_markdown(tmp_path):
    """A name with a newline and a fence line (tilde or backtick) closed the report's block
    of recommend's output, and raw HTML, a heading and a comment landed in index.md."""
    from markdown_it import MarkdownIt

    names = [
        "x\n~~~~\n<img src=x onerror=alert(1)>",
        "y\n```\n<script>alert(2)</script>\n# heading",
        "z\n````\n<!-- comment",
        "ok",
    ]
    rows = [
        {"run": f"r{r}", "case": n, "passed": (7 * r + i) % 11 != 0}
        for r in range(20)
        for i, n in enumerate(names)
    ]
    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(json.dumps(x) + "\n" for x in rows))
    report = tmp_path / "report"
    code, _, err = run_cli("report", "--out", report, "--runs-file", runs, "--regression", "1",
                           "--runs", "20")  # fmt: skip
    assert code == 0, err
    index = (report / "index.md").read_text()
    tokens = MarkdownIt("commonmark", {"html": True}).enable("table").parse(index)
    html = [t for t in tokens if t.type == "html_block"]
    html += [c for t in tokens for c in t.children or () if c.type == "html_inline"]
    assert html == []
    headings = [tokens[j + 1].content for j, t in enumerate(tokens) if t.type == "heading_open"]
    assert "heading" not in headings
    assert "<script>alert" not in (report / "index.html").read_text()


def _bounded_run(args, cwd):
    """gatecal ARGS in a process of its own, limited to 1 GiB of memory and 60 s: an input
    read without bound ran out of one (a MemoryError traceback) or blocked (a FIFO)."""
    import resource
    import subprocess
    import sys

    def limit():  # pragma: no cover - in the child
        resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30))

    return subprocess.run(
        [sys.executable, "-m", "gatecal", *map(str, args)],
        cwd=cwd, capture_output=True, text=True, timeout=60, preexec_fn=limit,
    )  # fmt: skip


@pytest.mark.parametrize("device", ["/dev/zero", "fifo"])
@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["check", "cur.jsonl", "--baseline", "base.jsonl", "--gate-from", "{}"], "--gate-from"),
        (["calibrate", "{}"], "LABELS"),
        (["simulate", "--suite", "{}"], "--suite"),
        (["check", "{}", "--baseline", "base.jsonl"], "CURRENT"),
    ],
)
def test_an_input_that_is_not_a_regular_file_is_refused_not_read(tmp_path, device, args, option):
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero here")
    _hostile_runs(tmp_path)
    if device == "fifo":
        os.mkfifo(tmp_path / "fifo")  # nobody writes it: a read blocks for ever
    proc = _bounded_run([a.format(device) for a in args], tmp_path)
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr[-500:]
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith(f"gatecal: error: {option}")
    assert "not a regular file" in proc.stderr and "Traceback" not in proc.stderr


def test_an_input_over_its_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    from gatecal._common import files

    gate = tmp_path / "gate.json"
    gate.write_text(json.dumps({"format": "gatecal.recommend", "padding": "x" * 2000}))
    monkeypatch.setattr(files, "GATE_FILE_MAX_BYTES", 1000)
    with pytest.raises(
        gatecal.ParameterError, match=r"holds 2,0[0-9]* bytes, over the 1,000 bytes"
    ):
        gatecal.load_recommended_gate(gate)
    with pytest.raises(files.InputFileError, match="holds 2,0"):
        files.read_limited(gate, 1000)
    assert files.read_limited(gate, 5000) == gate.read_bytes()


def test_a_ci_run_spelling_an_id_in_nfd_is_not_missing_from_an_nfc_baseline(tmp_path):
    """NFC and NFD spellings of one id were two cases, listed identically as missing and
    as not in the baseline: the run was incomplete."""
    import unicodedata

    nfc = unicodedata.normalize("NFC", "réponse-naïve")
    cases = [f"case-{i:02d}" for i in range(10)] + [nfc]
    base = tmp_path / "base.jsonl"
    base.write_text(
        "".join(
            json.dumps({"run": f"n{r}", "case": c, "passed": c != "case-00" or r % 3 != 0}) + "\n"
            for r in range(30)
            for c in cases
        )
    )
    cur = tmp_path / "cur.jsonl"
    spelled = [unicodedata.normalize("NFD", c) for c in cases]
    cur.write_text(
        "".join(json.dumps({"run": "ci", "case": c, "passed": True}) + "\n" for c in spelled)
    )
    code, out, err = run_cli("check", cur, "--baseline", base)
    assert code == 0, out + err
    assert "11 of 11 cases passed" in out and "not in the baseline" not in out
