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
from tests.hypothesis_profiles import examples

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


@settings(max_examples=examples(200), deadline=None)
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


def test_controller_plan_table_has_section_titles_and_table_numbers() -> None:
    """``arklow controller plan``: titled sections; numbers as the other tables print them (up
    to six significant digits), not raw floats (``5.5600000000000005``)."""
    from arklow_pulumi.cli.controller import plan_table

    document = {
        "time": "2026-01-01T00:00:00+00:00",
        "lanes": {
            "search/batch": {
                "demand": 5.14,
                "allocation": 5.14,
                "held": 0.0,
                "admission": 6.863333333333333,
                "stale": False,
            },
            "summarize/default": {
                "demand": 3.23,
                "allocation": 3.0000000000000004,
                "held": 0.23,
                "admission": 5.5600000000000005,
                "stale": True,
            },
        },
        "pools": {
            "shared-gpu": {
                "resource": "gpu",
                "capacity": 32.0,
                "demand": 8.370000000000001,
                "pressure": 0.26156250000000003,
                "state": "steady",
                "desired_replicas": 3,
                "targets": {
                    "gpu-workers": {
                        "desired": 3,
                        "in_service": 4,
                        "pending": 0,
                        "min": 1,
                        "max": 10,
                    }
                },
            }
        },
        "changes": [
            {
                "target": "gpu-workers",
                "pool": "shared-gpu",
                "group": "aws_asg:us-east-1/gpu-workers",
                "previous": 4,
                "desired": 3,
                "method": "SetDesiredCapacity",
            }
        ],
        "supply_errors": {},
    }
    lines = plan_table(document).splitlines()
    titles = [line for line in lines if line.isupper() and " " not in line]
    assert titles == ["POOLS", "TARGETS", "LANES", "CHANGES"]
    text = "\n".join(lines)
    for raw in ("6.863333333333333", "5.5600000000000005", "3.0000000000000004", "8.37000"):
        assert raw not in text
    assert "6.86333" in text and "5.56" in text and "0.261563" in text
    lanes = lines[lines.index("LANES") + 1 :]
    assert lanes[0].split() == ["lane", "demand", "allocation", "held", "admission", "report"]
    assert lanes[3].split() == ["summarize/default", "3.23", "3", "0.23", "5.56", "stale"]
    pools = lines[lines.index("POOLS") + 1 :]
    assert pools[2].split() == ["shared-gpu", "gpu", "steady", "32", "8.37", "0.261563", "3"]
    assert "gpu-workers (aws_asg:us-east-1/gpu-workers): 4 -> 3: SetDesiredCapacity" in lines
    assert "SUPPLY ERRORS" not in lines
