"""A result whose JSON is its own fields declares so once, by its base."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from gatecal._common.contracts import FieldsJSON


@dataclass(frozen=True, slots=True, kw_only=True)
class _Probe(FieldsJSON):
    second: int
    first: str
    names: tuple[str, ...] = ()


def test_the_json_is_the_fields_in_their_order_tuples_as_lists():
    probe = _Probe(second=2, first="a", names=("x", "y"))
    assert list(probe.to_dict().items()) == [("second", 2), ("first", "a"), ("names", ["x", "y"])]


def test_the_base_keeps_a_slotted_result_slotted():
    with pytest.raises(AttributeError):
        object.__setattr__(_Probe(second=1, first=""), "other", 0)


@pytest.mark.parametrize("name", ["Estimate", "FileRead", "RunRecord"])
def test_the_public_results_whose_json_is_their_fields_use_the_base(name):
    import gatecal

    assert issubclass(getattr(gatecal, name), FieldsJSON)
