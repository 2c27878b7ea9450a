"""``arklow allocate --format json``: the lanes' lines read from the allocation's columns are the
same text as from a plain mapping of lane results, ints and -0.0 included."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arklow_pulumi.cli.rendering import allocation_json
from arklow_pulumi.core.allocating import Allocation, LaneResults

units = st.one_of(
    st.floats(min_value=0.0, max_value=1e12),
    st.sampled_from([0.0, -0.0, 1.0, 2.5, 1e12, 1e-300, 5e-324, 4503599627370496.0, 0.1]),
    st.integers(min_value=0, max_value=10**12),
)


def columns(values: list[tuple[float, float, float, float]]) -> LaneResults:
    keys = tuple(f'd/"l{k}\\é' for k in range(len(values)))
    demand = [v[0] for v in values]
    caps = [v[1] for v in values]
    allocation = [v[2] for v in values]
    admission = [v[3] for v in values]
    return LaneResults(
        keys, {k: i for i, k in enumerate(keys)}, demand, caps, allocation, admission
    )


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(units, units, units, units), max_size=30))
def test_columns_print_as_the_lane_by_lane_rendering(
    values: list[tuple[float, float, float, float]],
) -> None:
    lanes = columns(values)
    as_views = {key: lanes[key] for key in lanes}  # a plain mapping: the general path
    text = allocation_json(Allocation(lanes=lanes, pools={}))
    assert text == allocation_json(Allocation(lanes=as_views, pools={}))
    parsed = json.loads(text)["lanes"]
    for key, view in as_views.items():
        assert parsed[key]["demand"] == view.demand and parsed[key]["held"] == view.held


@pytest.mark.parametrize("bad", [math.inf, math.nan, -math.inf])
def test_a_value_that_is_not_finite_still_raises(bad: float) -> None:
    lanes = columns([(1.0, 1.0, bad, 1.0)])
    with pytest.raises(ValueError, match="not a finite number"):
        allocation_json(Allocation(lanes=lanes, pools={}))


def test_integral_values_print_as_integers_and_negative_zero_as_zero() -> None:
    lanes = columns([(2, 2.0, -0.0, 4503599627370495.0)])
    text = allocation_json(Allocation(lanes=lanes, pools={}))
    assert (
        '    "d/\\"l0\\\\\\u00e9": {"demand": 2, "allocation": 0, "held": 2, '
        '"admission": 4503599627370495}'
    ) in text.splitlines()
