"""The comparison of regenerated artefacts: last-bit float differences pass, anything else fails."""

import pytest

from tests.regen import assert_same, differences

# Two real renderings of reports/report/recommend.json's interval, from two x86-64 CPUs
# (the committed one, and an AMD EPYC machine's): the same maths, summed in another order.
ONE_CPU = '{"low": 0.0388323093300962, "high": 0.1120730403776327, "k_min": 10}'
OTHER_CPU = '{"low": 0.038832309330096196, "high": 0.11207304037763272, "k_min": 10}'


def test_last_bits_of_a_double_are_not_a_difference():
    assert differences(OTHER_CPU, ONE_CPU) == []
    assert_same("P = 2.0078856065447263e-13\n", "P = 2.0078856065447268e-13\n")


@pytest.mark.parametrize(
    "changed",
    [
        ONE_CPU.replace('"k_min": 10', '"k_min": 11'),  # a whole number changes
        ONE_CPU.replace("0.0388323093300962", "0.0388323103300962"),  # 2.6e-8 relative
        ONE_CPU.replace('"low"', '"lo"'),  # the text changes
        ONE_CPU.replace("0.1120730403776327", "0.1120730403776327, 1.5"),  # a number more
        ONE_CPU.replace("10}", "10.0}"),  # 10 is a count, 10.0 is not
    ],
)
def test_every_other_change_is_one(changed):
    assert differences(changed, ONE_CPU)
    with pytest.raises(AssertionError, match="differs"):
        assert_same(changed, ONE_CPU, "recommend.json")


def test_words_with_digits_are_text():
    assert differences("k_min2 0x1f", "k_min3 0x1f")
    assert differences("gate-chart-3pct.svg", "gate-chart-8pct.svg")
