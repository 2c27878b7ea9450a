"""The rules the simulator and the controller share with the kernel, each in one function:
its contract, the ends of its range, and (for ``e`` and a pool's demand) the kernel's own
figures, bit for bit."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arklow_pulumi.core.allocating import (
    LaneResults,
    allocate,
    compile_topology,
    lane_caps,
    pool_sums,
)
from arklow_pulumi.core.deciding import Observed, TargetId, decide, pool_capacity
from arklow_pulumi.core.policy import needed_units
from arklow_pulumi.core.topology import Topology
from tests.builders import dest, lane, pool, target, topo


@pytest.mark.parametrize(
    ("demand", "headroom", "static", "needed"),
    [
        (0.0, 0.2, 0.0, 0.0),  # no demand, nothing needed
        (10.0, 0.0, 0.0, 10.0),  # no headroom: the demand itself
        (10.0, 0.5, 0.0, 15.0),
        (10.0, 0.5, 5.0, 10.0),  # the static capacity covers part of it
        (10.0, 0.5, 15.0, 0.0),  # all of it
        (10.0, 0.5, 100.0, 0.0),  # never below 0
        (1e12, 100.0, 0.0, 1e12 * 101.0),  # the ends of demand and headroom
    ],
)
def test_needed_units(demand: float, headroom: float, static: float, needed: float) -> None:
    assert needed_units(demand, headroom, static) == needed


def test_lane_caps_is_the_smaller_of_demand_and_limit() -> None:
    assert lane_caps([0.0, 3.0, 5.0, 7.0], [4.0, 4.0, 5.0, 1e12]) == [0.0, 3.0, 5.0, 7.0]
    assert lane_caps([9.0, 4.0], [4.0, 0.0]) == [4.0, 0.0]
    assert lane_caps([], []) == []
    with pytest.raises(ValueError):
        lane_caps([1.0], [1.0, 2.0])


def test_pool_sums_adds_each_lanes_value_times_its_cost() -> None:
    lane_pools = [[(0, 1.0)], [(0, 2.0), (1, 0.5)], [(1, 1.0)]]
    assert pool_sums([3.0, 2.0, 1.0], lane_pools, 2) == [3.0 + 4.0, 1.0 + 1.0]
    assert pool_sums([0.0, 0.0, 0.0], lane_pools, 2) == [0.0, 0.0]
    assert pool_sums([], [], 3) == [0.0, 0.0, 0.0]  # a pool without lanes
    # only the lanes given are summed: exact for the pools they hold every lane of
    assert pool_sums([3.0, 2.0, 1.0], lane_pools, 2, [0, 1]) == [7.0, 1.0]


def test_pool_capacity_counts_in_service_replicas_only() -> None:
    assert pool_capacity(5.0, [], []) == 5.0
    assert pool_capacity(5.0, [2, 0], [3.0, 10.0]) == 11.0
    assert pool_capacity(0.0, [0], [1e6]) == 0.0
    with pytest.raises(ValueError):
        pool_capacity(0.0, [1, 2], [1.0])


def _topology(limits: list[float], costs: list[float]) -> Topology:
    pairs = enumerate(zip(limits, costs, strict=True))
    lanes = [lane(f"l{i}", limit, cpu=cost) for i, (limit, cost) in pairs]
    return topo(
        [dest("d", ["cpu", "gpu"], *lanes)],
        [
            pool("cpu", "cpu", ["d"], 5.0, scale_targets=[target("t", 0, 9, 2.0, 1)]),
            pool("gpu", "gpu", ["d"], 3.0),
        ],
    )


units = st.floats(0.0, 1e6, allow_nan=False)


@given(
    st.lists(st.tuples(units, units, st.floats(0.1, 10.0)), min_size=1, max_size=8),
    st.integers(0, 9),
)
def test_the_rules_are_the_kernels(lanes: list[tuple[float, float, float]], count: int) -> None:
    """``e``, a pool's demand and its capacity as the kernel's allocation reports them."""
    topo = _topology([limit for _d, limit, _c in lanes], [cost for _d, _l, cost in lanes])
    c = compile_topology(topo)
    demands = [d for d, _limit, _cost in lanes]
    observed = {TargetId("cpu", "t"): Observed(in_service=count, pending=1)}
    allocation = decide(topo, dict(zip(c.lane_keys, demands, strict=True)), observed, {}, 0.0)
    results = allocation.allocation
    assert isinstance(results.lanes, LaneResults)
    caps = lane_caps(demands, c.limits)
    assert list(results.lanes.caps()) == caps
    demand = pool_sums(caps, c.lane_pools, len(c.pool_names))
    assert [results.pools[name].demand for name in c.pool_names] == demand
    assert results.pools["cpu"].capacity == pool_capacity(5.0, [count], [2.0])
    assert allocate(topo, {}).pools["gpu"].capacity == 3.0
