"""Text renderings of plan_suite's answer: table, markdown, csv and json."""

from __future__ import annotations

import json
from typing import Any

from gatecal._analyses.plan import SuitePlans
from gatecal._common.tables import (
    FORMATS,
    csv_text,
    format_probability,
    noise_words,
    plural,
    table_lines,
)
from gatecal._common.validate import ParameterError

__all__ = ["render_plans"]


def render_plans(plans: SuitePlans, fmt: str = "table") -> str:
    """Render :func:`plan_suite`'s answer as ``table``, ``markdown``, ``csv`` or ``json``."""
    rows = [p.to_dict() if p else None for p in plans.plans]
    if fmt == "json":
        best = plans.recommended
        data: dict[str, Any] = {
            **(
                best.to_dict()
                if best
                else {"cases": None, "k_min": None, "false_alarm": None, "detection": None}
            ),
            "feasible": best is not None,
            "targets": {
                "false_alarm": plans.false_alarm_target,
                "detection": plans.detection_target,
            },
            "flip": plans.noise.fnr,
            "fpr": plans.noise.fpr,
            "unparseable": plans.noise.unparseable,
            "icc": plans.noise.icc,
            "regression": plans.regression.text,
            "judge_checks": plans.judge_checks,
            "code_checks": plans.code_checks,
            "max_cases": plans.max_cases,
            "alternatives": [
                r if r else {"policy": pol.describe(), "cases": None}
                for r, pol in zip(rows, plans.policies, strict=True)
            ],
        }
        return json.dumps(data, indent=2) + "\n"
    if fmt == "csv":
        return csv_text(
            [
                r
                if r
                else {
                    "policy": pol.describe(),
                    "cases": None,
                    "k_min": None,
                    "max_failures": None,
                    "failing": None,
                    "false_alarm": None,
                    "detection": None,
                    "judge_calls": None,
                }
                for r, pol in zip(rows, plans.policies, strict=True)
            ]
        )
    if fmt not in ("table", "markdown"):
        raise ParameterError("fmt", f"must be one of {FORMATS}", fmt)
    checks = f"{plural(plans.judge_checks, 'judge check')} and "
    checks += plural(plans.code_checks, "code check")
    kind = "a code check" if plans.code_checks else "a judge check"
    head = [
        f"targets: false alarm <= {plans.false_alarm_target:g}, "
        f"detection >= {plans.detection_target:g}",
        f"judge: {noise_words(plans.noise)}; each case: {checks}",
        f"regression: {plans.regression.describe()} ({kind}; rounded half up to whole cases)",
        "",
    ]
    header = ["policy", "cases", "gate", "false alarm", "detection", "judge calls per run"]
    table = []
    for plan, policy in zip(plans.plans, plans.policies, strict=True):
        if plan is None:
            beyond = "none" if plans.max_cases is None else f"> {plans.max_cases}"
            table.append([policy.describe(), beyond, "none meets both", "", "", ""])
            continue
        table.append(
            [
                plan.policy.describe(),
                str(plan.cases),
                f"at most {plan.max_failures} failing (k_min {plan.k_min})",
                format_probability(plan.false_alarm),
                format_probability(plan.detection),
                f"{plan.judge_calls:.1f}",
            ]
        )
    lines = head + table_lines(header, table, fmt)
    cheapest = plans.cheapest
    if cheapest is not None:
        lines += [
            "",
            f"cheapest in judge calls: {cheapest.policy.describe()}, "
            f"{cheapest.cases} cases, about {cheapest.judge_calls:.0f} calls per CI run",
        ]
    else:
        sizes = "at any size" if plans.max_cases is None else f"with up to {plans.max_cases} cases"
        lines += ["", f"no policy meets both targets {sizes}"]
    lines.append("exact search over every suite size (not bisection: feasibility is not monotone)")
    return "\n".join(lines) + "\n"
