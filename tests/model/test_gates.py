from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

import gatecal
from gatecal import Gate, ParameterError, equivalent_gates, parse_gate, parse_gates


@pytest.mark.parametrize(
    ("text", "kind", "k_min_12"),
    [
        ("all", "all", 12),
        ("ALL", "all", 12),
        ("0.90", "rate", 11),  # ceil(12 * 9/10) = ceil(10.8) = 11
        ("0.85", "rate", 11),  # ceil(10.2) = 11: the same gate as 0.90
        ("0.80", "rate", 10),  # ceil(9.6) = 10
        ("0.75", "rate", 9),  # 12 * 3/4 = 9 exactly: no float rounding up to 10
        ("rate>=0.9", "rate", 11),
        (">= 0.9", "rate", 11),
        ("90%", "rate", 11),
        ("11/12", "rate", 11),
        ("0", "rate", 0),
        ("1", "rate", 12),
        ("fails<=2", "fails", 10),
        ("fails <= 0", "fails", 12),
        ("fails<=40", "fails", 0),
    ],
)
def test_gate_k_min(text, kind, k_min_12):
    gate = parse_gate(text)
    assert gate.kind == kind
    assert gate.text == text.strip()
    assert gate.k_min(12) == k_min_12


def test_threshold_is_exact_rational_not_float():
    # 0.7 * 10 == 7.000000000000001 in floats, so a float ceil would say 8.
    assert parse_gate("0.7").threshold == Fraction(7, 10)
    assert parse_gate("0.7").k_min(10) == 7
    assert parse_gate("0.29").k_min(100) == 29  # 0.29 * 100 == 28.999999999999996


def test_describe_reads_like_the_article():
    assert parse_gate("all").describe() == "every case must pass"
    assert parse_gate("0.90").describe() == "pass rate >= 0.90"
    assert parse_gate("rate>=0.9").describe() == "pass rate >= 0.9"
    assert parse_gate("fails<=1").describe() == "at most 1 case fails"
    assert parse_gate("fails<=2").describe() == "at most 2 cases fail"


def test_equivalent_gates_of_the_article():
    gates = parse_gates(gatecal.DEFAULT_GATES)
    groups = equivalent_gates(gates, 12)
    assert [(k, [g.text for g in gs]) for k, gs in groups] == [(11, ["0.90", "0.85"])]
    # "fails<=2" is "rate >= 0.80" with 12 cases, and "all" is "fails<=0".
    groups = equivalent_gates(parse_gates("all,0.80,fails<=2,fails<=0"), 12)
    assert [(k, [g.text for g in gs]) for k, gs in groups] == [
        (12, ["all", "fails<=0"]),
        (10, ["0.80", "fails<=2"]),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("most", "`gate` must be 'all', a pass rate"),
        ("1.5", "`gate` must be a pass rate in [0, 1] (got '1.5')"),
        ("-0.1", "`gate` must be a pass rate in [0, 1] (got '-0.1')"),
        ("150%", "`gate` must be a pass rate in [0, 1] (got '150%')"),
        ("nan", "`gate` must be 'all', a pass rate"),
        ("inf", "`gate` must be 'all', a pass rate"),
        ("fails<=1.5", "fails<=F needs a whole number F >= 0 (got 'fails<=1.5')"),
        ("fails<=-1", "fails<=F needs a whole number F >= 0 (got 'fails<=-1')"),
        ("", "`gate` must be 'all'"),
    ],
)
def test_bad_gate_rules_are_named(text, message):
    with pytest.raises(ParameterError) as info:
        parse_gate(text)
    assert message in str(info.value)
    assert info.value.name == "gate"


def test_empty_item_in_gate_list():
    with pytest.raises(ParameterError, match="`gates` must be a comma-separated list"):
        parse_gates("all,,0.9")


@given(n=st.integers(1, 500), num=st.integers(0, 1000), den=st.integers(1, 1000))
def test_k_min_is_the_smallest_count_whose_rate_reaches_t(n, num, den):
    t = Fraction(min(num, den), den)
    gate = Gate(text=str(t), kind="rate", threshold=t)
    k = gate.k_min(n)
    assert Fraction(k, n) >= t
    assert k == 0 or Fraction(k - 1, n) < t


@given(
    st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=40),
    st.floats(0, 1, allow_nan=False),
)
def test_strictest_within_is_the_largest_admissible_gate(steps, budget):
    """The bisection agrees with the definition on every nondecreasing false-alarm table
    that starts at 0 (P(fewer than 0 pass) = 0), as every caller's is."""
    from gatecal._model.gates import strictest_within

    table = [0.0, *sorted(steps)]
    assert strictest_within(table, budget) == max(k for k, fa in enumerate(table) if fa <= budget)
