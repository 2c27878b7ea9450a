"""Invariants of the allocation engine over random coupled topologies, and agreement with two
independent reference solvers (exact fractions; successive linear programs)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arklow_pulumi.core.allocating import Allocation, allocate
from arklow_pulumi.reading.parsing import parse_topology
from arklow_pulumi.reading.spec import build_topology
from tests.reference_allocation import Problem, exact_allocate, lp_allocate

TOL = 1e-9


@dataclass(frozen=True)
class Case:
    doc: dict[str, Any]
    demand: dict[str, float]
    keys: list[str]
    problem: Problem


@st.composite
def cases(draw: st.DrawFn, max_dest: int = 5, max_lanes: int = 3) -> Case:
    n_res = draw(st.integers(1, 3))
    resources = [f"r{k}" for k in range(n_res)]
    n_pools = draw(st.integers(n_res, n_res + 3))
    pool_res = resources + [draw(st.sampled_from(resources)) for _ in range(n_pools - n_res)]
    capacity = [float(draw(st.integers(0, 40))) for _ in range(n_pools)]
    members: list[list[str]] = [[] for _ in range(n_pools)]
    destinations, keys, incidences, weights, limits, demands = [], [], [], [], [], []
    for d in range(draw(st.integers(1, max_dest))):
        name = f"d{d}"
        used = draw(st.lists(st.sampled_from(resources), min_size=1, max_size=n_res, unique=True))
        chosen = {
            r: draw(st.sampled_from([p for p, pr in enumerate(pool_res) if pr == r])) for r in used
        }
        for p in chosen.values():
            members[p].append(name)
        lanes = []
        for k in range(draw(st.integers(1, max_lanes))):
            w = draw(st.sampled_from([0.5, 1.0, 2.0, 3.0]))
            lim = float(draw(st.integers(0, 20)))
            cost = {r: draw(st.sampled_from([0.5, 1.0, 2.0])) for r in used}
            lanes.append({"name": f"l{k}", "limit": lim, "weight": w, "cost": cost})
            keys.append(f"{name}/l{k}")
            weights.append(w)
            limits.append(lim)
            demands.append(float(draw(st.integers(0, 25))))
            incidences.append([(chosen[r], cost[r]) for r in used])
        destinations.append({"name": name, "resources": used, "lanes": lanes})
    pools = [
        {"name": f"p{p}", "resource": pool_res[p], "capacity": capacity[p], "members": members[p]}
        for p in range(n_pools)
    ]
    doc = {"destinations": destinations, "pools": pools}
    problem = Problem(weights, limits, demands, incidences, capacity)
    return Case(doc, dict(zip(keys, demands, strict=True)), keys, problem)


def run(case: Case) -> Allocation:
    return allocate(build_topology(parse_topology(case.doc)), case.demand)


def close(a: float, b: float, rel: float = TOL) -> bool:
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b))


def pool_usage(case: Case, values: list[float]) -> list[float]:
    usage = [0.0] * len(case.problem.capacity)
    for i, lane in enumerate(case.problem.incidences):
        for p, c in lane:
            usage[p] += values[i] * c
    return usage


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_bounds_and_capacity(case: Case) -> None:
    result = run(case)
    alloc = [result.lanes[k].allocation for k in case.keys]
    admit = [result.lanes[k].admission for k in case.keys]
    for i, k in enumerate(case.keys):
        e = min(case.problem.demands[i], case.problem.limits[i])
        assert -TOL <= alloc[i] <= e + TOL, k
        assert admit[i] <= case.problem.limits[i] + TOL, k
        assert admit[i] >= alloc[i] - TOL, k
        assert close(result.lanes[k].held, e - alloc[i]), k
    for p, used in enumerate(pool_usage(case, admit)):
        assert used <= case.problem.capacity[p] * (1 + TOL) + TOL


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_max_min_optimality_and_work_conservation(case: Case) -> None:
    """Every held lane has a saturated pool in which its weighted allocation is the largest;
    so no pool with unused capacity holds any work back."""
    result = run(case)
    alloc = [result.lanes[k].allocation for k in case.keys]
    usage = pool_usage(case, alloc)
    saturated = [close(u, c) for u, c in zip(usage, case.problem.capacity, strict=True)]
    w = case.problem.weights
    for i, k in enumerate(case.keys):
        if result.lanes[k].held <= TOL * 100:
            continue
        bottlenecks = [
            p
            for p, _ in case.problem.incidences[i]
            if saturated[p]
            and all(
                alloc[i] / w[i] >= alloc[j] / w[j] - 1e-7
                for j, lane in enumerate(case.problem.incidences)
                if any(q == p for q, _ in lane)
            )
        ]
        assert bottlenecks, f"{k} is held without a bottleneck pool"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_agrees_with_exact_fractions(case: Case) -> None:
    result = run(case)
    alloc, admit = exact_allocate(case.problem)
    for i, k in enumerate(case.keys):
        assert close(result.lanes[k].allocation, float(alloc[i])), (k, result.lanes[k], alloc[i])
        assert close(result.lanes[k].admission, float(admit[i])), (k, result.lanes[k], admit[i])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(max_dest=4, max_lanes=2))
def test_agrees_with_successive_linear_programs(case: Case) -> None:
    result = run(case)
    alloc, admit = lp_allocate(case.problem)
    for i, k in enumerate(case.keys):
        assert close(result.lanes[k].allocation, alloc[i], 1e-6), (k, result.lanes[k], alloc[i])
        assert close(result.lanes[k].admission, admit[i], 1e-6), (k, result.lanes[k], admit[i])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_idle_lanes_never_take_capacity_active_lanes_could_use(case: Case) -> None:
    """Admission serves active lanes (demand > 0) first: an active lane below its limit has a
    pool that active lanes alone fill, so no idle lane took room it could have used."""
    result = run(case)
    active = [case.problem.demands[i] > 0 for i in range(len(case.keys))]
    admit = [result.lanes[k].admission if active[i] else 0.0 for i, k in enumerate(case.keys)]
    usage = pool_usage(case, admit)
    full = [close(u, c, 1e-7) or u >= c for u, c in zip(usage, case.problem.capacity, strict=True)]
    for i, k in enumerate(case.keys):
        if active[i] and admit[i] < case.problem.limits[i] - 1e-7:
            assert any(full[p] for p, _ in case.problem.incidences[i]), k
