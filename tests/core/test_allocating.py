"""Table-driven cases of the allocation contract, including published max-min examples."""

from __future__ import annotations

import pytest

from arklow_pulumi.core.allocating import allocate
from arklow_pulumi.core.errors import InvalidInput
from tests.builders import dest, lane, pool, target, topo


def approx(values: dict[str, float]) -> dict[str, object]:
    return {k: pytest.approx(v, rel=1e-9, abs=1e-12) for k, v in values.items()}


def single_pool(capacity: float, *lanes: dict[str, object]) -> object:
    return topo([dest("d", ["r"], *lanes)], [pool("p", "r", ["d"], capacity)])


WATER_FILLING = [
    # (name, capacity, [(limit, weight)], demands, expected allocations)
    ("textbook: 10 among 2, 2.6, 4, 5", 10, [(100, 1)] * 4, [2, 2.6, 4, 5], [2, 2.6, 2.7, 2.7]),
    ("everyone fits", 10, [(100, 1)] * 3, [1, 2, 3], [1, 2, 3]),
    ("equal split", 9, [(100, 1)] * 3, [10, 10, 10], [3, 3, 3]),
    ("weights 1:2:3", 12, [(100, 1), (100, 2), (100, 3)], [50, 50, 50], [2, 4, 6]),
    (
        "weighted, small lane satisfied",
        12,
        [(100, 1), (100, 2), (100, 3)],
        [1, 50, 50],
        [1, 4.4, 6.6],
    ),
    ("limit caps demand", 10, [(3, 1), (100, 1)], [8, 8], [3, 7]),
    ("limit 0 pauses a lane", 10, [(0, 1), (100, 1)], [8, 20], [0, 10]),
    ("zero capacity", 0, [(10, 1), (10, 1)], [5, 5], [0, 0]),
    ("no demand", 10, [(10, 1)], [0], [0]),
]


@pytest.mark.parametrize(
    ("name", "capacity", "lanes", "demands", "expected"),
    WATER_FILLING,
    ids=[c[0] for c in WATER_FILLING],
)
def test_single_pool_water_filling(name, capacity, lanes, demands, expected):
    t = single_pool(capacity, *(lane(f"l{i}", lim, w) for i, (lim, w) in enumerate(lanes)))
    result = allocate(t, {f"d/l{i}": x for i, x in enumerate(demands)})
    got = {k: v.allocation for k, v in result.lanes.items()}
    assert got == approx({f"d/l{i}": x for i, x in enumerate(expected)})
    for i, x in enumerate(demands):
        r = result.lanes[f"d/l{i}"]
        assert r.held == pytest.approx(min(x, lanes[i][0]) - expected[i], abs=1e-12)


def test_coupled_pools_textbook_network():
    """Three flows over two links (Bertsekas & Gallager): A uses both links, B link 1, C link 2.
    Link 1 capacity 1, link 2 capacity 2: A = B = 1/2 (link 1 saturates), C = 3/2."""
    t = topo(
        [
            dest("a", ["l1", "l2"], lane("f", 10)),
            dest("b", ["l1"], lane("f", 10)),
            dest("c", ["l2"], lane("f", 10)),
        ],
        [pool("link1", "l1", ["a", "b"], 1), pool("link2", "l2", ["a", "c"], 2)],
    )
    result = allocate(t, {"a/f": 10, "b/f": 10, "c/f": 10})
    assert {k: v.allocation for k, v in result.lanes.items()} == approx(
        {"a/f": 0.5, "b/f": 0.5, "c/f": 1.5}
    )
    assert result.pools["link1"].state == "constrained"
    assert result.pools["link2"].state == "constrained"


def test_tightest_pool_binds_and_other_pool_work_conserves():
    t = topo(
        [dest("x", ["gpu", "quota"], lane("a", 100)), dest("y", ["gpu"], lane("b", 100))],
        [pool("gpu", "gpu", ["x", "y"], 10), pool("quota", "quota", ["x"], 2)],
    )
    result = allocate(t, {"x/a": 50, "y/b": 50})
    assert result.lanes["x/a"].allocation == pytest.approx(2)
    assert result.lanes["y/b"].allocation == pytest.approx(8)


def test_cost_counts_units_of_the_resource():
    t = topo(
        [dest("d", ["r"], lane("big", 100, r=4), lane("small", 100))], [pool("p", "r", ["d"], 10)]
    )
    result = allocate(t, {"d/big": 100, "d/small": 100})
    # both rise together: 4t + t = 10 -> t = 2
    assert result.lanes["d/big"].allocation == pytest.approx(2)
    assert result.lanes["d/small"].allocation == pytest.approx(2)
    assert result.pools["p"].demand == pytest.approx(500)


ADMISSION = [
    # steady pool: unused capacity goes to active lanes (demand > 0) by weight, up to their
    # limits; idle lanes get only what no active lane can use
    ("steady pool gives headroom to active work", 10, [(10, 1), (10, 1)], [2, 0], [10, 0]),
    ("idle lane gets what active lanes cannot use", 10, [(4, 1), (10, 1)], [2, 0], [4, 6]),
    ("headroom capped by limit", 10, [(3, 1), (10, 1)], [1, 1], [3, 7]),
    ("constrained pool adds nothing", 10, [(20, 1), (20, 1)], [20, 4], [6, 4]),
    ("weights share headroom among active lanes", 10, [(20, 1), (20, 3)], [1, 1], [3, 7]),
    ("an idle lane waits behind an active one", 10, [(20, 1), (20, 3)], [0, 2], [0, 10]),
    ("idle lanes share the rest by weight", 10, [(2, 1), (20, 1), (20, 3)], [1, 0, 0], [2, 2, 6]),
    ("paused lane gets nothing", 10, [(0, 1), (20, 1)], [5, 1], [0, 10]),
    # issue 8, item 11: p (limit 8, demand 2), q (limit 3, idle), r (limit 4, demand 1)
    ("issue example, pool of 10", 10, [(8, 1), (3, 1), (4, 1)], [2, 0, 1], [6, 0, 4]),
    ("issue example, pool of 20", 20, [(8, 1), (3, 1), (4, 1)], [2, 0, 1], [8, 3, 4]),
]


@pytest.mark.parametrize(
    ("name", "capacity", "lanes", "demands", "expected"), ADMISSION, ids=[c[0] for c in ADMISSION]
)
def test_admission(name, capacity, lanes, demands, expected):
    t = single_pool(capacity, *(lane(f"l{i}", lim, w) for i, (lim, w) in enumerate(lanes)))
    result = allocate(t, {f"d/l{i}": x for i, x in enumerate(demands)})
    assert {k: v.admission for k, v in result.lanes.items()} == approx(
        {f"d/l{i}": x for i, x in enumerate(expected)}
    )


STATES = [
    ("idle", 10, [0], "idle", 0.0),
    ("steady", 10, [5], "steady", 0.5),
    ("exactly full is steady", 10, [10], "steady", 1.0),
    ("constrained", 10, [15], "constrained", 1.5),
    ("zero capacity with demand", 0, [1], "constrained", None),
    ("zero capacity idle", 0, [0], "idle", 0.0),
]


@pytest.mark.parametrize(
    ("name", "capacity", "demands", "state", "pressure"), STATES, ids=[c[0] for c in STATES]
)
def test_pool_state_and_pressure(name, capacity, demands, state, pressure):
    t = single_pool(capacity, *(lane(f"l{i}", 100) for i in range(len(demands))))
    p = allocate(t, {f"d/l{i}": x for i, x in enumerate(demands)}).pools["p"]
    assert p.state == state
    assert p.pressure == (pytest.approx(pressure) if pressure is not None else None)


def test_demand_above_limit_is_not_held():
    t = single_pool(100, lane("l", 5))
    r = allocate(t, {"d/l": 50}).lanes["d/l"]
    assert (r.demand, r.allocation, r.held, r.admission) == (50, 5, 0, 5)


def test_pool_demand_counts_effective_demand_only():
    t = single_pool(100, lane("l", 5))
    assert allocate(t, {"d/l": 50}).pools["p"].demand == 5


def test_standalone_pool_capacity_comes_from_destination():
    t = topo([dest("d", ["gpu"], lane("l", 100), gpu=7)])
    result = allocate(t, {"d/l": 10})
    assert result.lanes["d/l"].allocation == 7
    assert result.pools["d/gpu"].capacity == 7


def test_destination_without_resources_is_unconstrained():
    t = topo([dest("d", [], lane("l", 4))])
    r = allocate(t, {"d/l": 10}).lanes["d/l"]
    assert (r.allocation, r.admission, r.held) == (4, 4, 0)


def test_capacity_includes_scale_target_supply():
    t = topo(
        [dest("d", ["r"], lane("l", 100))],
        [pool("p", "r", ["d"], 2, scale_targets=[target("t", 0, 10, 4, replicas=3)])],
    )
    result = allocate(t, {"d/l": 100})
    assert result.pools["p"].capacity == 14
    assert result.lanes["d/l"].allocation == 14


def test_capacity_override_per_pool():
    t = single_pool(10, lane("l", 100))
    assert allocate(t, {"d/l": 100}, capacity={"p": 3}).lanes["d/l"].allocation == 3


@pytest.mark.parametrize(
    ("demand", "field_text"),
    [
        ({"d/nope": 1}, "demand lane 'd/nope': field 'lanes': no such lane"),
        ({"d/l": -1}, "must be a finite number >= 0"),
    ],
)
def test_bad_demand_is_refused(demand, field_text):
    t = single_pool(10, lane("l", 100))
    with pytest.raises(InvalidInput, match=field_text):
        allocate(t, demand)


def test_deterministic():
    t = topo(
        [dest(f"d{i}", ["a", "b"], lane("x", 10, 1 + i % 3), lane("y", 7)) for i in range(6)],
        [
            pool("pa", "a", [f"d{i}" for i in range(6)], 17),
            pool("pb", "b", [f"d{i}" for i in range(3)], 5),
        ],
    )
    demand = {f"d{i}/{n}": 3.0 + i for i in range(6) for n in "xy"}
    first = allocate(t, demand)
    assert all(allocate(t, demand) == first for _ in range(3))


def test_idle_lane_admitted_only_from_capacity_active_lanes_cannot_use_across_pools():
    """Active lane a is bound by its quota pool; idle lane b shares the gpu pool with it and
    gets what a cannot use there. Active lane c, in gpu only, takes the gpu headroom first."""
    t = topo(
        [
            dest("x", ["gpu", "quota"], lane("a", 100)),
            dest("y", ["gpu"], lane("b", 5), lane("c", 3)),
        ],
        [pool("gpu", "gpu", ["x", "y"], 12), pool("quota", "quota", ["x"], 2)],
    )
    result = allocate(t, {"x/a": 1, "y/c": 1})
    admitted = {k: v.admission for k, v in result.lanes.items()}
    assert admitted == approx({"x/a": 2, "y/b": 5, "y/c": 3})


STATIC_POOLS = [
    # (name, static capacity, replicas now, demand, desired replicas): units_per_replica 4,
    # headroom 0.1, target [1, 20] — the targets supply only what static capacity does not
    ("no static capacity", 0, 2, 40, 11),
    ("static covers part", 20, 2, 40, 6),
    ("static covers all", 50, 2, 40, 1),
    ("supply now does not matter", 20, 9, 40, 6),
]


@pytest.mark.parametrize(
    ("name", "static", "replicas", "demand", "desired"),
    STATIC_POOLS,
    ids=[c[0] for c in STATIC_POOLS],
)
def test_desired_replicas_count_static_capacity(name, static, replicas, demand, desired):
    t = topo(
        [dest("d", ["r"], lane("l", 1000))],
        [pool("p", "r", ["d"], static, scale_targets=[target("t", 1, 20, 4, replicas)])],
    )
    result = allocate(t, {"d/l": demand}).pools["p"]
    assert result.desired_by_target == (desired,)
    assert result.capacity == static + 4 * replicas
