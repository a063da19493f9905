"""Text renderings of ``recommend --policies``: the recommendation and one row per rule."""

from __future__ import annotations

import functools

from gatecal._analyses.recommend.gate import Recommendation
from gatecal._analyses.recommend.policy import PolicyRecommendation, RuleGate
from gatecal._common.tables import csv_text, format_probability, table_lines
from gatecal._render.dispatch import not_a_result, render, written
from gatecal._render.recommend import recommendation_text

__all__ = ["render_policy_recommendation"]

#: Below this p-value of the test that the cases share a rate, the rules carry a warning.
CASES_DIFFER_BELOW = 0.05


def render_policy_recommendation(
    rec: Recommendation | None, rules: PolicyRecommendation, fmt: str = "table"
) -> str:
    """Render :func:`recommend_gate` with :func:`recommend_policy` beside it: the JSON
    carries ``policies`` (:meth:`PolicyRecommendation.to_dict`), the csv one row per rule,
    the table and markdown the recommendation followed by the rules and the choice.
    With `rec` None, the rules alone (the JSON without the recommendation).

    Parameters
    ----------
    rec : Recommendation or None
        What :func:`recommend_gate` returned, or None for the rules alone.
    rules : PolicyRecommendation
        What :func:`recommend_policy` returned.
    fmt : {"table", "markdown", "csv", "json"}, default "table"
        The output format.

    Returns
    -------
    str
        The rendered text.
    """
    return _render_rules(rules, fmt, beside=rec)


def _csv(rules: PolicyRecommendation) -> str:
    return csv_text(rules.row_dicts())


@render.register
def _render_rules(
    rules: PolicyRecommendation, fmt: str = "table", *, beside: Recommendation | None = None
) -> str:
    """`rules` alone, or `beside` the recommendation (the pair ``gatecal.render`` takes)."""
    if beside is not None and not isinstance(beside, Recommendation):
        raise not_a_result((beside, rules))
    text = functools.partial(_text, rules, beside)
    return written(
        rules,
        fmt,
        document=lambda: rules.to_dict(beside=beside),
        text=text,
        csv=_csv,
    )


def _text(rules: PolicyRecommendation, rec: Recommendation | None, fmt: str) -> str:
    if rec is None:
        return "\n".join(_rule_lines(rules, fmt)).lstrip("\n") + "\n"
    return recommendation_text(rec, fmt) + "\n".join(_rule_lines(rules, fmt)) + "\n"


def _gate(r: RuleGate, n: int) -> str:
    return "none" if r.k_min is None else f"at least {r.k_min} of {n}"


def _rule_lines(rules: PolicyRecommendation, fmt: str) -> list[str]:
    n = rules.cases
    lines = [
        "",
        f"per-case rules: each rule's strictest gate within the false-alarm budget, bounded "
        f"the same way (one-sided {100 * rules.gate_level:g}% over (rate, icc)); judge calls: "
        f"expected case evaluations of a healthy build at the fitted rate {rules.rate:.4f}, "
        f"icc {rules.icc:.3f}",
    ]
    rows = [
        [
            r.rule + ("" if r.checkable else " *"),
            _gate(r, n),
            format_probability(r.false_alarm),
            format_probability(r.detection),
            f"{r.judge_calls:.4g}",
            "yes" if r.meets else "no",
        ]
        for r in rules.rows
    ]
    header = ["rule", "gate", "false alarm", "detection", "judge calls", "meets"]
    lines += table_lines(header, rows, fmt)
    if not all(r.checkable for r in rules.rows):
        lines.append(
            "* check cannot apply it (it re-asks the judge inside one verdict); computed as "
            "if each call were a fresh run of the case"
        )
    if rules.cases_differ is not None and rules.cases_differ < CASES_DIFFER_BELOW:
        lines.append(
            f"warning: the cases fail at different rates (Cochran's Q p = "
            f"{format_probability(rules.cases_differ)}); every rule is rated at the pooled "
            "rate, so one that reruns or outvotes a failure (rerun-failing-R, repeat-K-of-N "
            "with K < N, majority-M, confirm-M) is rated too kindly for the flaky cases"
        )
    lines.append("")
    choice = rules.choice
    if choice is None:
        lines.append("no rule meets both targets with this suite.")
        return lines
    assert choice.k_min is not None
    cheapest = min(rules.rows, key=lambda r: r.judge_calls)
    lines.append(
        f"chosen rule: {choice.rule} ({choice.policy.describe()}) with at least {choice.k_min} "
        f"of {n} cases passing (at most {n - choice.k_min} failing): false alarm "
        f"{format_probability(choice.false_alarm)}, detection "
        f"{format_probability(choice.detection)}, {choice.judge_calls:.4g} judge calls per "
        "healthy build"
        + (
            ""
            if cheapest.judge_calls >= choice.judge_calls
            else f" ({cheapest.rule}: {cheapest.judge_calls:.4g}, short of the targets)"
        )
    )
    if choice.checkable and choice.rule != "single":
        lines.append(
            f"  enforce it: gatecal check CURRENT... --baseline RUNS... --policy {choice.rule}, "
            "or --gate-from this command's --format json output (it carries the rule)"
        )
    return lines
