"""What the known-good runs showed about the judge's noise, as two small results the large
ones nest: :class:`MeasuredNoise` (a recommendation's measured noise) and
:class:`BaselineEvidence` (what a check's decision rests on, its JSON's ``baseline``).
"""

from __future__ import annotations

from dataclasses import dataclass

from gatecal._analyses.noise.overdispersion import Overdispersion
from gatecal._common.contracts import FieldsJSON
from gatecal._common.intervals import RateEstimate

__all__ = ["BaselineEvidence", "MeasuredNoise"]


@dataclass(frozen=True, slots=True, kw_only=True)
class MeasuredNoise(FieldsJSON):
    """The judge's noise as the known-good runs measured it, and the region the gates
    allow for: its JSON is these keys of the ``gatecal.recommend`` JSON, in its order.

    Attributes
    ----------
    noise : RateEstimate
        The pooled case failure rate, with its interval at the recommendation's level and
        method.
    noise_for_gate : RateEstimate
        The rate over the joint (rate, icc) confidence region, as the gates' model uses it.
    icc_for_gate : float
        The largest run-to-run correlation in that region.
    gate_level : float
        The one-sided level of each gate's bound: its false alarm from above, its
        detection from below.
    judge_noise : RateEstimate or None
        The judge verdicts wrongly "no", when the runs tell judge checks apart.
    overdispersion : Overdispersion
        The beta-binomial fit of the failures per run (icc) and its test of icc = 0.
    correlated : bool
        Whether that test finds run-to-run correlation at the given significance.
    """

    noise: RateEstimate
    noise_for_gate: RateEstimate
    icc_for_gate: float
    gate_level: float
    judge_noise: RateEstimate | None
    overdispersion: Overdispersion
    correlated: bool

    def evidence(self, runs: int) -> BaselineEvidence:
        """What a check's decision rests on, from these `runs` known-good runs."""
        return BaselineEvidence(
            runs=runs,
            noise_for_gate=self.noise_for_gate,
            icc_for_gate=self.icc_for_gate,
            overdispersion=self.overdispersion,
            correlated=self.correlated,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class BaselineEvidence(FieldsJSON):
    """The known-good runs a check decided against, as its gate's model uses them: the
    ``baseline`` object of the ``gatecal.check`` JSON.

    Attributes
    ----------
    runs : int
        The known-good runs.
    noise_for_gate : RateEstimate
        Their pooled case failure rate over the (rate, icc) confidence region, as the
        gate's model uses it (recommend's).
    icc_for_gate : float
        The largest run-to-run correlation in that region.
    overdispersion : Overdispersion
        The beta-binomial fit of their failures per run and its test of icc = 0.
    correlated : bool
        Whether that test finds run-to-run correlation.
    """

    runs: int
    noise_for_gate: RateEstimate
    icc_for_gate: float
    overdispersion: Overdispersion
    correlated: bool
