"""What ``gatecal calibrate`` measured and shows: :class:`Calibration` (every check's rates,
the pooled ones, the corrected pass rate and the labels needed) and its parts;
:func:`~gatecal._analyses.calibrate.judge.calibrate_judge` in ``judge.py`` measures it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from gatecal._analyses.calibrate.correct import CorrectedRate
from gatecal._common.contracts import FieldsJSON, json_header
from gatecal._common.display import Displayed
from gatecal._common.intervals import Estimate
from gatecal._common.tables import format_probability
from gatecal._model.spec import SpecError, SuiteSpec, suite_to_spec
from gatecal._model.suite import Suite

__all__ = ["Calibration", "CheckCalibration", "ConfusionMatrix", "LabelPlan", "SelfConsistency"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfusionMatrix:
    """Judgements (not items) by the human's and the judge's verdict."""

    pass_pass: int  # human pass, judge pass
    pass_fail: int  # human pass, judge fail
    pass_unparseable: int
    fail_pass: int  # human fail, judge pass: the false "yes"
    fail_fail: int
    fail_unparseable: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "human_pass": {
                "judge_pass": self.pass_pass,
                "judge_fail": self.pass_fail,
                "unparseable": self.pass_unparseable,
            },
            "human_fail": {
                "judge_pass": self.fail_pass,
                "judge_fail": self.fail_fail,
                "unparseable": self.fail_unparseable,
            },
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class SelfConsistency(FieldsJSON):
    """How often two judgements of the same item disagree.

    Attributes
    ----------
    items : int
        Items judged at least twice.
    flip_rate : Estimate
        Share of pairs of judgements of one item that disagree (an unparseable reply
        counts as a fail, as in the gate), averaged over items.
    noise_floor : float
        The per-verdict flip rate e that would produce this disagreement,
        ``2 e (1 - e) = flip_rate``: the noise a gate sees from repeats alone is at
        least this much, whatever the labels say.
    """

    items: int
    flip_rate: Estimate
    noise_floor: float


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckCalibration:
    """The judge measured against the labels, for one check (or all checks pooled).

    The rates count each item once (see the module docstring); `matrix` counts
    judgements. ``tp``, ``fn``, ``fp``, ``tn`` are the item-weighted cells (an
    unparseable reply is a fail). `systematic` holds the items judged at least twice
    that the judge gets wrong (nearly) every time, as (item, wrong judgements,
    judgements), ``check/item`` when the checks are pooled: an item whose error rate is
    more likely above 0.9 than below (its Jeffreys posterior median above 0.9, as
    recommend calls a case systematic: 2 of 2, 29 of 30). They are errors of the judge
    (or the label) to fix, which repeats and majority votes cannot help;
    `systematic_share` is their part of the item-weighted errors ``fn + fp``.
    """

    check: str
    items: int
    pass_items: int
    fail_items: int
    judgements: int
    matrix: ConfusionMatrix
    tp: float
    fn: float
    fp: float
    tn: float
    sensitivity: Estimate
    specificity: Estimate
    fnr: Estimate
    fpr: Estimate
    accuracy: Estimate
    kappa: Estimate
    ac1: float
    unparseable: Estimate
    consistency: SelfConsistency | None
    systematic: tuple[tuple[str, int, int], ...] = ()
    systematic_share: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "items": self.items,
            "pass_items": self.pass_items,
            "fail_items": self.fail_items,
            "judgements": self.judgements,
            "confusion": self.matrix.to_dict(),
            "sensitivity": self.sensitivity.to_dict(),
            "specificity": self.specificity.to_dict(),
            "fnr": self.fnr.to_dict(),
            "fpr": self.fpr.to_dict(),
            "accuracy": self.accuracy.to_dict(),
            "kappa": self.kappa.to_dict(),
            "ac1": self.ac1,
            "unparseable": self.unparseable.to_dict(),
            "self_consistency": self.consistency.to_dict() if self.consistency else None,
            "systematic": [
                {"item": item, "wrong": wrong, "judgements": judged}
                for item, wrong, judged in self.systematic
            ],
            "systematic_share": self.systematic_share,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class LabelPlan:
    """How many labelled items give intervals of a target width.

    Attributes
    ----------
    width, confidence_level : float
        Target full width of the interval, and its level.
    fnr_pass_items, fpr_fail_items : int
        Truly passing items for an fnr interval that wide (at the measured fnr), and
        truly failing items for fpr: each class serves its own rate.
    pass_items, fail_items : int or None
        For the corrected pass rate: the optimal split, ``m1 : m0 = pi sqrt(Se (1-Se)) :
        (1-pi) sqrt(Sp (1-Sp))`` (it minimises the total for the delta-method variance).
        None without an observed rate, or when the judged run alone is too small.
    balanced_items : int or None
        Per class, if both classes get the same number (the common habit).
    min_observed : int or None
        When the judged run is too small for the width whatever the labels: the judged
        items needed.
    run_only_width : float or None
        The corrected rate's interval width with perfectly known Se and Sp: the floor
        that the judged run's own size sets, which no number of labels goes below.
    """

    width: float
    confidence_level: float
    fnr_pass_items: int
    fpr_fail_items: int
    pass_items: int | None
    fail_items: int | None
    balanced_items: int | None
    min_observed: int | None
    run_only_width: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "width": self.width,
            "confidence_level": self.confidence_level,
            "fnr_pass_items": self.fnr_pass_items,
            "fpr_fail_items": self.fpr_fail_items,
            "corrected_pass_items": self.pass_items,
            "corrected_fail_items": self.fail_items,
            "corrected_balanced_items_per_class": self.balanced_items,
            "min_observed": self.min_observed,
            "run_only_width": self.run_only_width,
        }


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Calibration(Displayed):
    """What ``gatecal calibrate`` measured; see :func:`calibrate_judge`.

    `pooled` is every check together (the same as the one check when there is one);
    `corrected` the true pass rate behind `observed`, using `corrected_check`'s rates.
    """

    source: str
    confidence_level: float
    checks: tuple[CheckCalibration, ...]
    pooled: CheckCalibration
    observed: tuple[float, float] | None
    observed_source: str
    corrected: CorrectedRate | None
    corrected_check: str
    plan: LabelPlan

    _renderer: ClassVar[str] = "gatecal._render.calibrate"

    def summary(self) -> str:
        """The judge's two error rates and the labels they rest on."""
        p = self.pooled
        return (
            f"judge false negatives {format_probability(p.fnr.estimate)}, false positives "
            f"{format_probability(p.fpr.estimate)}, over {p.items} labelled items "
            f"({len(self.checks)} checks)"
        )

    def to_frame(self) -> Any:
        """One row per check and one pooled: items and each rate's estimate."""
        import pandas as pd  # deferred: `import gatecal` stays light

        return pd.DataFrame(
            [
                {
                    "check": "pooled" if c is self.pooled else c.check,
                    "items": c.items,
                    "sensitivity": c.sensitivity.estimate,
                    "specificity": c.specificity.estimate,
                    "fnr": c.fnr.estimate,
                    "fpr": c.fpr.estimate,
                    "kappa": c.kappa.estimate,
                    "unparseable": c.unparseable.estimate,
                }
                for c in (*self.checks, self.pooled)
            ]
        )

    def rates(self, *, conservative: bool = False) -> dict[str, tuple[float, float]]:
        """``{check: (fnr, fpr)}``: point estimates, or with `conservative` upper bounds.

        A table without a ``check`` column names its one check ``judge``.
        """
        out = {}
        for c in self.checks:
            if conservative:
                out[c.check or "judge"] = (c.fnr.high, c.fpr.high)
            else:
                out[c.check or "judge"] = (c.fnr.estimate, c.fpr.estimate)
        return out

    def suite_spec(
        self, *, conservative: bool = False, base: SuiteSpec | None = None
    ) -> dict[str, Any]:
        """A suite spec whose judge checks carry the measured fnr and fpr.

        With `base`, its judge checks get the rates of the calibrated check of the same
        name (all of them the one check's rates when one check was calibrated). Without,
        12 cases with one judge check per calibrated check and no code check, so a quarter
        of the cases fail their first judge check in the regressed build: a regression
        the judge must catch, where its fpr (a false "yes") decides. The rates count an
        unparseable reply as the gate does (a false "no" on a passing answer), so use the
        spec without ``--unparseable``.
        """
        rates = self.rates(conservative=conservative)
        if base is None:
            suite = Suite.uniform(cases=12, judge_checks=len(rates), code_checks=0)
            spec = suite_to_spec(suite)
            for i, (name, (fnr, fpr)) in enumerate(rates.items()):
                spec["checks"][i] = {"name": name, "kind": "judge", "fnr": fnr, "fpr": fpr}
            return spec
        spec = suite_to_spec(base.suite)
        judges = [c for c in spec["checks"] if c["kind"] == "judge"]
        if not judges:
            raise SpecError("--suite: `checks` has no judge check to give the measured rates")
        if len(rates) > 1:
            names = {c["name"] for c in judges}
            for c in judges:
                if c["name"] not in rates:
                    raise SpecError(
                        f"--suite: judge check {c['name']!r} has no labels "
                        f"(labelled checks: {', '.join(sorted(rates))})"
                    )
            extra = sorted(set(rates) - names)
            if extra:
                raise SpecError(f"--suite: labelled check {extra[0]!r} is not a judge check")
        for c in judges:
            c["fnr"], c["fpr"] = rates.get(c["name"], next(iter(rates.values())))
        if base.per_case:
            spec["case_rates"] = {k: {"fnr": a, "fpr": b} for k, (a, b) in base.per_case.items()}
        return spec

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract ``gatecal.calibrate``, its header first."""
        out: dict[str, Any] = {
            **json_header("calibrate"),
            "source": self.source,
            "confidence_level": self.confidence_level,
        }
        out |= self.pooled.to_dict()
        del out["check"]
        out["checks"] = [c.to_dict() for c in self.checks]
        if self.observed is not None:
            k, n = self.observed
            out["observed"] = {
                "passed": k,
                "items": n,
                "rate": k / n,
                "source": self.observed_source,
            }
            out["corrected_check"] = self.corrected_check
        if self.corrected is not None:
            out["corrected"] = self.corrected.to_dict()
        out["plan"] = self.plan.to_dict()
        return out
