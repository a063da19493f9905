"""Measure the judge against human labels: its error rates, agreement, consistency, and
the true pass rate behind a judged one (``gatecal calibrate``).

A label table has one row per judgement of a labelled item: ``item``, ``human`` (the true
verdict), ``judge`` (the judge's), optionally ``check`` and ``repeat``. The judge's error
rates are what the gates need: fnr (a false "no" on a truly passing answer) and fpr (a
false "yes" on a truly failing one). An unparseable reply is its own share and, as in the
gates, never a pass: on a truly passing item it counts toward fnr.

An item judged several times counts once in every rate and interval, with the share of
its judgements that said pass; binomial intervals on such shares are conservative (a
share varies less than a single verdict with the same mean).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import Any

from gatecal._analyses.calibrate.correct import (
    CORRECTION_METHODS,
    correct_pass_rate,
)
from gatecal._analyses.calibrate.result import (
    Calibration,
    CheckCalibration,
    ConfusionMatrix,
    LabelPlan,
    SelfConsistency,
)
from gatecal._analyses.noise.cases import SYSTEMATIC_RATE
from gatecal._common.intervals import Estimate, clopper_pearson
from gatecal._common.validate import ParameterError, check_probability
from gatecal.readers._data import RunsData
from gatecal.readers.labels.columns import UNPARSEABLE_VALUES, Label, LabelColumns, LabelsError
from gatecal.readers.labels.reader import read_labels

__all__ = [
    "UNPARSEABLE_VALUES",
    "Calibration",
    "CheckCalibration",
    "ConfusionMatrix",
    "Estimate",
    "Label",
    "LabelPlan",
    "LabelsError",
    "SelfConsistency",
    "calibrate_judge",
    "labels_for_width",
    "observed_from_runs",
    "plan_labels",
    "read_labels",
]


# -- statistics ------------------------------------------------------------------------


def _clopper_pearson(k: float, n: float, level: float) -> Estimate:
    """Exact (Clopper-Pearson) interval; fractional counts use the same beta quantiles."""
    low, high = clopper_pearson(k, n, level)
    return Estimate(estimate=k / n, low=low, high=high, method="clopper-pearson")


def _kappa(tp: float, fn: float, fp: float, tn: float, level: float) -> tuple[Estimate, float]:
    """Cohen's kappa with the Fleiss-Cohen-Everitt (1969) large-sample interval; Gwet's AC1.

    Rows are the human's verdict, columns the judge's; index 0 is pass.
    """
    n = tp + fn + fp + tn
    p = [[tp / n, fn / n], [fp / n, tn / n]]
    rows = [p[0][0] + p[0][1], p[1][0] + p[1][1]]
    cols = [p[0][0] + p[1][0], p[0][1] + p[1][1]]
    po = p[0][0] + p[1][1]
    pe = rows[0] * cols[0] + rows[1] * cols[1]
    kappa = (po - pe) / (1 - pe)
    a = sum(p[i][i] * (1 - (rows[i] + cols[i]) * (1 - kappa)) ** 2 for i in range(2))
    b = (1 - kappa) ** 2 * sum(
        p[i][j] * (cols[i] + rows[j]) ** 2 for i in range(2) for j in range(2) if i != j
    )
    c = (kappa - pe * (1 - kappa)) ** 2
    var = max(0.0, (a + b - c) / (n * (1 - pe) ** 2))
    z = NormalDist().inv_cdf(0.5 + level / 2)
    half = z * math.sqrt(var)
    est = Estimate(
        estimate=kappa,
        low=max(-1.0, kappa - half),
        high=min(1.0, kappa + half),
        method="fleiss-cohen-everitt",
    )
    share = (rows[0] + cols[0]) / 2
    pe_ac1 = 2 * share * (1 - share)
    return est, (po - pe_ac1) / (1 - pe_ac1)


def _in_order(values: Any, start: int = 0) -> float:
    """``total = total + start - v`` (start 0: ``total + v``) over `values` in order, from
    0.0, as a loop over the items adds them: the order fixes a float sum's last bits.
    Whole numbers (one judgement per item) add exactly in any order."""
    import numpy as np

    if not len(values):
        return 0.0
    if (values == np.floor(values)).all():  # whole numbers < 2^53: exact
        return float(start * len(values) - values.sum() if start else values.sum())
    total = 0.0
    if start:
        for v in values.tolist():
            total = total + start - v
    else:
        for v in values.tolist():
            total = total + v
    return total


def _measure(check: str, labels: LabelColumns, rows: Any, level: float) -> CheckCalibration:
    """The judge against the labels `rows` selects (a mask, or None for all)."""
    import numpy as np

    keys, first = labels.keys()
    human, judge = labels.array("human"), labels.array("judge")
    if rows is not None:
        keys, human, judge = keys[rows], human[rows], judge[rows]
    size = len(first)
    # per item (in order of first appearance): judgements, passes, unparseable replies
    r = np.bincount(keys, minlength=size)
    present = np.flatnonzero(r)  # the items of these rows, in order
    r = r[present]
    passed = np.bincount(keys[judge == 1], minlength=size)[present]
    none = np.bincount(keys[judge < 0], minlength=size)[present]
    item_human = labels.array("human")[first][present].astype(bool)
    share = passed / r
    tp, fn = _in_order(share[item_human]), _in_order(share[item_human], 1)
    fp, tn = _in_order(share[~item_human]), _in_order(share[~item_human], 1)
    unparseable = _in_order(none / r)
    multi_items = r >= 2
    multi = int(multi_items.sum())
    m_r, m_passed = r[multi_items], passed[multi_items]
    disagree = _in_order((m_passed * (m_r - m_passed)) / ((m_r * (m_r - 1)) / 2))
    pass_items = int(item_human.sum())
    fail_items = len(present) - pass_items
    name = check or "the judge"
    if not pass_items or not fail_items:
        missing = "failing" if not fail_items else "passing"
        rate = "specificity (fpr)" if not fail_items else "sensitivity (fnr)"
        raise LabelsError(
            f"{name}: no truly {missing} items labelled; {rate} needs both classes "
            "(label some answers the judge should reject and some it should accept)"
        )
    cells = np.bincount((1 - human.astype(np.int64)) * 3 + (1 - judge), minlength=6).tolist()
    matrix = ConfusionMatrix(
        pass_pass=cells[0],
        pass_fail=cells[1],
        pass_unparseable=cells[2],
        fail_pass=cells[3],
        fail_fail=cells[4],
        fail_unparseable=cells[5],
    )
    sens = _clopper_pearson(tp, pass_items, level)
    spec = _clopper_pearson(tn, fail_items, level)
    kappa, ac1 = _kappa(tp, fn, fp, tn, level)
    consistency = None
    if multi:
        flips = _clopper_pearson(disagree, multi, level)
        floor = (1 - math.sqrt(max(0.0, 1 - 2 * flips.estimate))) / 2
        consistency = SelfConsistency(items=multi, flip_rate=flips, noise_floor=floor)
    total = pass_items + fail_items
    # judged twice or more and wrong (nearly) every time: the error rate's Jeffreys
    # posterior median above SYSTEMATIC_RATE
    from scipy.special import betainc

    wrong_counts = np.where(item_human, r - passed, passed)
    right_counts = r - wrong_counts
    above = betainc(wrong_counts + 0.5, right_counts + 0.5, SYSTEMATIC_RATE) < 0.5
    stuck = multi_items & above
    item_names, check_names = labels.values("item"), labels.values("check")
    pooled = rows is None and len(check_names) > 1
    systematic = []
    for k, wrong, judged in zip(
        first[present[stuck]].tolist(),
        wrong_counts[stuck].tolist(),
        r[stuck].tolist(),
        strict=True,
    ):
        item = item_names[labels.codes("item")[k]]
        name = f"{check_names[labels.codes('check')[k]]}/{item}" if pooled else item
        systematic.append((name, int(wrong), int(judged)))
    errors = fn + fp
    stuck_errors = _in_order(wrong_counts[stuck] / r[stuck])
    return CheckCalibration(
        check=check,
        items=total,
        pass_items=pass_items,
        fail_items=fail_items,
        judgements=len(human),
        matrix=matrix,
        tp=tp,
        fn=fn,
        fp=fp,
        tn=tn,
        sensitivity=sens,
        specificity=spec,
        fnr=_clopper_pearson(fn, pass_items, level),
        fpr=_clopper_pearson(fp, fail_items, level),
        accuracy=_clopper_pearson(tp + tn, total, level),
        kappa=kappa,
        ac1=ac1,
        unparseable=_clopper_pearson(unparseable, total, level),
        consistency=consistency,
        systematic=tuple(systematic),
        systematic_share=stuck_errors / errors if errors else 0.0,
    )


def labels_for_width(rate: float, width: float, confidence_level: float = 0.95) -> int:
    """Smallest number of items whose Clopper-Pearson interval at `rate` is at most `width`.

    The expected count ``m * rate`` is used as is (fractional), so the answer does not
    jump with rounding.

    Parameters
    ----------
    rate : float
        The error rate the labels measure (fnr or fpr), in [0, 1].
    width : float
        The widest acceptable interval, in (0, 1].
    confidence_level : float, default 0.95
        The interval's level, in [0, 1].

    Returns
    -------
    int
        The number of labelled items, at least 1.

    Raises
    ------
    ParameterError
        If a value is out of range, or more than 10^8 items would be needed.
    """
    r = check_probability("rate", rate)
    w = check_probability("width", width)
    level = check_probability("confidence_level", confidence_level)
    if w <= 0:
        raise ParameterError("width", "must be > 0", width)

    def wide(m: int) -> float:
        est = _clopper_pearson(m * r, m, level)
        return est.high - est.low

    low, high = 1, 2
    while wide(high) > w:
        low, high = high, high * 2
        if high > 10**8:
            raise ParameterError("width", "needs more than 10^8 items", width)
    while low < high:  # the width falls with m: bisect for the first m that fits
        mid = (low + high) // 2
        if wide(mid) <= w:
            high = mid
        else:
            low = mid + 1
    return low


def plan_labels(
    *,
    fnr: float,
    fpr: float,
    width: float = 0.10,
    confidence_level: float = 0.95,
    pass_rate: float | None = None,
    observed_items: float | None = None,
) -> LabelPlan:
    """Labelled items needed for intervals `width` wide, and how to split them.

    fnr and fpr each need their own class: ``labels_for_width(fnr, width)`` truly
    passing items and ``labels_for_width(fpr, width)`` truly failing ones. The corrected
    pass rate (when `pass_rate` and the judged run's size are given) has the delta-method
    variance ``[p(1-p)/n + pi^2 Se(1-Se)/m1 + (1-pi)^2 Sp(1-Sp)/m0] / J^2``; for a fixed
    total ``m1 + m0`` it is smallest at ``m1 / m0 = pi sqrt(Se(1-Se)) / ((1-pi)
    sqrt(Sp(1-Sp)))``. Near a 100% pass rate, almost all labels should be passing
    answers.

    Parameters
    ----------
    fnr, fpr : float
        The judge's expected error rates, each in [0, 1].
    width : float, default 0.10
        The widest acceptable interval, in (0, 1].
    confidence_level : float, default 0.95
        The intervals' level, in [0, 1].
    pass_rate : float, optional
        The expected true pass rate, in [0, 1], for the split of labels that narrows the
        corrected pass rate most; needs `observed_items`.
    observed_items : float, optional
        The items of the judged run whose pass rate is corrected; needs `pass_rate`.

    Returns
    -------
    LabelPlan
        The truly passing and truly failing items each rate needs, and (given
        `pass_rate` and `observed_items`) the best split for the corrected pass rate.

    Raises
    ------
    ParameterError
        If a rate, width or level is out of range.
    """
    level = check_probability("confidence_level", confidence_level)
    plan_fnr = labels_for_width(fnr, width, level)
    plan_fpr = labels_for_width(fpr, width, level)
    m1 = m0 = balanced = need_n = None
    floor = None
    if pass_rate is not None and observed_items is not None:
        pi = check_probability("pass_rate", pass_rate)
        se, sp = 1 - fnr, 1 - fpr
        youden = se + sp - 1
        if youden > 0:
            z = NormalDist().inv_cdf(0.5 + level / 2)
            budget = (width / (2 * z)) ** 2 * youden**2
            p = pi * se + (1 - pi) * (1 - sp)
            floor = 2 * z * math.sqrt(p * (1 - p) / observed_items) / youden
            left = budget - p * (1 - p) / observed_items
            a, b = pi**2 * se * (1 - se), (1 - pi) ** 2 * sp * (1 - sp)
            if left <= 0:
                need_n = math.ceil(p * (1 - p) / budget)
            else:
                root = math.sqrt(a) + math.sqrt(b)
                m1 = max(1, math.ceil(math.sqrt(a) * root / left))
                m0 = max(1, math.ceil(math.sqrt(b) * root / left))
                balanced = max(1, math.ceil((a + b) / left))
    return LabelPlan(
        width=width,
        confidence_level=level,
        fnr_pass_items=plan_fnr,
        fpr_fail_items=plan_fpr,
        pass_items=m1,
        fail_items=m0,
        balanced_items=balanced,
        min_observed=need_n,
        run_only_width=floor,
    )


def observed_from_runs(data: RunsData, check: str | None = None) -> tuple[float, int]:
    """The pooled judged pass rate of measured runs, as ``(passes, items)``.

    Uses the healthy build's judge verdicts (``kind`` judge) when kinds are given, only
    `check`'s when it is named, else every verdict (each taken as one judge verdict,
    e.g. one JUnit testcase per case). A (case, check) judged in several runs counts
    once, with the share of its runs in which it passed, so repeated nights of the same
    cases do not pose as more items than there are.

    Parameters
    ----------
    data : RunsData
        Runs from :func:`gatecal.read_runs`, with healthy verdicts.
    check : str, optional
        The check whose verdicts to pool; default the judge checks (or every verdict
        when the runs give no kinds).

    Returns
    -------
    (float, int)
        The judged passes (fractional: each item's share of passing runs) and the
        distinct (case, check) items.

    Raises
    ------
    ParameterError
        If `check` names no check of the runs, or there is no healthy verdict.
    """
    verdicts = [v for v in data.verdicts if v.build == "healthy" and v.status == "ok"]
    if check is not None and any(v.check for v in verdicts):
        verdicts = [v for v in verdicts if v.check == check]
        if not verdicts:
            raise ParameterError("check", "must name a check of the runs", check)
    elif any(v.kind == "judge" for v in verdicts):
        verdicts = [v for v in verdicts if v.kind == "judge"]
    if not verdicts:
        raise ParameterError("runs", "must hold verdicts of the healthy build", "none")
    shares: dict[tuple[str, str], list[bool]] = {}
    for v in verdicts:
        shares.setdefault((v.case, v.check), []).append(bool(v.passed))
    passes = sum(sum(runs) / len(runs) for runs in shares.values())
    return passes, len(shares)


def calibrate_judge(
    labels: Sequence[Label],
    *,
    confidence_level: float = 0.95,
    observed: tuple[float, float] | None = None,
    observed_source: str = "",
    check: str | None = None,
    width: float = 0.10,
    method: str = CORRECTION_METHODS[0],
    source: str = "",
) -> Calibration:
    """Measure the judge against human labels, per check and pooled.

    Parameters
    ----------
    labels : sequence of Label
        From :func:`read_labels` (its columns are counted as they are; any other
        sequence is put in columns first).
    confidence_level : float
        Of every interval.
    observed : (k, n), optional
        A judged pass rate to correct (the judge said pass on k of n items).
    observed_source : str
        Where `observed` came from (a runs file), recorded in the result.
    check : str, optional
        Whose rates correct `observed`; default all checks pooled.
    width : float
        Target interval width for the label plan.
    method : str
        Interval method of the corrected rate (see :func:`correct_pass_rate`).
    source : str
        Where the labels came from (a file), named in errors and in the result.

    Raises
    ------
    LabelsError
        A check without truly passing or truly failing items, or no labels.
    ParameterError
        A bad level, width, observed pair or check name.
    """
    level = check_probability("confidence_level", confidence_level)
    if not 0 < level < 1:
        raise ParameterError("confidence_level", "must be in (0, 1)", confidence_level)
    if isinstance(labels, str | bytes) or not isinstance(labels, Sequence):
        what = "a sequence of gatecal.Label (from gatecal.read_labels)"
        raise ParameterError("labels", f"must be {what}", type(labels).__name__)
    if not labels:
        raise LabelsError(f"{source or 'labels'}: no labelled items")
    if not isinstance(labels[0], Label):
        what = "a sequence of gatecal.Label (from gatecal.read_labels)"
        raise ParameterError("labels", f"must be {what}", type(labels[0]).__name__)
    table = LabelColumns.of(labels)  # counted from the columns, never label by label
    names = list(table.values("check"))  # in order of first appearance
    codes = table.codes("check")
    checks = tuple(
        _measure(name, table, None if len(names) == 1 else codes == i, level)
        for i, name in enumerate(names)
    )
    pooled = checks[0] if len(checks) == 1 else _measure("(all checks)", table, None, level)
    chosen = pooled
    if check is not None:
        found = [c for c in checks if c.check == check]
        if not found and names == [""]:
            raise ParameterError("check", "needs a `check` column in the labels", check)
        if not found:
            raise ParameterError("check", f"must be one of {', '.join(map(repr, names))}", check)
        chosen = found[0]
    corrected = None
    if observed is not None:
        corrected = correct_pass_rate(
            observed=observed,
            sensitivity=(chosen.tp, chosen.pass_items),
            specificity=(chosen.tn, chosen.fail_items),
            confidence=level,
            method=method,
        )
    pass_rate = None
    if corrected is not None:
        pass_rate = corrected.estimate if corrected.estimate is not None else corrected.observed
    # Plan at add-one-each-way rates (Agresti-Coull style): a measured 0 is not a plan.
    plan = plan_labels(
        fnr=(chosen.fn + 1) / (chosen.pass_items + 2),
        fpr=(chosen.fp + 1) / (chosen.fail_items + 2),
        width=width,
        confidence_level=level,
        pass_rate=pass_rate,
        observed_items=None if observed is None else float(observed[1]),
    )
    return Calibration(
        source=source,
        confidence_level=level,
        checks=checks,
        pooled=pooled,
        observed=None if observed is None else (observed[0], observed[1]),
        observed_source=observed_source,
        corrected=corrected,
        corrected_check=chosen.check,
        plan=plan,
    )
