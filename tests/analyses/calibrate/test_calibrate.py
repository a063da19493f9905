"""gatecal calibrate: labels, the judge's rates against exact references, the corrected pass
rate and the coverage of its interval, the label plan, the command and its worked example."""

import csv
import json
import math
import re
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, strategies as st
from scipy import stats
from statsmodels.stats.inter_rater import cohens_kappa

import gatecal
from experiments import calibrate_coverage as study, calibrate_example
from gatecal.cli import main
from tests.paths import ROOT
from tests.regen import assert_same


def _write(path, rows, header=("item", "human", "judge")):
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def _table(tp, fn, fp, tn, fn_unparseable=0, fp_unparseable=0):
    """One row per item: the 2x2 table (plus unparseable replies) as label rows."""
    rows = []
    cells = [("pass", "pass", tp), ("pass", "fail", fn), ("fail", "pass", fp), ("fail", "fail", tn),
             ("pass", "unparseable", fn_unparseable), ("fail", "unparseable", fp_unparseable)]  # fmt: skip
    for human, judge, count in cells:
        rows += [(f"{human}-{judge}-{i}", human, judge) for i in range(count)]
    return rows


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


# -- reading -----------------------------------------------------------------------------


def test_csv_with_bom_and_every_spelling(tmp_path):
    path = tmp_path / "labels.csv"
    text = "item,human,judge\nA,Pass,YES\nB,no,0\nC,true,unparseable\nD,FAIL,Error\nE,1,True\n"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())  # Excel writes a BOM
    labels = gatecal.read_labels(path)
    assert [(x.item, x.human, x.judge) for x in labels] == [
        ("A", True, True), ("B", False, False), ("C", True, None), ("D", False, None), ("E", True, True),
    ]  # fmt: skip


def test_jsonl_with_json_booleans_checks_and_repeats(tmp_path):
    path = tmp_path / "labels.jsonl"
    rows = [{"item": "a", "human": True, "judge": 1, "check": "relevant", "repeat": 1},
            {"item": "a", "human": True, "judge": "no", "check": "relevant", "repeat": 2},
            {"item": "a", "human": False, "judge": False, "check": "grounded"}]  # fmt: skip
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8-sig")
    labels = gatecal.read_labels(path)
    assert [(x.check, x.repeat, x.judge) for x in labels] == [
        ("relevant", "1", True), ("relevant", "2", False), ("grounded", "#1", False),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (
            [("a", "maybe", "pass")],
            r"labels.csv:2: `human` must be pass/fail, yes/no, true/false or 1/0 \(got 'maybe'\)",
        ),
        (
            [("a", "pass", "perhaps")],
            r"labels.csv:2: `judge` must be .* or unparseable/error/unscored \(got 'perhaps'\)",
        ),
        ([("a", "pass", "")], r"labels.csv:2: missing `judge` \(write 'unparseable'"),
        ([("a", "unparseable", "pass")], r"`human` must be pass/fail"),
        ([("", "pass", "pass")], r"labels.csv:2: missing `item`"),
        (
            [("a", "pass", "pass"), ("b", "fail", "fail"), ("a", "fail", "pass")],
            r"labels.csv:4: item 'a' is labelled fail here and pass at .*labels.csv:2; one item has one true verdict",
        ),
    ],
)
def test_bad_labels_are_named(tmp_path, rows, message):
    with pytest.raises(gatecal.LabelsError, match=message):
        gatecal.read_labels(_write(tmp_path / "labels.csv", rows))


def test_structural_label_errors(tmp_path):
    with pytest.raises(
        gatecal.LabelsError, match=r"needs columns item, human, judge \(missing \['judge'\]\)"
    ):
        gatecal.read_labels(_write(tmp_path / "a.csv", [("a", "pass")], header=("item", "human")))
    dup = _write(tmp_path / "b.csv", [("a", "pass", "pass", "1"), ("a", "pass", "fail", "1")],
                 header=("item", "human", "judge", "repeat"))  # fmt: skip
    with pytest.raises(gatecal.LabelsError, match=r"b.csv:3: item 'a', repeat '1' appears twice"):
        gatecal.read_labels(dup)
    with pytest.raises(gatecal.LabelsError, match="no labelled items"):
        gatecal.read_labels(_write(tmp_path / "c.csv", []))
    (tmp_path / "d.txt").write_text("x")
    with pytest.raises(gatecal.LabelsError, match=r"must be \.csv or \.jsonl"):
        gatecal.read_labels(tmp_path / "d.txt")
    with pytest.raises(gatecal.LabelsError, match="cannot read"):
        gatecal.read_labels(tmp_path / "missing.csv")


@pytest.mark.parametrize(("human", "missing"), [("pass", "failing"), ("fail", "passing")])
def test_an_empty_class_is_an_error(tmp_path, human, missing):
    labels = gatecal.read_labels(
        _write(tmp_path / "l.csv", [("a", human, "pass"), ("b", human, "fail")])
    )
    with pytest.raises(gatecal.LabelsError, match=f"the judge: no truly {missing} items labelled"):
        gatecal.calibrate_judge(labels)


# -- the judge's rates against exact references --------------------------------------------


def _fraction_kappa(tp, fn, fp, tn):
    n = tp + fn + fp + tn
    po = Fraction(tp + tn, n)
    pe = Fraction((tp + fn) * (tp + fp) + (fp + tn) * (fn + tn), n * n)
    share = Fraction(2 * tp + fn + fp, 2 * n)
    pe1 = 2 * share * (1 - share)
    return (po - pe) / (1 - pe), (po - pe1) / (1 - pe1)


@pytest.mark.parametrize(
    ("tp", "fn", "fp", "tn"), [(74, 6, 9, 71), (92, 8, 3, 57), (18, 2, 0, 20), (40, 1, 12, 7)]
)
def test_rates_kappa_and_ac1_match_exact_fractions(tmp_path, tp, fn, fp, tn):
    labels = gatecal.read_labels(_write(tmp_path / "l.csv", _table(tp, fn, fp, tn)))
    c = gatecal.calibrate_judge(labels).pooled
    assert (c.matrix.pass_pass, c.matrix.pass_fail, c.matrix.fail_pass, c.matrix.fail_fail) == (
        tp,
        fn,
        fp,
        tn,
    )
    assert c.sensitivity.estimate == pytest.approx(float(Fraction(tp, tp + fn)), rel=1e-15)
    assert c.specificity.estimate == pytest.approx(float(Fraction(tn, fp + tn)), rel=1e-15)
    assert c.fnr.estimate == pytest.approx(float(Fraction(fn, tp + fn)), rel=1e-14)
    assert c.fpr.estimate == pytest.approx(float(Fraction(fp, fp + tn)), rel=1e-14)
    assert c.accuracy.estimate == pytest.approx(
        float(Fraction(tp + tn, tp + fn + fp + tn)), rel=1e-15
    )
    kappa, ac1 = _fraction_kappa(tp, fn, fp, tn)
    assert c.kappa.estimate == pytest.approx(float(kappa), rel=1e-13)
    assert c.ac1 == pytest.approx(float(ac1), rel=1e-13)


@pytest.mark.parametrize(
    ("tp", "fn", "fp", "tn"), [(74, 6, 9, 71), (92, 8, 3, 57), (18, 2, 0, 20), (20, 0, 5, 15)]
)
@pytest.mark.parametrize("level", [0.9, 0.95])
def test_intervals_match_scipy_and_statsmodels(tmp_path, tp, fn, fp, tn, level):
    labels = gatecal.read_labels(_write(tmp_path / "l.csv", _table(tp, fn, fp, tn)))
    c = gatecal.calibrate_judge(labels, confidence_level=level).pooled
    # Clopper-Pearson: scipy's exact binomial test inverted
    for est, k, n in ((c.sensitivity, tp, tp + fn), (c.specificity, tn, fp + tn)):
        ref = stats.binomtest(k, n).proportion_ci(level, method="exact")
        assert (est.low, est.high) == pytest.approx((ref.low, ref.high), abs=1e-12)
    ref = stats.binomtest(fn, tp + fn).proportion_ci(level, method="exact")
    assert (c.fnr.low, c.fnr.high) == pytest.approx((ref.low, ref.high), abs=1e-12)
    # Cohen's kappa and its large-sample interval: statsmodels' implementation
    sm = cohens_kappa([[tp, fn], [fp, tn]])
    z = stats.norm.ppf(0.5 + level / 2)
    assert c.kappa.estimate == pytest.approx(sm.kappa, rel=1e-12)
    assert c.kappa.low == pytest.approx(max(-1, sm.kappa - z * sm.std_kappa), rel=1e-10)
    assert c.kappa.high == pytest.approx(min(1, sm.kappa + z * sm.std_kappa), rel=1e-10)
    if level == 0.95:  # statsmodels' own 95% limits
        assert (c.kappa.low, c.kappa.high) == pytest.approx(
            (sm.kappa_low, min(1, sm.kappa_upp)), rel=1e-10
        )


def test_unparseable_is_never_a_pass(tmp_path):
    labels = gatecal.read_labels(
        _write(tmp_path / "l.csv", _table(8, 0, 1, 9, fn_unparseable=2, fp_unparseable=3))
    )
    c = gatecal.calibrate_judge(labels).pooled
    assert c.fnr.estimate == pytest.approx(0.2)  # 2 unparseable of 10 truly passing: false "no"
    assert c.fpr.estimate == pytest.approx(1 / 13)  # unparseable on a failing answer is no "yes"
    assert c.unparseable.estimate == pytest.approx(5 / 23)
    assert (c.matrix.pass_unparseable, c.matrix.fail_unparseable) == (2, 3)


def test_repeats_count_each_item_once_and_measure_consistency(tmp_path):
    rows = [("a", "pass", "pass", 1), ("a", "pass", "fail", 2), ("a", "pass", "pass", 3),
            ("b", "pass", "pass", 1), ("b", "pass", "pass", 2), ("b", "pass", "pass", 3),
            ("c", "fail", "fail", 1), ("c", "fail", "unparseable", 2), ("c", "fail", "pass", 3),
            ("d", "fail", "fail", 1)]  # fmt: skip
    labels = gatecal.read_labels(
        _write(tmp_path / "l.csv", rows, ("item", "human", "judge", "repeat"))
    )
    c = gatecal.calibrate_judge(labels).pooled
    assert c.items == 4 and c.judgements == 10
    assert c.sensitivity.estimate == pytest.approx(float((Fraction(2, 3) + 1) / 2))
    assert c.fpr.estimate == pytest.approx(float(Fraction(1, 3) / 2))
    # disagreeing pairs / pairs, per item judged at least twice: a 2/3, b 0, c 2/3
    flip = (Fraction(2, 3) + 0 + Fraction(2, 3)) / 3
    assert c.consistency.items == 3
    assert c.consistency.flip_rate.estimate == pytest.approx(float(flip))
    e = c.consistency.noise_floor
    assert 2 * e * (1 - e) == pytest.approx(float(flip))


def test_checks_are_calibrated_separately_and_pooled(tmp_path):
    rows = [(f"i{i}", "pass", "pass", "relevant") for i in range(9)] + [
        ("i9", "pass", "fail", "relevant")
    ]
    rows += [(f"j{i}", "fail", "fail", "relevant") for i in range(5)]
    rows += [(f"i{i}", "pass", "pass", "grounded") for i in range(10)]
    rows += [(f"j{i}", "fail", "pass" if i < 2 else "fail", "grounded") for i in range(5)]
    labels = gatecal.read_labels(
        _write(tmp_path / "l.csv", rows, ("item", "human", "judge", "check"))
    )
    cal = gatecal.calibrate_judge(labels, observed=(80, 100), check="grounded")
    by = {c.check: c for c in cal.checks}
    assert by["relevant"].fnr.estimate == pytest.approx(0.1) and by["relevant"].fpr.estimate == 0
    assert by["grounded"].fnr.estimate == 0 and by["grounded"].fpr.estimate == pytest.approx(0.4)
    assert cal.pooled.items == 30 and cal.pooled.fpr.estimate == pytest.approx(0.2)
    assert cal.corrected_check == "grounded"
    ref = gatecal.correct_pass_rate(observed=(80, 100), sensitivity=(10, 10), specificity=(3, 5))
    assert cal.corrected == ref
    with pytest.raises(
        gatecal.ParameterError, match=r"`check` must be one of 'relevant', 'grounded' \(got 'x'\)"
    ):
        gatecal.calibrate_judge(labels, check="x")


# -- the corrected pass rate ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("obs", "sens", "spec"),
    [
        ((170, 200), (92, 100), (57, 60)),
        ((338, 400), (104, 110), (41, 50)),
        ((9, 20), (15, 20), (14, 20)),
    ],
)
def test_corrected_estimate_is_rogan_gladen_in_fractions(obs, sens, spec):
    p, se, sp = Fraction(*obs), Fraction(*sens), Fraction(*spec)
    ref = (p + sp - 1) / (se + sp - 1)
    for method in gatecal.CORRECTION_METHODS:
        r = gatecal.correct_pass_rate(
            observed=obs, sensitivity=sens, specificity=spec, method=method, rng=1
        )
        assert r.unclipped == pytest.approx(float(ref), rel=1e-14)
        assert r.estimate == pytest.approx(float(min(1, max(0, ref))), rel=1e-14)


def test_delta_interval_is_the_reference_note_example():
    # reference/statistics.md §2.6 (computed there with numpy/scipy): 170/200 judged pass,
    # Se 92/100, Sp 57/60 -> 95% delta-method CI including calibration [0.839, 1.000].
    r = gatecal.correct_pass_rate(
        observed=(170, 200), sensitivity=(92, 100), specificity=(57, 60), method="delta"
    )
    assert (round(r.low, 3), round(r.high, 3)) == (0.839, 1.0)


def _lang_reiczigel_by_hand(k, n, tp, m1, tn, m0, level):
    """Lang & Reiczigel (2014), section 2, retyped in plain floats from the paper's formulas."""
    z = stats.norm.ppf(0.5 + level / 2)
    n2, m12, m02 = n + z**2, m1 + 2, m0 + 2
    p, se, sp = (k + z**2 / 2) / n2, (tp + 1) / m12, (tn + 1) / m02
    j = se + sp - 1
    pi = (p + sp - 1) / j
    sd = (
        math.sqrt(
            p * (1 - p) / n2 + pi**2 * se * (1 - se) / m12 + (1 - pi) ** 2 * sp * (1 - sp) / m02
        )
        / j
    )
    d = 2 * z**2 * (pi * se * (1 - se) / m12 - (1 - pi) * sp * (1 - sp) / m02)
    return max(0.0, pi + d - z * sd), min(1.0, pi + d + z * sd)


@pytest.mark.parametrize(
    ("obs", "sens", "spec", "level"),
    [
        ((170, 200), (92, 100), (57, 60), 0.95),
        ((338, 400), (104.5, 110), (41, 50), 0.9),
        ((0, 50), (20, 20), (18, 20), 0.95),
        ((50, 50), (19, 20), (20, 20), 0.99),
    ],
)
def test_shipped_interval_matches_a_second_implementation(obs, sens, spec, level):
    r = gatecal.correct_pass_rate(
        observed=obs, sensitivity=sens, specificity=spec, confidence=level
    )
    assert r.method == "lang-reiczigel"
    assert (r.low, r.high) == pytest.approx(
        _lang_reiczigel_by_hand(*obs, *sens, *spec, level), abs=1e-12
    )


def test_too_weak_and_clipped_are_said():
    coin = gatecal.correct_pass_rate(observed=(50, 100), sensitivity=(10, 20), specificity=(9, 20))
    assert coin.estimate is None and coin.too_weak and (coin.low, coin.high) == (0.0, 1.0)
    assert "too weak to correct: sensitivity + specificity = 0.950 <= 1" in coin.verdict()
    wide = gatecal.correct_pass_rate(observed=(10, 20), sensitivity=(6, 10), specificity=(6, 10))
    assert (
        wide.estimate is not None and wide.too_weak and "spans nearly everything" in wide.verdict()
    )
    high = gatecal.correct_pass_rate(
        observed=(199, 200), sensitivity=(90, 100), specificity=(95, 100)
    )
    assert high.clipped and high.estimate == 1.0 and high.unclipped > 1
    assert "clipped to [0, 1]" in high.verdict() and not high.too_weak


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"observed": (5, 4)}, r"`observed` must be a pair \(successes, trials\)"),
        ({"observed": (float("nan"), 4)}, "`observed` must be a pair"),
        ({"sensitivity": (3, 0)}, "`sensitivity` must be a pair"),
        ({"specificity": "9/10"}, "`specificity` must be a pair"),
        ({"confidence": 1.0}, r"`confidence` must be in \(0, 1\)"),
        (
            {"method": "wald"},
            "`method` must be one of auto, lang-reiczigel, exact-box, delta, bootstrap, "
            "jeffreys-simulation",
        ),
    ],
)
def test_correct_pass_rate_refuses_bad_input(kwargs, message):
    args = {"observed": (8, 10), "sensitivity": (9, 10), "specificity": (9, 10)} | kwargs
    with pytest.raises(gatecal.ParameterError, match=message):
        gatecal.correct_pass_rate(**args)


counts = st.integers(1, 60).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n)))


@given(
    obs=counts,
    sens=counts,
    spec=counts,
    method=st.sampled_from(["lang-reiczigel", "delta", "auto", "exact-box"]),
)
def test_interval_is_inside_the_unit_interval_and_mirrors(obs, sens, spec, method):
    """Swapping what counts as pass turns the interval for pi into the one for 1 - pi."""
    r = gatecal.correct_pass_rate(observed=obs, sensitivity=sens, specificity=spec, method=method)
    assert 0 <= r.low <= r.high <= 1
    if method in ("auto", "exact-box"):
        assert r.low < r.high  # never zero-width
    m = gatecal.correct_pass_rate(
        observed=(obs[1] - obs[0], obs[1]), sensitivity=spec, specificity=sens, method=method
    )
    assert (m.low, m.high) == pytest.approx((1 - r.high, 1 - r.low), abs=1e-9)


def test_simulation_methods_are_seeded():
    args = {"observed": (170, 200), "sensitivity": (92, 100), "specificity": (57, 60)}
    for method in ("bootstrap", "jeffreys-simulation"):
        a = gatecal.correct_pass_rate(**args, method=method, rng=7)
        assert a == gatecal.correct_pass_rate(**args, method=method, rng=7)
        assert 0.75 < a.low < a.estimate < a.high <= 1


# -- coverage: the reason the default method is the default ---------------------------------

# Points from the study's grid (experiments/calibrate_coverage.py) where a wrong method is
# far off: a nightly rate near 1, a judge with Se 0.97, 20-50 labels per class.
COVERAGE_POINTS = [
    study.Point(0.99, 0.97, 0.6, 20, 50, 100),
    study.Point(0.95, 0.97, 0.9, 20, 20, 500),
    study.Point(0.8, 0.85, 0.9, 50, 20, 100),
    study.Point(1.0, 0.97, 0.9, 20, 20, 500),
]


@pytest.mark.parametrize("point", COVERAGE_POINTS)
def test_shipped_interval_holds_its_level_where_wrong_ones_fail(point):
    # Exact coverage: every outcome enumerated, weighted by its binomial probability.
    shipped, _ = study.exact_coverage("auto", point)
    assert shipped >= 0.94
    naive = min(study.exact_coverage(m, point)[0] for m in ("known", "calibration-only", "delta"))
    assert naive < 0.85  # the tolerance tells a wrong method apart


def test_exact_coverage_agrees_with_simulated_coverage():
    point = study.Point(0.9, 0.85, 0.6, 20, 50, 100)
    exact, _ = study.exact_coverage("lang-reiczigel", point)
    simulated, _ = study.simulated_coverage(
        "lang-reiczigel", point, np.random.default_rng(5), reps=20000, draws=1
    )
    assert abs(simulated - exact) < 5 * math.sqrt(exact * (1 - exact) / 20000)


def test_committed_coverage_report_names_the_shipped_method_best():
    """Per class: only the shipped method, the method shipped before and the (far wider)
    exact box hold 94% at every point. Random sample: the shipped method holds 94.5% with no zero-width interval, where
    the method shipped before fell below 93%."""
    text = (ROOT / "reports" / "calibrate-coverage.md").read_text()
    rows = dict(
        re.findall(r"^\| (\S+) \((?:exact|simulated)\) \| [\d.]+ \| ([\d.]+) \|", text, re.M)
    )
    assert float(rows["auto"]) >= 0.945 and float(rows["exact-box"]) >= 0.95
    shipped_before = ("auto", "exact-box", "lang-reiczigel")
    assert all(float(low) < 0.94 for m, low in rows.items() if m not in shipped_before)
    sampled = {
        m: (float(low), float(zero))
        for m, low, zero in re.findall(
            r"^\| (\S+) \| [\d.]+ \| ([\d.]+) \| \d+% \| [\d.]+ \| ([\d.]+) \|", text, re.M
        )
    }
    assert sampled["auto"][0] >= 0.945 and sampled["auto"][1] == 0
    assert sampled["exact-box"][0] >= 0.95 and sampled["exact-box"][1] == 0
    assert sampled["lang-reiczigel"][0] < 0.93 and sampled["lang-reiczigel"][1] > 0


# Random-sample points where the method shipped before fell below 93%: labels drawn from the
# judged population, so a 95-99% pass rate brings only a few truly failing items.
SAMPLE_POINTS = [
    study.SamplePoint(0.99, 0.97, 0.9, 100, 500),
    study.SamplePoint(0.99, 0.85, 0.9, 100, 100),
]


@pytest.mark.parametrize("point", SAMPLE_POINTS)
def test_shipped_interval_holds_under_random_sampling(point):
    # Exact: every number of truly failing labels and every outcome enumerated.
    shipped, _, zero, _ = study.sample_coverage("auto", point)
    before, _, zero_before, _ = study.sample_coverage("lang-reiczigel", point)
    assert shipped >= 0.945 and zero == 0
    assert before < 0.93 and zero_before > 0.004


def test_exact_box_is_the_range_over_its_box():
    """The box's limits against a dense grid search over the same three Clopper-Pearson
    intervals (scipy.stats.beta quantiles), the corrected rate evaluated everywhere."""
    level = 0.95 ** (1 / 3)
    for obs, sens, spec in [((90, 100), (45, 50), (17, 20)), ((60, 80), (35, 40), (9, 10))]:
        r = gatecal.correct_pass_rate(
            observed=obs, sensitivity=sens, specificity=spec, method="exact-box"
        )
        edges = [
            (
                stats.beta.ppf((1 - level) / 2, k, m - k + 1),
                stats.beta.ppf((1 + level) / 2, k + 1, m - k),
            )
            for k, m in (obs, sens, spec)
        ]
        p, se, sp = np.meshgrid(*[np.linspace(lo, hi, 41) for lo, hi in edges], indexing="ij")
        assert np.all(se + sp > 1)
        pi = (p + sp - 1) / (se + sp - 1)
        assert r.method == "exact-box"
        assert r.low == pytest.approx(
            max(0.0, min(pi.min(), (edges[0][0] + edges[2][0] - 1) / edges[2][0])), abs=1e-12
        )
        assert r.high == pytest.approx(
            min(1.0, max(pi.max(), edges[0][1] / edges[1][0])), abs=1e-12
        )


def test_observed_99_of_100_is_never_a_zero_width_interval():
    """Issue 22: with 3 of 3 truly failing labels failed and 52 of 57 passing ones passed,
    Lang-Reiczigel prints [1.000, 1.000] for 99 of 100 judged passes."""
    args = {"observed": (99, 100), "sensitivity": (52, 57), "specificity": (3, 3)}
    before = gatecal.correct_pass_rate(**args, method="lang-reiczigel")
    assert before.low == before.high == 1.0
    now = gatecal.correct_pass_rate(**args)
    assert now.method == "exact-box" and now.low < now.high and now.too_weak


# -- how many labels ------------------------------------------------------------------------


@pytest.mark.parametrize(("rate", "width"), [(0.05, 0.1), (0.2, 0.1), (0.0, 0.05), (0.5, 0.2)])
def test_labels_for_width_is_the_first_size_that_fits(rate, width):
    m = gatecal.labels_for_width(rate, width)

    def cp_width(size):
        k = size * rate
        low = 0.0 if k == 0 else stats.beta.ppf(0.025, k, size - k + 1)
        high = 1.0 if k == size else stats.beta.ppf(0.975, k + 1, size - k)
        return high - low

    assert cp_width(m) <= width < cp_width(m - 1)


def test_optimal_allocation_meets_the_target_and_beats_a_balanced_split():
    plan = gatecal.plan_labels(fnr=0.05, fpr=0.15, width=0.1, pass_rate=0.9, observed_items=2000)
    z = stats.norm.ppf(0.975)
    pi, se, sp, n = 0.9, 0.95, 0.85, 2000
    p = pi * se + (1 - pi) * (1 - sp)

    def half(m1, m0):
        var = p * (1 - p) / n + pi**2 * se * (1 - se) / m1 + (1 - pi) ** 2 * sp * (1 - sp) / m0
        return z * math.sqrt(var) / (se + sp - 1)

    m1, m0 = plan.pass_items, plan.fail_items
    assert 2 * half(m1, m0) <= 0.1 < 2 * half(m1 - 2, m0 - 2)
    assert m1 > m0  # near a 100% pass rate the passing answers decide
    assert m1 + m0 < 2 * plan.balanced_items
    for shift in (-20, 20):  # any other split of the same total is wider
        assert half(m1 + shift, m0 - shift) > half(m1, m0)
    tiny = gatecal.plan_labels(fnr=0.05, fpr=0.15, width=0.05, pass_rate=0.9, observed_items=100)
    assert tiny.pass_items is None and tiny.min_observed > 100


# -- the command --------------------------------------------------------------------------


@pytest.fixture
def labels_file(tmp_path):
    return _write(tmp_path / "labels.csv", _table(74, 5, 9, 71, fn_unparseable=1))


def test_json_contract(capsys, labels_file):
    code, out, err = run(capsys, "calibrate", labels_file, "--format", "json")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["items"] == 160 and "corrected" not in data
    for key in ("sensitivity", "specificity", "fnr", "fpr", "kappa"):
        assert {"estimate", "low", "high"} <= set(data[key])
        assert data[key]["low"] <= data[key]["estimate"] <= data[key]["high"]
    code, out, _ = run(
        capsys, "calibrate", labels_file, "--format", "json", "--observed", "170/200"
    )
    corrected = json.loads(out)["corrected"]
    ref = gatecal.correct_pass_rate(observed=(170, 200), sensitivity=(74, 80), specificity=(71, 80))
    assert (corrected["estimate"], corrected["low"], corrected["high"]) == (
        ref.estimate,
        ref.low,
        ref.high,
    )


def test_table_markdown_csv_and_out(capsys, labels_file, tmp_path):
    code, out, _ = run(capsys, "calibrate", labels_file, "--observed", "170/200")
    assert code == 0
    assert "corrected with the rates of the judge: true pass rate" in out
    assert re.search(r"Cohen's kappa\s+0\.8\d\d \[", out)
    code, out, _ = run(capsys, "calibrate", labels_file, "--format", "markdown")
    assert "| pass | 74 | 5 | 1 |" in out
    code, out, _ = run(capsys, "calibrate", labels_file, "--format", "csv")
    rows = list(csv.DictReader(out.splitlines()))
    assert rows[0]["check"] == "judge" and rows[0]["human_fail_judge_pass"] == "9"
    target = tmp_path / "out.json"
    assert run(capsys, "calibrate", labels_file, "--format", "json", "--out", target)[1] == ""
    assert json.loads(target.read_text())["items"] == 160


def test_runs_give_the_observed_rate(capsys, labels_file, tmp_path):
    runs = tmp_path / "runs.csv"
    lines = ["run,case,check,kind,passed"]
    for r in range(2):
        for c in range(10):
            lines.append(f"r{r},c{c},judge,judge,{'fail' if c < 2 + r else 'pass'}")
            lines.append(f"r{r},c{c},code,code,pass")
    runs.write_text("\n".join(lines) + "\n")
    code, out, _ = run(capsys, "calibrate", labels_file, "--runs", runs, "--format", "json")
    assert code == 0
    observed = json.loads(out)["observed"]
    assert (observed["passed"], observed["items"]) == (7.5, 10)  # c2 passed one of two runs


def test_export_suite_drives_simulate(capsys, labels_file, tmp_path):
    spec = tmp_path / "judge.json"
    assert run(capsys, "calibrate", labels_file, "--export-suite", spec)[0] == 0
    data = json.loads(spec.read_text())
    assert data["checks"] == [{"name": "judge", "kind": "judge", "fnr": 6 / 80, "fpr": 9 / 80}]
    code, out, err = run(capsys, "simulate", "--suite", spec, "--flip", "0", "--format", "json")
    assert code == 0, err
    healthy = json.loads(out)["rows"][0]
    assert healthy["exact_mean_pass_rate"] == pytest.approx(74 / 80)
    upper = tmp_path / "upper.json"
    run(capsys, "calibrate", labels_file, "--export-suite", upper, "--conservative")
    cal = gatecal.calibrate_judge(gatecal.read_labels(labels_file))
    assert json.loads(upper.read_text())["checks"][0]["fpr"] == cal.pooled.fpr.high


def test_export_into_a_base_suite(capsys, tmp_path):
    rows = [
        (f"i{i}", "pass", "pass", check) for i in range(10) for check in ("relevancy", "grounded")
    ]
    rows += [
        (f"j{i}", "fail", "pass" if i == 0 else "fail", check)
        for i in range(10)
        for check in ("relevancy", "grounded")
    ]
    labels = _write(tmp_path / "l.csv", rows, ("item", "human", "judge", "check"))
    base = gatecal.suite_to_spec(gatecal.Suite.uniform(cases=4, judge_checks=2, code_checks=1))
    base["checks"][0]["name"], base["checks"][1]["name"] = "relevancy", "grounded"
    (tmp_path / "base.json").write_text(json.dumps(base))
    out = tmp_path / "merged.json"
    code, _, err = run(
        capsys, "calibrate", labels, "--export-suite", out, "--suite", tmp_path / "base.json"
    )
    assert code == 0, err
    spec = gatecal.load_spec(out)
    assert spec.per_check == {"relevancy": (0.0, 0.1), "grounded": (0.0, 0.1)}
    assert spec.suite == gatecal.load_spec(tmp_path / "base.json").suite
    base["checks"][1]["name"] = "tone"
    (tmp_path / "base.json").write_text(json.dumps(base))
    code, _, err = run(
        capsys,
        "calibrate",
        labels,
        "--export-suite",
        tmp_path / "x.json",
        "--suite",
        tmp_path / "base.json",
    )
    assert (
        code == 2
        and "judge check 'tone' has no labels (labelled checks: grounded, relevancy)" in err
    )
    assert not (tmp_path / "x.json").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--observed", "170/20"], "--observed must be K/N: the judge passed K of N items"),
        (["--observed", "a/b"], "--observed must be K/N"),
        (["--observed", "1/2", "--runs", "x.csv"], "--observed can't be combined with --runs"),
        (["--confidence", "1.5"], r"--confidence must be a number in \(0, 1\) \(got '1.5'\)"),
        (["--width", "0"], r"--width must be a number in \(0, 1\] \(got '0'\)"),
        (["--check", "x"], r"--check needs a `check` column in the labels \(got 'x'\)"),
        (["--conservative"], "--conservative needs --export-suite"),
        (["--format", "yaml"], "--format must be one of table, markdown, csv, json"),
        (["--runs", "nowhere.csv"], "--runs nowhere.csv: no such file"),
    ],
)
def test_command_errors_are_one_line(capsys, labels_file, args, message):
    code, out, err = run(capsys, "calibrate", labels_file, *args)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and re.search(message, err), err


def test_bad_label_file_is_one_line_and_writes_nothing(capsys, tmp_path):
    bad = _write(tmp_path / "bad.csv", [("a", "pass", "pass"), ("a", "fail", "fail")])
    target = tmp_path / "out.txt"
    code, out, err = run(
        capsys, "calibrate", bad, "--out", target, "--export-suite", tmp_path / "s.json"
    )
    assert code == 2 and out == "" and "Traceback" not in err
    assert err.startswith("gatecal: error: LABELS ") and "one item has one true verdict" in err
    assert not target.exists() and not (tmp_path / "s.json").exists()
    empty_class = _write(tmp_path / "one.csv", [("a", "pass", "pass"), ("b", "pass", "fail")])
    code, _, err = run(capsys, "calibrate", empty_class)
    assert code == 2 and "no truly failing items labelled" in err


def test_chart(capsys, labels_file, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from gatecal import charts

    cal = gatecal.calibrate_judge(gatecal.read_labels(labels_file), observed=(170, 200))
    ax = charts.plot_calibration(cal)
    shares = ax.images[0].get_array()
    assert shares[0][0] == pytest.approx(74 / 80) and shares[1][0] == pytest.approx(9 / 80)
    right = ax.figure.axes[1]
    assert [t.get_text() for t in right.get_yticklabels()] == [
        "sensitivity", "specificity", "observed pass rate", "corrected pass rate",
    ]  # fmt: skip
    path = tmp_path / "c.png"
    assert run(capsys, "calibrate", labels_file, "--observed", "170/200", "--chart", path)[0] == 0
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# -- the worked example ---------------------------------------------------------------------


def test_worked_example_regenerates(tmp_path):
    labels_rng, _ = np.random.default_rng(calibrate_example.SEED).spawn(2)
    calibrate_example.write_labels(tmp_path / "labels.csv", labels_rng)
    committed = ROOT / "reports" / "calibrate-example"
    assert (tmp_path / "labels.csv").read_text() == (committed / "labels.csv").read_text()
    args = calibrate_example.command(calibrate_example.observed())
    args[args.index("--export-suite") + 1] = str(tmp_path / "judge-suite.json")  # not into reports/
    text = calibrate_example.run(args)
    assert_same(
        (tmp_path / "judge-suite.json").read_text(), (committed / "judge-suite.json").read_text()
    )
    # docs/how-to/calibrate.md quotes this report (tests/project/test_docs.py checks the quote)
    assert_same(text, (ROOT / "reports" / "calibrate-example.txt").read_text())


def test_report_has_a_calibration_section(capsys, labels_file, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    out = tmp_path / "rep"
    code, _, err = run(
        capsys,
        "report",
        "--out",
        out,
        "--runs",
        "50",
        "--labels",
        labels_file,
        "--observed",
        "170/200",
    )
    assert code == 0, err
    index = (out / "index.md").read_text()
    assert (
        "## The judge against human labels" in index
        and "![The judge against human labels](judge-calibration.png)" in index
    )
    assert (
        json.loads((out / "calibrate.json").read_text())["corrected"]["method"] == "lang-reiczigel"
    )
    code, _, err = run(capsys, "report", "--out", tmp_path / "r2", "--observed", "1/2")
    assert code == 2 and "--observed needs --labels" in err and not (tmp_path / "r2").exists()


def test_items_wrong_every_time_are_named_systematic(tmp_path, capsys):
    """An item the judge gets wrong in (nearly) every repeat is named as an error to fix:
    its error rate's Jeffreys median above 0.9 (2 of 2, 29 of 30 yes; 1 of 1 and 26 of 30
    no), and its share of the errors."""
    rows = []
    for item, human, wrong, judged in [
        ("stuck", "pass", 30, 30), ("nearly", "pass", 29, 30), ("often", "pass", 26, 30),
        ("twice", "fail", 2, 2), ("once", "pass", 1, 1), ("fine", "pass", 0, 30),
        ("right", "fail", 0, 3),
    ]:  # fmt: skip
        for r in range(judged):
            verdict = ("fail" if human == "pass" else "pass") if r < wrong else human
            rows.append((item, human, verdict, r))
    path = _write(tmp_path / "l.csv", rows, ("item", "human", "judge", "repeat"))
    c = gatecal.calibrate_judge(gatecal.read_labels(path)).pooled
    assert c.systematic == (("stuck", 30, 30), ("nearly", 29, 30), ("twice", 2, 2))
    # item-weighted errors: 1 + 29/30 + 26/30 + 1 + 1; the systematic part 1 + 29/30 + 1
    share = (1 + Fraction(29, 30) + 1) / (3 + Fraction(29, 30) + Fraction(26, 30))
    assert c.systematic_share == pytest.approx(float(share), rel=1e-12)
    code, out, _ = run(capsys, "calibrate", path)
    assert code == 0
    assert (
        "wrong every time or nearly (3 items, 61% of the judge's errors): stuck (30 of 30), " in out
    )
    assert "repeats, majority votes and reruns cannot help" in out
