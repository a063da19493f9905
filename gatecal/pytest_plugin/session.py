"""The plugin's session, registered by ``pytest_configure`` only when one of its options is
active: the verdicts of the marked tests on the workers, the decision on the controller
(a count gate, a case-aware gate or a sequential gate), written to ``--junitxml`` and the
terminal. ``runs.py`` writes the verdicts as the long table.
"""

from __future__ import annotations

import json
import os
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gatecal._common.tables import few
from gatecal.pytest_plugin import (  # the entry module: loaded before this one
    _PREFIX,
    _REPEAT_ARG,
    MARKER,
    _check_runs_out,
    _gated,
    _plugin_sequential,
    _session_inputs,
    _Settings,
)
from gatecal.pytest_plugin.recorder import KINDS, PHASES, RECORDER
from gatecal.pytest_plugin.results import Result, marked_evidence
from gatecal.pytest_plugin.runs import write_runs

# -- the session: verdicts on the workers, the decision on the controller --------------------


@dataclass(slots=True)
class _Decision:
    decision: str  # pass, fail, incomplete, or "" when the gate was not applied
    line: str
    exitstatus: int | None = None


# Files that mark a project's top directory, when pytest found no configuration file
_PROJECT_MARKERS = (".git", ".hg", "pyproject.toml", "setup.py", "setup.cfg", "tox.ini")


def _case_root(config: pytest.Config, path: Path) -> Path:
    """The directory case ids are relative to: the same wherever pytest is started from.

    pytest's rootdir when it comes from a configuration file (or ``--rootdir``); without
    one, pytest takes the common ancestor of its arguments and of the directory it was
    started in, so ``pytest tests/golden`` and ``cd tests/golden && pytest`` would name
    the same test differently. Then the nearest directory above the test file holding a
    project marker (``.git``, ``pyproject.toml``, ``setup.py``, ...), else the directory
    its package starts in (the first without ``__init__.py``).
    """
    if config.inipath is not None or config.getoption("rootdir", None):
        return config.rootpath
    for parent in path.parents:
        if any((parent / name).exists() for name in _PROJECT_MARKERS):
            return parent
    parent = path.parent
    while (parent / "__init__.py").is_file() and parent.parent != parent:
        parent = parent.parent
    return parent


def _case_id(item: pytest.Item) -> str:
    """The case: the marker's ``case=``, else the test id as pytest's JUnit XML writes it
    (``classname.name``, what gatecal's JUnit reader calls the case), without the repeat,
    its path taken from :func:`_case_root` so that it never depends on where pytest was
    started."""
    marker = item.get_closest_marker(MARKER)
    if marker is not None and marker.kwargs.get("case"):
        return str(marker.kwargs["case"])
    nodeid = item.nodeid
    file = Path(item.path)
    head, sep, tail = nodeid.partition("::")
    if sep and file.suffix == ".py":
        try:
            relative = file.relative_to(_case_root(item.config, file)).as_posix()
        except ValueError:  # outside the root: pytest's own id
            relative = head
        nodeid = relative + sep + tail
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


class Session:
    """The plugin's state in one process: worker, controller or both (no xdist)."""

    def __init__(self, config: pytest.Config, settings: _Settings) -> None:
        self.config = config
        self.settings = settings
        self.is_worker = hasattr(config, "workerinput")
        self.gated: dict[str, str] = {}  # nodeid -> case, as collected
        self.deselected: list[str] = []
        self.collected = False
        self.results: dict[str, Result] = {}
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
        item.stash[PHASES] = {}  # a rerun starts afresh
        if RECORDER in item.stash:
            del item.stash[RECORDER]

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if not _gated(item):
            return report
        phases = item.stash.setdefault(PHASES, {})
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
        if kind not in ("", *KINDS):
            kind = ""  # refused at collection below; never reached with a valid marker
        error = [{"check": check, "kind": kind, "passed": None, "status": "error", "score": None}]
        if phases.get("setup") == "failed" or phases.get("teardown") == "failed":
            return error
        if phases.get("setup") == "skipped" or phases.get("call") in (None, "skipped"):
            return None
        passed = phases["call"] == "passed"
        recorder = item.stash.get(RECORDER, None)
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
            if kind is not None and kind not in KINDS:
                raise pytest.UsageError(
                    f"gatecal: marker gatecal kind must be judge or code "
                    f"(got {kind!r} on {item.nodeid})"
                )
        if self.settings.sequential is not None:  # repeat after repeat: it can stop early
            items[:] = sorted(items, key=_repeat_of)

    # -- the controller (or this process) ---------------------------------------------------
    # pytest-xdist's hook: optional, so that pytest alone (no xdist) accepts the plugin
    @pytest.hookimpl(optionalhook=True)
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
        self.results[report.nodeid] = Result(
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
                    rows = write_runs(
                        self.results.values(), self.settings.run, self.settings.runs_out
                    )
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
        unmarked = sorted(f for f in self.failed if f not in self.gated)
        tail = _unmarked_tail(unmarked)
        if self.settings.sequential is not None:
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
        why = session.shouldfail or session.shouldstop
        found, outcome = marked_evidence(self.gated, self.results, stopped=str(why) if why else "")
        reasons += found
        seen: dict[tuple[str, str], str] = {}
        for nodeid, r in self.results.items():
            for v in r.verdicts or ():
                key = (r.case, v["check"])
                if key in seen and seen[key] != nodeid:
                    reasons.append(
                        f"{seen[key]} and {nodeid} both give check "
                        f"{v['check']!r} of case {r.case!r}"
                    )
                seen[key] = nodeid
        cases = list(dict.fromkeys(self.gated.values()))
        n = len(cases)
        k_min = None
        if n and getattr(gate, "kind", "count") == "cases":
            return _case_decision(gate, cases, outcome, reasons, unmarked)
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

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.decision is not None and not self.is_worker:
            terminalreporter.write_line(self.decision.line)


def _case_decision(
    gate: Any,
    cases: list[str],
    outcome: dict[str, bool],
    reasons: list[str],
    unmarked: list[str],
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
    tail = _unmarked_tail(unmarked)
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


def _names(nodeids: list[str], *, short: bool = False) -> str:
    """A few names (as many as a reason of the evidence rule shows), and how many more."""
    from gatecal._model.evidence import MARKED_TESTS  # standard library only

    names = nodeids
    if short:
        from gatecal.readers._data import short_names

        mapping = short_names(nodeids)
        names = [mapping[n] for n in nodeids]
    return few(names, MARKED_TESTS.shown)


def _unmarked_tail(unmarked: list[str]) -> str:
    """What the decision line adds for failed unmarked tests: never tolerated."""
    if not unmarked:
        return ""
    return f"; {len(unmarked)} unmarked test(s) failed, never tolerated: {_names(unmarked)}"
