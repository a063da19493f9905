"""``gatecal check`` in words a reviewer can act on: a plain table, markdown, JSON."""

from __future__ import annotations

from collections.abc import Sequence

from gatecal._analyses.check.gate import FailingCase, GateCheck
from gatecal._common.names import text_name
from gatecal._common.tables import few, format_probability, md_text
from gatecal._render import CHECK_FORMATS
from gatecal._render.dispatch import render, written

__all__ = ["CHECK_FORMATS", "render_check"]

_WORD = {"pass": "PASS", "fail": "FAIL", "incomplete": "INCOMPLETE"}


#: The text and markdown list at most this many failing cases of each kind (a suite of
#: thousands failing would fill a CI log or pass a job summary's size); json and junit
#: list every case.
LISTED = 50
#: ... and the verdict sentence names at most this many.
NAMED = 10


def _p(x: float) -> str:
    return format_probability(x)


def _more(count: int) -> str:
    return f"... and {count - LISTED} more (--format json lists every case)"


def _few(names: Sequence[str], shown: int) -> str:
    """The first `shown` names, each on its one line (:func:`text_name`), and how many more."""
    return few([text_name(n) for n in names], shown)


def _headline(res: GateCheck) -> str:
    return f"gatecal check: {_WORD[res.decision]} (exit {res.exit_code})"


def _verdict_sentence(res: GateCheck) -> str:
    """One sentence: what the result means."""
    if res.decision == "incomplete":
        return "the evidence is incomplete, so the run does not pass: " + "; ".join(
            map(text_name, res.reasons[1:])
        )
    new = res.new_failures
    if res.decision == "pass":
        if not res.failing:
            return "every baseline case passed."
        tolerated = (
            f"the gate tolerates {len(res.failing)} failing case(s) (p = {_p(res.p_value or 1.0)})"
        )
        if new:  # a pass, but not a failure the known-good runs explain
            return (
                f"{tolerated}, but {len(new)} of them never or almost never failed in the "
                f"known-good runs: look at {few(new, NAMED)}."
            )
        return f"{tolerated}; each also failed in known-good runs."
    if res.gate_kind == "cases":
        return _case_verdict(res)
    if res.passed >= res.k_min and not res.uncalibrated_failures:
        return "the gate falls short of its targets (--require-targets): " + (res.shortfall or "")
    if res.uncalibrated_failures and res.passed >= res.k_min:
        return "cases the baseline never saw failed: " + _few(res.uncalibrated_failures, NAMED)
    p = res.p_value if res.p_value is not None else 1.0
    if new:
        looks = "looks like a regression" if p < 0.05 else "may be noise"
        return (
            f"{looks}: a healthy build passes this few cases with probability "
            f"{_p(p)} or less; new failures: {_few(new, NAMED)}."
        )
    looks = "looks like a regression" if p < 0.05 else "may be noise"
    return (
        f"{looks}: a healthy build passes this few cases with probability {_p(p)} or less; "
        f"each failing case also failed in known-good runs, so none is new."
    )


def _case_verdict(res: GateCheck) -> str:
    """The failing sentence of the case-aware gate."""
    p = res.p_value if res.p_value is not None else 1.0
    caught = res.heavier_runs is not None and res.allowed is not None
    if not (caught and (res.heavier_runs or 0) < (res.allowed or 0)):
        if res.uncalibrated_failures:
            return "cases the baseline never saw failed: " + _few(res.uncalibrated_failures, NAMED)
        return "the gate falls short of its targets (--require-targets): " + text_name(
            res.shortfall or ""
        )
    new = res.new_failures
    looks = "looks like a regression" if p < 0.05 else "may be noise"
    named = f"; new failures: {_few(new, NAMED)}" if new else ""
    return (
        f"{looks}: {_heavier(res)} known-good runs had failures this surprising "
        f"(rank p = {_p(p)}){named}."
    )


def _heavier(res: GateCheck) -> str:
    n = res.heavier_runs or 0
    return "none of the" if n == 0 else f"only {n} of the"


def _rank_weight(res: GateCheck) -> str:
    """What the failing cases weigh against the known-good runs, and the rank rule."""
    score = res.score if res.score is not None else 0.0
    r = res.baseline.runs
    allowed = res.allowed or 0
    if allowed < 1:
        rule = f"{r} known-good runs are too few to fail any run within {res.false_alarm_target:g}"
    else:
        rule = f"the gate fails the build when fewer than {allowed} do"
    return (
        f"{score:.2f}; {res.heavier_runs or 0} of {r} known-good runs weigh as much or more "
        f"(each against the others); {rule} ({res.passed} of {res.cases} cases passed)"
    )


def _rank_lines(res: GateCheck) -> tuple[str, str]:
    """The case-aware gate's score against the known-good runs, and its false alarm."""
    r = res.baseline.runs
    allowed = res.allowed or 0
    first = f"failing cases weigh {_rank_weight(res)}"
    second = (
        f"false alarm of this gate: {_p(res.false_alarm)} (at most {allowed} in {r + 1}: "
        f"exact when healthy runs are alike in distribution, however much cases and whole "
        "runs differ)"
    )
    return first, second


_KIND_WORDS = {
    "new": "new (never failed before)",
    "flaky": "flaky",
    "systematic": "systematic (a judge error or a broken test to fix; no evidence)",
}


def _record_line(f: FailingCase, width: int) -> str:
    """One failing case: its record, how surprising its failure is, what it is."""
    b = f.baseline
    name = text_name(f.case)
    text = f"  {name:<{width}}  failed {int(b.failures)} of {int(b.trials)} known-good runs"
    if f.healthy_rate is not None:
        text += f"; healthy builds fail it {f.healthy_rate:.3g} of the time"
    if f.weight is not None:
        text += f"; weighs {f.weight:.2f}"
    text += f"; {_KIND_WORDS.get(f.kind, f.kind)}"
    return text + ("  (error)" if f.status == "error" else "")


def _case_line(f: FailingCase, width: int) -> str:
    b = f.baseline
    record = f"{int(b.failures)} of {int(b.trials)}"
    text = (
        f"  {text_name(f.case):<{width}}  {record:>8}  {b.estimate:.4f} [{b.low:.4f}, {b.high:.4f}]"
        + ("  (error)" if f.status == "error" else "")
    )
    if f.new:
        text += f"  healthy builds fail it with p <= {_p(f.probability)}"
    return text


def _gate_level() -> str:
    from gatecal._analyses.noise.bounds import GATE_LEVEL

    return f"{100 * GATE_LEVEL:g}%"


def _table(res: GateCheck) -> str:
    level = f"{100 * res.confidence_level:g}%"
    noise = res.baseline.noise_for_gate
    lines = [
        _headline(res),
        f"gate: {res.gate} ({res.gate_rule}); {text_name(res.gate_source)}",
    ]
    if res.policy != "single":
        lines.append(f"policy: {res.policy} over {len(res.current_runs)} current runs")
    if res.shortfall:
        lines.append(f"shortfall: {text_name(res.shortfall)}")
    if res.gate_kind == "cases":
        lines += _case_table(res)
    else:
        lines += _count_table(res, level, noise.high)
    lines += [f"warning: {text_name(w)}" for w in res.warnings]
    lines.append(_verdict_sentence(res))
    return "\n".join(lines) + "\n"


def _case_table(res: GateCheck) -> list[str]:
    """The case-aware gate's evidence: its score, each failing case's record."""
    lines = list(_rank_lines(res))
    if res.cases_differ:
        lines.append(f"how much cases differ: {res.cases_differ}")
    if res.runs_differ:
        lines.append(f"how much whole runs differ: {res.runs_differ}")
    if res.p_value is not None:
        lines.append(
            f"p-value: {_p(res.p_value)} (the run's rank among the known-good runs: "
            "1 + the runs weighing as much or more, over all runs)"
        )
    if res.failing:
        lines.append("failing cases, most surprising first:")
        ranked = sorted(res.failing, key=lambda f: -(f.weight or 0.0))
        width = max([len(text_name(f.case)) for f in ranked] + [4])
        lines += [_record_line(f, width) for f in ranked[:LISTED]]
        if len(ranked) > LISTED:
            lines.append(f"  {_more(len(ranked))}")
    if res.uncalibrated_failures:
        lines.append("failing, not in the baseline: " + _few(res.uncalibrated_failures, LISTED))
    lines.append(f"errors: {len(res.error_cases)} (at most {res.max_errors} allowed)")
    if res.decision == "incomplete":
        lines.append("incomplete evidence:")
        lines += [f"  - {text_name(r)}" for r in res.reasons[1:]]
    return lines


def _count_table(res: GateCheck, level: str, high: float) -> list[str]:
    """The count gate's evidence."""
    lines = [
        f"passed: {res.passed} of {res.cases} cases (k_min {res.k_min})",
        f"false alarm of this gate: {_p(res.false_alarm)} (healthy builds it fails, its "
        f"one-sided {_gate_level()} profile-likelihood bound from {res.baseline.runs} "
        f"known-good runs; their {level} region: case failure rate up to {high:.4f}, "
        f"run-to-run icc up to {res.baseline.icc_for_gate:.3f})",
    ]
    if res.p_value is not None:
        lines.append(
            f"p-value: {_p(res.p_value)} (P(a healthy build passes {res.passed} cases "
            "or fewer), conservatively)"
        )
    width = max([len(text_name(f.case)) for f in res.failing] + [4])
    if any(f.healthy_rate is not None for f in res.failing):
        lines.append("failing cases, by their record:")
        lines += [_record_line(f, width) for f in res.failing[:LISTED]]
        if len(res.failing) > LISTED:
            lines.append(f"  {_more(len(res.failing))}")
        res_failing: list[FailingCase] = []
    else:
        res_failing = list(res.failing)
    for title, new in (("new failures", True), ("known flaky", False)):
        group = [f for f in res_failing if f.new == new]
        if group:
            rule = (
                f"failed in at most {res.flaky_rate:g} of known-good runs"
                if new
                else "failed before in known-good runs"
            )
            lines.append(f"{title} ({rule}): baseline failures, rate [{level} interval]")
            lines += [_case_line(f, width) for f in group[:LISTED]]
            if len(group) > LISTED:
                lines.append(f"  {_more(len(group))}")
    if res.uncalibrated_failures:
        names = _few(res.uncalibrated_failures, LISTED)
        lines.append("failing, not in the baseline: " + names)
    lines.append(f"errors: {len(res.error_cases)} (at most {res.max_errors} allowed)")
    if res.decision == "incomplete":
        lines.append("incomplete evidence:")
        lines += [f"  - {text_name(r)}" for r in res.reasons[1:]]
    return lines


def _markdown(res: GateCheck) -> str:
    """The job summary. Every string that comes from the user's files (case names, paths,
    reasons and warnings that quote them) is escaped: a case name cannot add a heading, a
    table row, a link, an image or HTML to the summary."""
    icon = {"pass": "✅", "fail": "❌", "incomplete": "⚠️"}[res.decision]
    level = f"{100 * res.confidence_level:g}%"
    lines = [
        f"### {icon} gatecal check: {_WORD[res.decision]}",
        "",
        md_text(_verdict_sentence(res)),
        "",
        "| | |",
        "|---|---|",
        f"| gate | `{res.gate}`: {res.gate_rule} ({md_text(res.gate_source)}) |",
    ]
    if res.shortfall:
        lines.append(f"| shortfall | {md_text(res.shortfall)} |")
    if res.gate_kind == "cases":
        lines += [
            f"| failing cases weigh | {md_text(_rank_weight(res))} |",
            f"| false alarm of this gate | {_p(res.false_alarm)} (healthy builds it fails) |",
            f"| p-value | {'—' if res.p_value is None else _p(res.p_value)} |",
            f"| baseline | {res.baseline.runs} known-good runs, each case at its own "
            f"record's rate; {md_text(res.cases_differ or '')} |",
        ]
    else:
        lines += [
            f"| passed | {res.passed} of {res.cases} cases; the gate needs {res.k_min} (k_min) |",
            f"| false alarm of this gate | {_p(res.false_alarm)} (healthy builds it fails) |",
            f"| p-value | {'—' if res.p_value is None else _p(res.p_value)} |",
            f"| baseline | {res.baseline.runs} known-good runs (each gate's false alarm its "
            f"one-sided {_gate_level()} profile-likelihood bound); their {level} region: case "
            f"failure rate <= {res.baseline.noise_for_gate.high:.4f}, icc <= "
            f"{res.baseline.icc_for_gate:.3f} |",
        ]
    lines += [
        f"| errors | {len(res.error_cases)} (at most {res.max_errors}) |",
    ]
    if res.policy != "single":
        lines.append(f"| policy | {res.policy} over {len(res.current_runs)} runs |")
    if res.failing:
        tolerated = res.decision == "pass"
        lines += [
            "",
            f"| failing case | kind | baseline failures | rate [{level}] | P(fails "
            "when healthy) <= |",
            "|---|---|---|---|---|",
        ]
        for f in res.failing[:LISTED]:
            b = f.baseline
            word = {"new": "new", "flaky": "known flaky", "systematic": "systematic"}
            if tolerated:  # the gate passed with these failing: they are within its tolerance
                kind = f"{word.get(f.kind, f.kind)}, within the gate"
            else:
                kind = "**new failure**" if f.new else word.get(f.kind, f.kind)
            kind += " (error)" if f.status == "error" else ""
            lines.append(
                f"| {md_text(f.case)} | {kind} | {int(b.failures)} of {int(b.trials)} | "
                f"{b.estimate:.4f} [{b.low:.4f}, {b.high:.4f}] | "
                f"{_p(f.probability)} |"
            )
        if len(res.failing) > LISTED:
            lines += ["", md_text(_more(len(res.failing)))]
    if res.decision == "incomplete":
        lines += ["", "Incomplete evidence:", ""] + [f"- {md_text(r)}" for r in res.reasons[1:]]
    if res.uncalibrated_failures:
        names = md_text(few(res.uncalibrated_failures, LISTED))
        lines += ["", "Failing, not in the baseline: " + names]
    lines += [f"\n> warning: {md_text(w)}" for w in res.warnings]
    lines += [
        "",
        f"<sub>k_min: the gate passes the build when at least k_min of the {res.cases} cases "
        "pass. icc: how much whole runs vary together (0: every verdict independent; the "
        "gate allows for the largest the known-good runs leave plausible). p-value: how often "
        "a healthy build passes this few cases or fewer.</sub>",
    ]
    return "\n".join(lines) + "\n"


def _junit(res: GateCheck) -> str:
    """One JUnit testsuite, so Jenkins, GitLab and Azure show the gate where they show tests:
    a testcase per baseline case (failed, errored or missing ones as failures, skips or
    errors) and one for the gate itself, whose failure message is the evidence."""
    from xml.etree import ElementTree as ET

    state = {f.case: f for f in res.failing}
    missing = set(res.missing)
    suite = ET.Element("testsuite", name="gatecal check")
    cases = []
    for case in res.case_names:
        element = ET.SubElement(suite, "testcase", classname="gatecal.cases", name=case)
        f = state.get(case)
        if case in missing:
            ET.SubElement(element, "skipped", message="no complete verdict in this run")
        elif f is not None and f.status == "error":
            ET.SubElement(element, "error", message="an error or unscored verdict")
        elif f is not None:
            b = f.baseline
            words = {"new": "new failure", "flaky": "known flaky", "systematic": "systematic"}.get(
                f.kind, f.kind
            )
            if res.decision == "pass":
                words += ", within the gate"
            message = f"{words}: failed {int(b.failures)} of {int(b.trials)} known-good runs"
            if res.decision == "pass":  # a tolerated failure is reported, not failed
                ET.SubElement(element, "system-out").text = message
            else:
                ET.SubElement(element, "failure", message=message)
        cases.append(element)
    gate = ET.SubElement(suite, "testcase", classname="gatecal", name=f"gate {res.gate}")
    evidence = "\n".join([_verdict_sentence(res), *map(text_name, (*res.reasons, *res.warnings))])
    if res.decision != "pass":
        kind = "failure" if res.decision == "fail" else "error"
        node = ET.SubElement(gate, kind, message=f"{_WORD[res.decision]}: {_verdict_sentence(res)}")
        node.text = evidence
    else:
        ET.SubElement(gate, "system-out").text = evidence
    counts = {
        "tests": str(len(cases) + 1),
        "failures": str(len(suite.findall("testcase/failure"))),
        "errors": str(len(suite.findall("testcase/error"))),
        "skipped": str(len(suite.findall("testcase/skipped"))),
    }
    suite.attrib.update(counts)
    root = ET.Element("testsuites", {"name": "gatecal", **counts})
    root.append(suite)
    from gatecal._common.unicode import xml_safe

    for node in root.iter():  # any name a reader gives: XML-illegal characters written out
        node.attrib.update({k: xml_safe(v) for k, v in node.attrib.items()})
        if node.text:
            node.text = xml_safe(node.text)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


@render.register
def render_check(res: GateCheck, fmt: str = "table") -> str:
    """The result as ``table``, ``markdown``, ``json`` or ``junit``, leading with the
    decision (:func:`gatecal.render`).

    Parameters
    ----------
    res : GateCheck
        What :func:`check_gate` returned.
    fmt : {"table", "markdown", "json", "junit"}, default "table"
        The output format.
    """
    return written(res, fmt, table=_table, markdown=_markdown, junit=_junit)
