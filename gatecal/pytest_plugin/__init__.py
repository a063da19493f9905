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

Every verdict also travels in ``item.user_properties`` as ``gatecal.case``,
``gatecal.repeat`` and ``gatecal.verdicts`` (a JSON list), so ``--junitxml`` carries it
and gatecal's JUnit reader prefers it over test names. A test rerun by
pytest-rerunfailures keeps its first attempt's verdicts: a failure hidden by a rerun
still counts as a failure.

This module imports nothing heavy: the gate is a count, and the numbers quoted from a
``recommend`` output are read from its JSON.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

__all__ = ["GatecalVerdicts", "gatecal_verdicts"]

MARKER = "gatecal"
_PREFIX = "gatecal."
_REPEAT_ARG = "_gatecal_repeat"
_KINDS = ("judge", "code")
_STATUSES = ("ok", "error", "unscored")
# gatecal.readers.LONG_COLUMNS, spelled out so that this module imports nothing of
# gatecal's at import time (a test keeps the two equal)
_LONG_COLUMNS = (
    "build",
    "run",
    "case",
    "check",
    "kind",
    "passed",
    "status",
    "score",
    "session",
    "attempts",
    "cached",
    "source",
)


class GatecalVerdicts:
    """The verdicts of a gated test that runs several checks: one :meth:`record` each.

    The test fails at its end if a recorded check did not pass, so a soft check is
    never lost; the gate sees every recorded check.
    """

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def record(
        self,
        check: str,
        passed: bool | None,
        *,
        kind: str = "judge",
        score: float | None = None,
        status: str = "ok",
    ) -> bool:
        """Record one check's verdict; return whether it passed.

        `passed` must be a bool when `status` is ``ok`` and None otherwise (an error or
        unscored verdict is never a pass).
        """
        if not isinstance(check, str) or not check.strip():
            raise ValueError(f"gatecal_verdicts: `check` must be a non-empty name (got {check!r})")
        if any(item["check"] == check for item in self.items):
            raise ValueError(f"gatecal_verdicts: check {check!r} recorded twice")
        if kind not in _KINDS:
            raise ValueError(f"gatecal_verdicts: `kind` must be judge or code (got {kind!r})")
        if status not in _STATUSES:
            rule = "must be ok, error or unscored"
            raise ValueError(f"gatecal_verdicts: `status` {rule} (got {status!r})")
        if status == "ok" and not isinstance(passed, bool):
            raise TypeError(f"gatecal_verdicts: `passed` must be True or False (got {passed!r})")
        if status != "ok" and passed is not None:
            raise ValueError(f"gatecal_verdicts: `passed` must be None when status is {status}")
        if score is not None and (isinstance(score, bool) or not math.isfinite(float(score))):
            raise ValueError(f"gatecal_verdicts: `score` must be a finite number (got {score!r})")
        self.items.append(
            {
                "check": check,
                "kind": kind,
                "passed": passed,
                "status": status,
                "score": None if score is None else float(score),
            }
        )
        return passed is True

    def not_passed(self) -> list[str]:
        """Checks recorded as failed, errored or unscored."""
        return [i["check"] for i in self.items if i["passed"] is not True]


_RECORDER = pytest.StashKey[GatecalVerdicts]()
_PHASES = pytest.StashKey[dict[str, str]]()


@pytest.fixture
def gatecal_verdicts(request: pytest.FixtureRequest) -> GatecalVerdicts:
    """Record per-check verdicts when one gated test runs several checks."""
    recorder = GatecalVerdicts()
    request.node.stash[_RECORDER] = recorder
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
        config.pluginmanager.register(_Session(config, settings), "gatecal-session")


def _gated(item: pytest.Item) -> bool:
    return item.get_closest_marker(MARKER) is not None


# -- always on: the fixture's soft checks fail the test --------------------------------------


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    recorder = item.stash.get(_RECORDER, None)
    if report.when == "call" and report.passed and recorder and recorder.not_passed():
        report.outcome = "failed"
        report.longrepr = f"gatecal: check(s) did not pass: {', '.join(recorder.not_passed())}"
    return report


# -- the session: verdicts on the workers, the decision on the controller --------------------


@dataclass(slots=True)
class _Result:
    case: str
    repeat: int
    verdicts: list[dict[str, Any]] | None  # None: skipped
    attempts: int = 1


@dataclass(slots=True)
class _Decision:
    decision: str  # pass, fail, incomplete, or "" when the gate was not applied
    line: str
    exitstatus: int | None = None


def _case_id(item: pytest.Item) -> str:
    """The case: the marker's ``case=``, else the test id as pytest's JUnit XML writes it
    (``classname.name``, what gatecal's JUnit reader calls the case), without the repeat."""
    marker = item.get_closest_marker(MARKER)
    if marker is not None and marker.kwargs.get("case"):
        return str(marker.kwargs["case"])
    nodeid = item.nodeid
    repeat = _repeat_of(item)
    if repeat:
        token = f"gatecal-r{repeat}"
        head, bracket, params = nodeid.partition("[")
        kept = [p for p in params.rstrip("]").split("-") if p]
        inner = "-".join(kept)
        inner = inner.replace(f"-{token}", "").replace(f"{token}-", "").replace(token, "")
        nodeid = head + (f"[{inner}]" if bracket and inner else "")
    path, _, rest = nodeid.partition("::")
    path = path.replace("/", ".").removesuffix(".py")
    return ".".join([path, *rest.split("::")]) if rest else path


def _repeat_of(item: pytest.Item) -> int:
    callspec = getattr(item, "callspec", None)
    return int(callspec.params.get(_REPEAT_ARG, 0)) if callspec is not None else 0


class _Session:
    """The plugin's state in one process: worker, controller or both (no xdist)."""

    def __init__(self, config: pytest.Config, settings: _Settings) -> None:
        self.config = config
        self.settings = settings
        self.is_worker = hasattr(config, "workerinput")
        self.gated: dict[str, str] = {}  # nodeid -> case, as collected
        self.deselected: list[str] = []
        self.collected = False
        self.results: dict[str, _Result] = {}
        self.failed: set[str] = set()
        self.decision: _Decision | None = None
        self.session: pytest.Session | None = None
        self.stopped = False  # the sequential gate decided and stopped the session
        xmlpath = getattr(config.option, "xmlpath", None)  # pytest's --junitxml, as it opens it
        self.junitxml = (
            os.path.normpath(os.path.abspath(os.path.expanduser(os.path.expandvars(xmlpath))))
            if xmlpath and not self.is_worker
            else None
        )
        keep = config.getoption("gatecal_keep_failures")
        self.keep_failures = bool(config.getini("gatecal_keep_failures") if keep is None else keep)

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session

    # -- collection (workers, or this process without xdist) --------------------------------
    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        n = self.settings.repeat
        if n and metafunc.definition.get_closest_marker(MARKER) is not None:
            metafunc.fixturenames.append(_REPEAT_ARG)
            ids = [f"gatecal-r{i}" for i in range(1, n + 1)]
            metafunc.parametrize(_REPEAT_ARG, range(1, n + 1), ids=ids)

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.deselected += [i.nodeid for i in items if _gated(i)]

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if self.settings.runs_out is not None and not self.is_worker:
            try:  # before any test runs: never replace a test module or a conftest
                _check_runs_out(self.settings.runs_out, [*_session_inputs(session)])
            except pytest.UsageError as exc:
                pytest.exit(str(exc), returncode=pytest.ExitCode.USAGE_ERROR)
        self.gated = {i.nodeid: _case_id(i) for i in session.items if _gated(i)}
        self.collected = True
        if self.is_worker:
            output = self.config.workeroutput  # type: ignore[attr-defined]
            output["gatecal"] = {"gated": self.gated, "deselected": self.deselected}

    # -- running (workers, or this process) -------------------------------------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        item.stash[_PHASES] = {}  # a rerun starts afresh
        if _RECORDER in item.stash:
            del item.stash[_RECORDER]

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if not _gated(item):
            return report
        phases = item.stash.setdefault(_PHASES, {})
        phases[report.when] = report.outcome
        if report.when == "teardown":
            props: list[tuple[str, object]] = [(f"{_PREFIX}case", _case_id(item))]
            if _repeat_of(item):
                props.append((f"{_PREFIX}repeat", str(_repeat_of(item))))
            verdicts = self._verdicts(item, phases)
            if verdicts is not None:
                text = json.dumps(verdicts, separators=(",", ":"), sort_keys=True)
                props.append((f"{_PREFIX}verdicts", text))
            for holder in (item.user_properties, report.user_properties):
                holder[:] = [p for p in holder if not str(p[0]).startswith(_PREFIX)] + props
        return report

    @staticmethod
    def _verdicts(item: pytest.Item, phases: dict[str, str]) -> list[dict[str, Any]] | None:
        """The test's verdicts; None when it was skipped (missing data, not a verdict)."""
        marker = item.get_closest_marker(MARKER)
        kwargs = marker.kwargs if marker is not None else {}
        check, kind = str(kwargs.get("check") or ""), str(kwargs.get("kind") or "")
        if kind not in ("", *_KINDS):
            kind = ""  # refused at collection below; never reached with a valid marker
        error = [{"check": check, "kind": kind, "passed": None, "status": "error", "score": None}]
        if phases.get("setup") == "failed" or phases.get("teardown") == "failed":
            return error
        if phases.get("setup") == "skipped" or phases.get("call") in (None, "skipped"):
            return None
        passed = phases["call"] == "passed"
        recorder = item.stash.get(_RECORDER, None)
        if recorder is None or not recorder.items:
            return [{"check": check, "kind": kind, "passed": passed, "status": "ok", "score": None}]
        items = [dict(i) for i in recorder.items]
        if not passed and not recorder.not_passed():  # failed outside the recorded checks
            items.append(
                {"check": "", "kind": kind, "passed": False, "status": "ok", "score": None}
            )
        return items

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            marker = item.get_closest_marker(MARKER)
            if marker is None:
                continue
            unknown = sorted(set(marker.kwargs) - {"check", "kind", "case"})
            kind = marker.kwargs.get("kind")
            if marker.args or unknown:
                raise pytest.UsageError(
                    f"gatecal: marker gatecal takes check=, kind=, case= only ({item.nodeid})"
                )
            if kind is not None and kind not in _KINDS:
                raise pytest.UsageError(
                    f"gatecal: marker gatecal kind must be judge or code "
                    f"(got {kind!r} on {item.nodeid})"
                )
        if self.settings.sequential is not None:  # repeat after repeat: it can stop early
            items[:] = sorted(items, key=_repeat_of)

    # -- the controller (or this process) ---------------------------------------------------
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        info = getattr(node, "workeroutput", {}).get("gatecal")
        if info and not self.collected:
            self.gated = dict(info["gated"])
            self.deselected = list(info["deselected"])
            self.collected = True

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.is_worker:
            return
        if report.outcome == "failed":
            self.failed.add(report.nodeid)
        if report.when != "teardown":
            return
        props = {str(k): v for k, v in report.user_properties if str(k).startswith(_PREFIX)}
        if f"{_PREFIX}case" not in props:
            return
        if report.nodeid in self.results:  # a rerun: the first attempt's verdicts stand
            self.results[report.nodeid].attempts += 1
            return
        text = props.get(f"{_PREFIX}verdicts")
        self.results[report.nodeid] = _Result(
            case=str(props[f"{_PREFIX}case"]),
            repeat=int(str(props.get(f"{_PREFIX}repeat", 0))),
            verdicts=None if text is None else json.loads(str(text)),
        )
        self._stop_once_decided(self.results[report.nodeid].repeat)

    def _stop_once_decided(self, repeat: int) -> None:
        """Without xdist (the collection is here), stop once the sequential gate decides."""
        if self.settings.sequential is not None and self.session is not None and self.collected:
            self.stopped = self.stopped or _plugin_sequential().stop_once_decided(
                self.session, self.settings.sequential, self.settings.repeat, repeat,
                self.gated, self.results,
            )  # fmt: skip

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.is_worker:
            return
        status = int(session.exitstatus)
        if self.stopped and status == pytest.ExitCode.INTERRUPTED:  # its own stop, no ^C
            status = int(bool(session.testsfailed))
            session.exitstatus = pytest.ExitCode(status)
        notes = []
        lost = False
        if self.settings.runs_out is not None:
            if status in (0, 1):
                from gatecal._common.output import OutputError

                try:
                    rows = self._write_runs(self.settings.runs_out)
                    notes.append(f"{rows} verdicts written to {self.settings.runs_out}")
                except OutputError as exc:  # e.g. a full disk: the measurement is lost
                    notes.append(f"{exc}, so the session fails")
                    lost = True
            else:
                notes.append(f"{self.settings.runs_out} not written (pytest exit {status})")
        if lost:  # whatever the gate says below: a lost measurement fails the session
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if self.settings.gate is None and self.settings.sequential is None:
            if notes:
                self.decision = _Decision("", "gatecal: " + "; ".join(notes))
            return
        if status not in (0, 1):
            self.decision = _Decision(
                "", f"gatecal: gate not applied: pytest's exit status {status} is never changed"
            )
            return
        self.decision = self._decide(session)
        if self.decision.exitstatus is not None and not lost:
            session.exitstatus = self.decision.exitstatus
        if notes:
            self.decision.line += "; " + "; ".join(notes)
        if self.junitxml is not None:
            from gatecal.pytest_plugin.junit import write_decision  # stdlib only: still light

            note = write_decision(
                self.junitxml,
                self.decision.decision,
                self.decision.line.removeprefix("gatecal: "),
                int(session.exitstatus),
                keep_failures=self.keep_failures,
            )
            if note:
                self.decision.line += f"; {note}"

    def _decide(self, session: pytest.Session) -> _Decision:
        gate = self.settings.gate
        reasons: list[str] = []
        if not self.collected:
            reasons.append("no collection reached the controller")
        if self.deselected:
            reasons.append(
                f"{len(self.deselected)} marked test(s) deselected: {_names(self.deselected)}"
            )
        if self.collected and not self.gated:
            reasons.append("no collected test is marked gatecal")
        if self.settings.sequential is not None:
            unmarked = sorted(f for f in self.failed if f not in self.gated)
            tail = ""
            if unmarked:
                tail = f"; {len(unmarked)} unmarked test(s) failed, never tolerated: "
                tail += _names(unmarked)
            decision, line, status = _plugin_sequential().decide(
                self.settings.sequential,
                self.settings.repeat,
                self.gated,
                self.results,
                reasons,
                tail,
                bool(unmarked),
            )
            return _Decision(decision, line, status)
        not_run = [n for n in self.gated if n not in self.results]
        skipped = [n for n in self.gated if n in self.results and self.results[n].verdicts is None]
        errored = [
            n
            for n, r in self.results.items()
            if r.verdicts and any(v["status"] != "ok" for v in r.verdicts)
        ]
        if not_run:
            why = session.shouldfail or session.shouldstop
            stop = f" (the session stopped early: {why})" if why else ""
            reasons.append(
                f"{len(not_run)} of {len(self.gated)} marked tests gave no verdict"
                f"{stop}: {_names(not_run)}"
            )
        if skipped:
            reasons.append(f"{len(skipped)} marked test(s) skipped: {_names(skipped)}")
        if errored:
            reasons.append(f"{len(errored)} marked test(s) errored: {_names(errored)}")
        seen: dict[tuple[str, str], str] = {}
        outcome: dict[str, bool] = {}
        for nodeid, r in self.results.items():
            for v in r.verdicts or ():
                key = (r.case, v["check"])
                if key in seen and seen[key] != nodeid:
                    reasons.append(
                        f"{seen[key]} and {nodeid} both give check "
                        f"{v['check']!r} of case {r.case!r}"
                    )
                seen[key] = nodeid
                if v["status"] == "ok":
                    outcome[r.case] = outcome.get(r.case, True) and v["passed"] is True
        cases = list(dict.fromkeys(self.gated.values()))
        n = len(cases)
        k_min = None
        if n and getattr(gate, "kind", "count") == "cases":
            return _case_decision(gate, cases, outcome, reasons, self.failed, self.gated)
        if n and hasattr(gate, "false_alarms"):
            if gate.cases != n:
                reasons.append(
                    f"{gate.source} calibrates a gate for {gate.cases} cases and "
                    f"this session gates {n}: rerun gatecal recommend"
                )
            else:
                k_min = gate.k_min
        elif n:
            k_min = gate.k_min(n)
        passed = sum(outcome.get(c) is True for c in cases)
        failing = [c for c in cases if outcome.get(c) is False]
        unmarked = sorted(f for f in self.failed if f not in self.gated)
        tail = ""
        if unmarked:
            tail = f"; {len(unmarked)} unmarked test(s) failed, never tolerated: {_names(unmarked)}"
        if reasons or k_min is None:
            return _Decision(
                "incomplete",
                f"gatecal: gate INCOMPLETE, exit 1: incomplete "
                f"evidence never passes: {'; '.join(reasons)}{tail}",
                1,
            )
        rule = f"{gate.text}: at least {k_min} of {n} cases must pass"
        p_text = ""
        if hasattr(gate, "p_value"):
            p_text = f", p = {gate.p_value(passed):.4g} under the baseline's noise"
        shown = f"; failing: {_names(failing, short=True)}" if failing else ""
        if passed >= k_min:
            exit_word = "exit 0" if not unmarked else "exit 1"
            because = (
                f" although {len(failing)} marked case(s) failed"
                if failing and not unmarked
                else ""
            )
            return _Decision(
                "pass",
                f"gatecal: gate PASSED ({rule}; {passed} passed{p_text})"
                f", {exit_word}{because}{shown}{tail}",
                1 if unmarked else 0,
            )
        return _Decision(
            "fail",
            f"gatecal: gate FAILED ({rule}; {passed} passed{p_text}), exit 1{shown}{tail}",
            1,
        )

    def _write_runs(self, path: Path) -> int:
        rows = []
        ordered = sorted(self.results.values(), key=lambda r: (r.repeat, r.case))
        for r in ordered:
            run = f"{self.settings.run}#{r.repeat}" if r.repeat else self.settings.run
            base: dict[str, Any] = dict.fromkeys(_LONG_COLUMNS, "")
            base.update(
                run=run, case=r.case, session=self.settings.run, attempts=r.attempts, cached="false"
            )
            if r.verdicts is None:
                rows.append({**base, "status": "skipped"})
                continue
            for v in r.verdicts:
                passed = "" if v["passed"] is None else ("true" if v["passed"] else "false")
                score = "" if v.get("score") is None else v["score"]
                rows.append(
                    {
                        **base,
                        "check": v["check"],
                        "kind": v["kind"],
                        "passed": passed,
                        "status": v["status"],
                        "score": score,
                    }
                )
        text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
        from gatecal._common.output import check_outputs, write_outputs  # stdlib only: still light

        # gatecal's output rules: a regular file replaced atomically, a symlink followed,
        # a device or FIFO written through, never a directory (OutputError names the option)
        (planned,) = check_outputs([("--gatecal-runs-out", path)])
        write_outputs([(planned, text.encode("utf-8"))])
        return len(rows)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.decision is not None and not self.is_worker:
            terminalreporter.write_line(self.decision.line)


def _case_decision(
    gate: Any,
    cases: list[str],
    outcome: dict[str, bool],
    reasons: list[str],
    failed: Any,
    gated: dict[str, str],
) -> _Decision:
    """The case-aware gate of a gate file on this session: the session's failing cases
    (matched by the names recommend gave the cases) ranked against the file's known-good
    runs (:mod:`gatecal._model.rankgate`, standard library only)."""
    from gatecal._model.rankgate import UNITS, rank_test
    from gatecal.readers._data import short_names

    short = short_names(cases)
    index: dict[str, int] = {c: i for i, c in enumerate(gate.case_names)}
    unknown = [c for c in cases if c not in index and short[c] not in index]
    if gate.cases != len(cases) or unknown:
        reasons.append(
            f"{gate.source} calibrates a case-aware gate for {gate.cases} cases and this "
            f"session gates {len(cases)}"
            + (f" ({len(unknown)} unknown to it: {_names(unknown)})" if unknown else "")
            + ": rerun gatecal recommend"
        )
    unmarked = sorted(f for f in failed if f not in gated)
    tail = ""
    if unmarked:
        tail = f"; {len(unmarked)} unmarked test(s) failed, never tolerated: {_names(unmarked)}"
    if reasons:
        return _Decision(
            "incomplete",
            f"gatecal: gate INCOMPLETE, exit 1: incomplete evidence never passes: "
            f"{'; '.join(reasons)}{tail}",
            1,
        )
    failing = [c for c in cases if outcome.get(c) is False]
    at = [index[c] if c in index else index[short[c]] for c in failing]
    ranked = rank_test(
        gate.failing,
        gate.missing,
        at,
        (),
        cases=gate.cases,
        false_alarm=gate.false_alarm_target,
    )
    r = ranked.runs
    rule = (
        f"case-aware: fail when the failing cases are more surprising than in "
        f"{r - ranked.allowed + 1} of {r} known-good runs; they weigh "
        f"{ranked.score / UNITS:.2f}, {ranked.at_least} known-good runs as much or more, "
        f"p = {ranked.p_value:.4g}"
    )
    shown = f"; failing: {_names(failing, short=True)}" if failing else ""
    short_of = f"; shortfall: {gate.shortfall}" if gate.shortfall else ""
    if not ranked.fails:
        status = 1 if unmarked else 0
        return _Decision(
            "pass",
            f"gatecal: gate PASSED ({rule}), exit {status}{shown}{short_of}{tail}",
            status,
        )
    return _Decision("fail", f"gatecal: gate FAILED ({rule}), exit 1{shown}{short_of}{tail}", 1)


def _plugin_sequential() -> Any:
    from gatecal.pytest_plugin import sequential as module  # stdlib only: still light

    return module


def _names(nodeids: list[str], *, short: bool = False, limit: int = 5) -> str:
    """A few names, and how many more."""
    names = nodeids
    if short:
        from gatecal.readers._data import short_names

        mapping = short_names(nodeids)
        names = [mapping[n] for n in nodeids]
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more
