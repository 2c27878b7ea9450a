"""The coupled-pool step of the scale policy: each pool's servable demand (the allocation of every
lane's ``e`` at the capacity every pool can reach, Σ cost × allocation per pool)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from arklow_pulumi.core.allocating import allocate, compile_topology, servable_demands
from arklow_pulumi.reading.parsing import parse_topology
from arklow_pulumi.reading.spec import build_topology
from tests.builders import dest, lane, pool, target, topo
from tests.core.test_allocation_properties import Case, close, pool_usage, wide_cases
from tests.hypothesis_profiles import examples


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wide_cases())
def test_over_the_whole_documented_range(case: Case) -> None:
    # pools without targets reach their static capacity: the servable demand of each pool is
    # what the allocation itself uses, and there is none to compute when every demand fits
    t = build_topology(parse_topology(case.doc))
    result = allocate(t, case.demand)
    servable = servable_demands(t, result)
    names = compile_topology(t).pool_names
    capacity = case.problem.capacity
    fits = all(result.pools[n].demand <= c for n, c in zip(names, capacity, strict=True))
    assert (servable is None) == fits
    if servable is None:
        return
    used = pool_usage(case, [result.lanes[k].allocation for k in case.keys])
    for name, reach, value, use in zip(names, case.problem.capacity, servable, used, strict=True):
        assert value <= reach * (1 + 1e-9) + 1e-300
        assert value <= result.pools[name].demand * (1 + 1e-9) + 1e-300
        assert close(value, use)


def test_targets_count_at_their_max_not_their_current_count() -> None:
    # gpu holds 10 units now (its target at 1 of 10-unit replicas) but can reach 100; llm is a
    # fixed 50: the lane (gpu 1 + llm 1) can be served 50, so gpu's servable demand is 50
    t = topo(
        [dest("a", ["gpu", "llm"], lane("x", 1000, gpu=1, llm=1))],
        [
            pool("g", "gpu", ["a"], 0, scale_targets=[target("t", 1, 10, 10, 1)]),
            pool("l", "llm", ["a"], 50),
        ],
    )
    result = allocate(t, {"a/x": 80.0})
    assert result.pools["g"].desired_by_target == (9,)  # single tick: 80 x 1.1 = 88 units
    assert servable_demands(t, result) == [50.0, 50.0]


def test_none_when_every_pool_can_reach_its_demand() -> None:
    t = topo(
        [dest("a", ["gpu"], lane("x", 1000))],
        [pool("g", "gpu", ["a"], 0, scale_targets=[target("t", 1, 10, 10, 1)])],
    )
    assert servable_demands(t, allocate(t, {"a/x": 100.0})) is None
    assert servable_demands(t, allocate(t, {"a/x": 100.5})) == [100.0]
