"""The two numbers a gate is chosen against: the false-alarm budget and the detection target.

Every analysis that searches or rates a gate (recommend, plan, policies, a sequential check,
compare's plan) holds them as one :class:`Targets`. Its JSON is the ``"targets"`` object of
the ``gatecal.recommend`` and ``gatecal.plan`` documents; the documents that have always
written the two numbers flat (a sequential design's boundary file, the sequential check,
the sequential rows of ``gatecal.policies``, ``gatecal.plan.compare``) keep them flat under
``false_alarm_target`` and ``detection_target`` (:meth:`Targets.flat`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gatecal._common.contracts import FieldsJSON

__all__ = ["Targets", "with_flat_targets"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Targets(FieldsJSON):
    """The false-alarm budget and the detection target a gate was chosen for.

    Attributes
    ----------
    false_alarm : float
        The budget: the most false alarms accepted, P(the gate fails | healthy build) at
        most this (``--false-alarm``).
    detection : float
        The target: the least detection needed, P(the gate fails | regressed build) at
        least this (``--detection``); ``nan`` where nothing was searched for it (boundaries
        given by hand or by Wald's formulas).

    Examples
    --------
    >>> import gatecal
    >>> plans = gatecal.plan_suite(noise=gatecal.JudgeNoise.flip(0.08), regression=2)
    >>> plans.targets
    Targets(false_alarm=0.05, detection=0.95)
    >>> plans.targets.to_dict()
    {'false_alarm': 0.05, 'detection': 0.95}
    """

    false_alarm: float
    detection: float

    def flat(self) -> dict[str, float]:
        """The two numbers under the flat keys the boundary file, the sequential check and
        the ``gatecal.plan.compare`` JSON write: ``false_alarm_target``, ``detection_target``."""
        return {"false_alarm_target": self.false_alarm, "detection_target": self.detection}


def with_flat_targets(fields: Mapping[str, Any], targets: Targets) -> dict[str, Any]:
    """`fields` (a result's fields as JSON data, in their order) with its ``targets``
    entry replaced, in its place, by :meth:`Targets.flat` of `targets`."""
    out: dict[str, Any] = {}
    for name, value in fields.items():
        out.update(targets.flat() if name == "targets" else {name: value})
    return out
