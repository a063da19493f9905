"""gatecal's pytest plugin: a calibrated pass-rate gate on the tests marked ``gatecal``.

Registered through the ``pytest11`` entry point (off with ``-p no:gatecal``). Without
one of its options it only registers the ``gatecal`` marker and the
``gatecal_verdicts`` fixture, and changes nothing.

``--gatecal-gate RULE`` / ``--gatecal-gate-from FILE`` (ini: ``gatecal_gate``,
``gatecal_gate_from``)
    Failures of marked tests are judged together at the end of the session: exit 0 when
    the gate passes although marked tests failed, 1 when it fails. Failures of unmarked
    tests are never tolerated, exit codes 2 and above are never changed, and incomplete
    evidence (``-x``/``--maxfail`` stopping early, marked tests deselected, skipped or
    errored, fewer verdicts than marked tests) fails.
``--gatecal-repeat N``
    Runs every marked test N times (ids ``[...-gatecal-rI]``, the same on every xdist
    worker); repeat I is run ``<run>#I``. For measuring a baseline, not with a gate.
``--gatecal-sequential FILE`` with ``--gatecal-repeat N``
    A sequential gate across the N repeats (one run per look), its boundaries read from
    FILE (see :mod:`gatecal.pytest_plugin.sequential`): exit 0 pass, 1 fail or CONTINUE (no
    boundary crossed in N repeats: incomplete evidence). Without xdist it stops the
    session at the first decision.
``--gatecal-runs-out PATH``
    Writes every verdict as gatecal's long JSONL table, atomically, on the xdist
    controller only; ``gatecal recommend PATH`` reads it. The run is named
    ``--gatecal-run NAME`` (default: the file's stem).

``--junitxml`` (written by pytest) gains the gate's decision once it is decided: a testcase
``gatecal.gate``, failed with the decision line as its message when the gate failed or the
evidence was incomplete; when the gate passed and the session exits 0, the marked failures it
tolerated are written as skipped (``type="gatecal.tolerated"``, the judge's message kept), so
CI's JUnit reporters count no failure for a build the gate accepted;
``--gatecal-keep-failures`` (ini ``gatecal_keep_failures``) keeps them as failures. See
:mod:`gatecal.pytest_plugin.junit`.

Needs pytest only: pytest-xdist's hook is optional. A case is the marker's ``case=``, else
the test's id with its path taken from pytest's rootdir when a configuration file (or
``--rootdir``) fixes it, else from the project's top directory (the nearest holding
``.git``, ``pyproject.toml``, ``setup.py``, ...), so the same test has the same case
wherever pytest is started and a baseline measured from one directory fits a CI run
started from another.

Every verdict also travels in ``item.user_properties`` as ``gatecal.case``,
``gatecal.repeat`` and ``gatecal.verdicts`` (a JSON list), so ``--junitxml`` carries it
and gatecal's JUnit reader prefers it over test names. A test rerun by
pytest-rerunfailures keeps its first attempt's verdicts: a failure hidden by a rerun
still counts as a failure.

This module imports nothing heavy: the gate is a count, and the numbers quoted from a
``recommend`` output are read from its JSON.

The package, as pytest-xdist lays out its own: this module holds the options, the marker,
``pytest_configure`` and the fixture; :mod:`~gatecal.pytest_plugin.recorder` the verdict
recorder; :mod:`~gatecal.pytest_plugin.session` the session, loaded only when an option is
active; :mod:`~gatecal.pytest_plugin.results` each marked test's result and the one
evidence rule applied to them; :mod:`~gatecal.pytest_plugin.runs` the runs writer;
:mod:`~gatecal.pytest_plugin.junit` and :mod:`~gatecal.pytest_plugin.sequential` the
decision in ``--junitxml`` and the sequential gate.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gatecal.pytest_plugin.recorder import RECORDER, GatecalVerdicts

__all__ = ["GatecalVerdicts", "gatecal_verdicts"]

MARKER = "gatecal"
_PREFIX = "gatecal."
_REPEAT_ARG = "_gatecal_repeat"


@pytest.fixture
def gatecal_verdicts(request: pytest.FixtureRequest) -> GatecalVerdicts:
    """Record per-check verdicts when one gated test runs several checks."""
    recorder = GatecalVerdicts()
    request.node.stash[RECORDER] = recorder
    return recorder


# -- options ---------------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("gatecal", "gatecal: a calibrated pass-rate gate on marked tests")
    group.addoption(
        "--gatecal-gate",
        dest="gatecal_gate",
        metavar="RULE",
        default=None,
        help="Judge the failures of tests marked gatecal together with this gate: "
        "'all', a pass rate such as 0.90, or 'fails<=F'.",
    )
    group.addoption(
        "--gatecal-gate-from",
        dest="gatecal_gate_from",
        metavar="FILE",
        default=None,
        help="Use the gate a 'gatecal recommend --format json' output recommends.",
    )
    group.addoption(
        "--gatecal-repeat",
        dest="gatecal_repeat",
        metavar="N",
        default=None,
        help="Run every marked test N times (to measure a baseline).",
    )
    group.addoption(
        "--gatecal-sequential",
        dest="gatecal_sequential",
        metavar="FILE",
        default=None,
        help="A sequential gate across --gatecal-repeat N repeats: its boundaries from a "
        "'gatecal check --policy sprt-MAX --format json' output; stops once it decides.",
    )
    group.addoption(
        "--gatecal-runs-out",
        dest="gatecal_runs_out",
        metavar="PATH",
        default=None,
        help="Write every verdict as gatecal's long JSONL table (for 'gatecal recommend').",
    )
    group.addoption(
        "--gatecal-run",
        dest="gatecal_run",
        metavar="NAME",
        default=None,
        help="The run's name in --gatecal-runs-out (default: the file's stem).",
    )
    group.addoption(
        "--gatecal-keep-failures",
        dest="gatecal_keep_failures",
        action="store_true",
        default=None,
        help="In --junitxml, keep the failures a passing gate tolerated as failures "
        "(default: reported as skipped, with the judge's message).",
    )
    parser.addini("gatecal_gate", "The gate rule, as --gatecal-gate.", default=None)
    parser.addini(
        "gatecal_keep_failures",
        "As --gatecal-keep-failures.",
        type="bool",
        default=False,
    )
    parser.addini(
        "gatecal_gate_from",
        "A recommend JSON output, as --gatecal-gate-from (relative to the ini file).",
        default=None,
    )


@dataclass(frozen=True, slots=True)
class _Settings:
    gate: Any  # gatecal._model.gates.Gate, gatecal._analyses.check.gate.RecommendedGate or None
    repeat: int
    runs_out: Path | None
    run: str
    sequential: Any = None  # gatecal.pytest_plugin.sequential.SequentialRule or None

    @property
    def active(self) -> bool:
        return self.gate is not None or self.repeat > 0 or self.runs_out is not None


def _settings(config: pytest.Config) -> _Settings:
    """Read and check the options; a bad one is a usage error (exit 4) naming it."""
    from gatecal._common.validate import ParameterError

    rule = config.getoption("gatecal_gate")
    rule_option = "--gatecal-gate"
    if rule is None and config.getini("gatecal_gate"):
        rule, rule_option = config.getini("gatecal_gate"), "gatecal_gate (ini)"
    source = config.getoption("gatecal_gate_from")
    source_option = "--gatecal-gate-from"
    if source is None and config.getini("gatecal_gate_from"):
        base = config.inipath.parent if config.inipath else config.rootpath
        source = str(base / config.getini("gatecal_gate_from"))
        source_option = "gatecal_gate_from (ini)"
    if rule is not None and source is not None:
        raise pytest.UsageError(
            f"gatecal: {rule_option} can't be combined with {source_option} (got {rule!r})"
        )
    out = config.getoption("gatecal_runs_out")
    runs_out = None if out is None else Path(out)
    if runs_out is not None:
        # never an input (the gate file) and never another output (--junitxml)
        _check_runs_out(runs_out, [source] if source else [], config.option.xmlpath)
    gate: Any = None
    try:
        if rule is not None:
            from gatecal._model.gates import parse_gate

            gate = parse_gate(str(rule))
        elif source is not None:
            from gatecal._model.gatefile import load_recommended_gate

            gate = load_recommended_gate(source)
            if gate.policy != "single":  # one session is one run: no rule over runs
                rule = (
                    f"chose the per-case rule {gate.policy!r}, which the plugin does not apply "
                    "to one session's run: gate the runs with 'gatecal check --gate-from', "
                    "which does"
                )
                raise ParameterError("gate_from", rule, source)
    except ParameterError as exc:
        option = rule_option if rule is not None else source_option
        raise pytest.UsageError(f"gatecal: {option} {exc.rule} (got {exc.value!r})") from None
    text = config.getoption("gatecal_repeat")
    repeat = 0
    if text is not None:
        raw = str(text).strip()
        if not (raw.isascii() and raw.isdecimal()) or not 1 <= int(raw) <= MAX_REPEAT:
            raise pytest.UsageError(
                f"gatecal: --gatecal-repeat must be a whole number in [1, {MAX_REPEAT:,}] "
                f"(each repeat is a collected copy of every marked test) (got {text!r})"
            )
        repeat = int(raw)
    sequential = None
    if config.getoption("gatecal_sequential") is not None:
        sequential = _plugin_sequential().from_options(
            config, gate, repeat, rule_option if rule else source_option
        )
    if repeat and gate is not None:
        raise pytest.UsageError(
            f"gatecal: --gatecal-repeat measures a baseline and can't be combined with a gate "
            f"(got {repeat}); to gate on repeats use 'gatecal check --policy repeat-K-of-N'"
        )
    run = config.getoption("gatecal_run") or (runs_out.stem if runs_out else "run")
    if "#" in run or not run.strip():
        raise pytest.UsageError(f"gatecal: --gatecal-run must be a name without '#' (got {run!r})")
    return _Settings(gate=gate, repeat=repeat, runs_out=runs_out, run=run, sequential=sequential)


#: The most repeats --gatecal-repeat makes: each is a collected copy of every marked test,
#: and 10^8 of them filled 8.7 GB before anything ran.
MAX_REPEAT = 10_000


def _check_runs_out(path: Path, inputs: list[Any], junitxml: str | None = None) -> None:
    """gatecal's output rules for --gatecal-runs-out: never one of these inputs, never the
    file pytest's --junitxml writes."""
    from gatecal._common.output import OutputError, check_outputs  # stdlib only: still light

    outputs = [("--junitxml", Path(junitxml) if junitxml else None), ("--gatecal-runs-out", path)]
    try:
        check_outputs(outputs, [str(p) for p in inputs])
    except OutputError as exc:
        raise pytest.UsageError(f"gatecal: {exc}") from None


def _session_inputs(session: pytest.Session) -> list[Path]:
    """The files this session read its tests from: the test modules and their conftests."""
    files: set[Path] = set()
    root = session.config.rootpath
    for item in session.items:
        path = Path(str(item.path))
        files.add(path)
        for folder in path.parents:
            if (folder / "conftest.py").exists():
                files.add(folder / "conftest.py")
            if folder == root or root not in folder.parents:
                break
    return sorted(files)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "gatecal(check=None, kind=None, case=None): a judge test whose failures gatecal's "
        "gate judges together (--gatecal-gate); check/kind name its verdict, case its case.",
    )
    settings = _settings(config)
    if settings.active:
        from gatecal.pytest_plugin.session import Session  # only when an option is active

        config.pluginmanager.register(Session(config, settings), "gatecal-session")


def _gated(item: pytest.Item) -> bool:
    return item.get_closest_marker(MARKER) is not None


# -- always on: the fixture's soft checks fail the test --------------------------------------


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    recorder = item.stash.get(RECORDER, None)
    if report.when == "call" and report.passed and recorder and recorder.not_passed():
        report.outcome = "failed"
        report.longrepr = f"gatecal: check(s) did not pass: {', '.join(recorder.not_passed())}"
    return report


def _plugin_sequential() -> Any:
    from gatecal.pytest_plugin import sequential as module  # stdlib only: still light

    return module
