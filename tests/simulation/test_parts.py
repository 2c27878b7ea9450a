"""The simulator's own parts: simulated groups, free-for-all's proportional sharing, components."""

from __future__ import annotations

import pytest

from arklow_pulumi.core.deciding import Observed
from arklow_pulumi.core.topology import GroupRef, ScaleTarget
from arklow_pulumi.simulation.sharing import proportional_shares
from arklow_pulumi.simulation.supplying import SimulatedGroup
from arklow_pulumi.simulation.units import split
from tests.builders import dest, lane, pool, target, topo


def group(lo: int = 1, hi: int = 10, replicas: int = 2) -> SimulatedGroup:
    return SimulatedGroup(
        ScaleTarget(
            name="t",
            group=GroupRef(kind="aws_asg", name="t"),
            min_replicas=lo,
            max_replicas=hi,
            units_per_replica=1,
            replicas=replicas,
        )
    )


def test_launch_is_pending_until_the_delay_has_passed() -> None:
    g = group()
    g.resize(5, now=0, launch_delay=120)
    assert g.observe(60) == (2, 3)
    assert g.observe(120) == (5, 0)
    assert g.observed() == Observed(in_service=5, pending=0)


def test_zero_delay_serves_from_the_next_observation() -> None:
    g = group()
    g.resize(4, now=60, launch_delay=0)
    assert g.in_service == 2  # not on the tick that launched it
    assert g.observe(60) == (4, 0)


def test_scale_down_cancels_newest_pending_first_then_stops_in_service() -> None:
    g = group(replicas=2)
    g.resize(4, now=0, launch_delay=300)
    g.resize(7, now=60, launch_delay=300)
    g.resize(5, now=120, launch_delay=300)  # cancels 2 of the 3 launched at 60
    assert list(g.pending) == [(300, 2), (360, 1)]
    g.resize(1, now=180, launch_delay=300)  # cancels all 3 pending, stops 1 in service
    assert (g.in_service, g.pending_count) == (1, 0)


@pytest.mark.parametrize(("desired", "expected"), [(50, 10), (0, 1), (-3, 1)])
def test_group_never_leaves_its_bounds(desired: int, expected: int) -> None:
    g = group(lo=1, hi=10, replicas=5)
    g.resize(desired, now=0, launch_delay=0)
    g.observe(0)
    assert g.current == expected


def test_proportional_shares_one_pool() -> None:
    # capacity 6 for demand 8 + 4: everyone gets half; no fairness
    assert proportional_shares([8, 4], [[(0, 1.0)], [(0, 1.0)]], [6]) == [4, 2]


def test_proportional_shares_take_the_tightest_pool_and_count_cost() -> None:
    # lane 0 costs 2 in pool 1; pool 0: demand 4 + 4 on 4 -> 1/2; pool 1: demand 8 on 16 -> 1
    shares = proportional_shares([4, 4], [[(0, 1.0), (1, 2.0)], [(0, 1.0)]], [4, 16])
    assert shares == [2, 2]
    assert proportional_shares([3, 0], [[(0, 1.0)], [(0, 1.0)]], [0]) == [0, 0]


def test_components_split_on_shared_destinations() -> None:
    t = topo(
        [
            dest("a", ["gpu", "cpu"], lane("x", 1)),
            dest("b", ["gpu"], lane("y", 1)),
            dest("c", ["cpu"], lane("z", 1)),
            dest("d", ["disk"], lane("w", 1)),
            dest("e", [], lane("v", 1)),
        ],
        [
            pool("g", "gpu", ["a", "b"]),
            pool("k", "cpu", ["a", "c"]),
            pool("idle", "gpu", [], scale_targets=[target("asg", 1, 3, replicas=1)]),
        ],
    )
    units = split(t)
    lanes = sorted(tuple(sorted(u.lane_keys)) for u in units)
    assert lanes == [(), ("a/x", "b/y", "c/z"), ("d/w",), ("e/v",)]
    again = split(t)
    assert {u.signature for u in units} == {u.signature for u in again}
