"""Independent reference solvers for the allocation contract, used by tests and the benchmark.

``exact_allocate`` works in :class:`fractions.Fraction` with the naive round-based progressive
filling straight from the definition: each round finds the next level at which some lane reaches
its cap or some pool saturates, freezes what froze, and repeats. ``lp_allocate`` solves the same
weighted max-min problem with successive linear programs (scipy's HiGHS), the textbook way.
Neither shares code with the engine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True)
class Problem:
    """A flat allocation problem: lanes with weights, caps and (pool, cost) incidences."""

    weights: Sequence[float]
    limits: Sequence[float]
    demands: Sequence[float]
    incidences: Sequence[Sequence[tuple[int, float]]]
    capacity: Sequence[float]


def _exact_fill(
    caps: Sequence[Fraction],
    weights: Sequence[Fraction],
    incidences: Sequence[Sequence[tuple[int, Fraction]]],
    capacity: Sequence[Fraction],
) -> list[Fraction]:
    """Round after round: the next level is the lowest at which a lane reaches its cap or a pool
    saturates; everything that froze at that level is frozen, then repeat."""
    n = len(caps)
    members: list[list[tuple[int, Fraction]]] = [[] for _ in capacity]
    for i, lane in enumerate(incidences):
        for p, c in lane:
            members[p].append((i, c))
    alloc = [Fraction(0)] * n
    frozen = [False] * n
    while not all(frozen):
        candidates = [caps[i] / weights[i] for i in range(n) if not frozen[i]]
        for p, cap in enumerate(capacity):
            used = sum((alloc[i] * c for i, c in members[p] if frozen[i]), Fraction(0))
            slope = sum((weights[i] * c for i, c in members[p] if not frozen[i]), Fraction(0))
            if slope > 0:
                candidates.append((cap - used) / slope)
        level = min(candidates)
        newly = {i for i in range(n) if not frozen[i] and weights[i] * level >= caps[i]}
        for p, cap in enumerate(capacity):
            usage = sum(
                ((alloc[i] if frozen[i] else weights[i] * level) * c for i, c in members[p]),
                Fraction(0),
            )
            if usage >= cap:
                newly.update(i for i, _ in members[p] if not frozen[i])
        for i in newly:
            frozen[i] = True
            alloc[i] = min(caps[i], weights[i] * level)
    return alloc


def exact_allocate(problem: Problem) -> tuple[list[Fraction], list[Fraction]]:
    """(allocation, admission) in exact arithmetic; admission fills active lanes (demand > 0)
    up to their limits first, then idle lanes from what is still unused."""
    w = [Fraction(x) for x in problem.weights]
    limit = [Fraction(x) for x in problem.limits]
    e = [min(Fraction(d), lim) for d, lim in zip(problem.demands, limit, strict=True)]
    inc = [[(p, Fraction(c)) for p, c in lane] for lane in problem.incidences]
    cap = [Fraction(c) for c in problem.capacity]
    alloc = _exact_fill(e, w, inc, cap)
    residual = _exact_residual(cap, inc, alloc)
    d = [Fraction(x) for x in problem.demands]
    # admission: active lanes (demand > 0) up to their limits first, then idle lanes
    room = [lim - a if x > 0 else Fraction(0) for x, lim, a in zip(d, limit, alloc, strict=True)]
    extra = _exact_fill(room, w, inc, residual)
    residual = _exact_residual(residual, inc, extra)
    room = [lim if x <= 0 else Fraction(0) for x, lim in zip(d, limit, strict=True)]
    idle = _exact_fill(room, w, inc, residual)
    return alloc, [a + x + y for a, x, y in zip(alloc, extra, idle, strict=True)]


def _exact_residual(
    capacity: Sequence[Fraction],
    incidences: Sequence[Sequence[tuple[int, Fraction]]],
    values: Sequence[Fraction],
) -> list[Fraction]:
    residual = []
    for p, c in enumerate(capacity):
        used = sum(
            (values[i] * k for i, lane in enumerate(incidences) for q, k in lane if q == p),
            Fraction(0),
        )
        residual.append(max(c - used, Fraction(0)))
    return residual


def _lp_fill(
    caps: Sequence[float],
    weights: Sequence[float],
    incidences: Sequence[Sequence[tuple[int, float]]],
    capacity: Sequence[float],
    tol: float = 1e-9,
) -> list[float]:
    import numpy as np
    from scipy.optimize import linprog

    n, m = len(caps), len(capacity)
    fixed: dict[int, float] = {}
    a_ub = np.zeros((m, n + 1))
    for i, lane in enumerate(incidences):
        for p, c in lane:
            a_ub[p, i] += c
    b_ub = np.array(capacity, dtype=float)
    while len(fixed) < n:
        free = [i for i in range(n) if i not in fixed]
        # maximise t subject to x_i >= w_i t (free lanes), frozen lanes fixed, caps, capacities
        rows = [a_ub]
        rhs = [b_ub]
        for i in free:
            row = np.zeros(n + 1)
            row[i] = -1.0
            row[n] = weights[i]
            rows.append(row[None, :])
            rhs.append(np.zeros(1))
        bounds = [(fixed[i], fixed[i]) if i in fixed else (0.0, caps[i]) for i in range(n)]
        bounds.append((0.0, None))
        c = np.zeros(n + 1)
        c[n] = -1.0
        res = linprog(
            c, A_ub=np.vstack(rows), b_ub=np.concatenate(rhs), bounds=bounds, method="highs"
        )
        assert res.status == 0, res.message
        t = res.x[n]
        # which free lanes cannot rise above w_i t while all others stay at least there?
        progressed = False
        for j in free:
            bounds_j = [
                (fixed[i], fixed[i])
                if i in fixed
                else (weights[i] * t * (1 - 1e-12) if i != j else 0.0, caps[i])
                for i in range(n)
            ]
            bounds_j = [(min(lo, hi), hi) for lo, hi in bounds_j]
            cj = np.zeros(n)
            cj[j] = -1.0
            rj = linprog(cj, A_ub=a_ub[:, :n], b_ub=b_ub, bounds=bounds_j, method="highs")
            assert rj.status == 0, rj.message
            if rj.x[j] <= weights[j] * t + tol * max(1.0, weights[j] * t):
                fixed[j] = min(caps[j], weights[j] * t)
                progressed = True
        assert progressed
    return [fixed[i] for i in range(n)]


def lp_allocate(problem: Problem) -> tuple[list[float], list[float]]:
    """(allocation, admission) by successive linear programs."""
    e = [min(d, lim) for d, lim in zip(problem.demands, problem.limits, strict=True)]
    alloc = _lp_fill(e, problem.weights, problem.incidences, problem.capacity)
    residual = _lp_residual(problem.capacity, problem.incidences, alloc)
    # admission: active lanes (demand > 0) up to their limits first, then idle lanes
    room = [
        max(lim - a, 0.0) if d > 0 else 0.0
        for d, lim, a in zip(problem.demands, problem.limits, alloc, strict=True)
    ]
    extra = _lp_fill(room, problem.weights, problem.incidences, residual)
    residual = _lp_residual(residual, problem.incidences, extra)
    room = [lim if d <= 0 else 0.0 for d, lim in zip(problem.demands, problem.limits, strict=True)]
    idle = _lp_fill(room, problem.weights, problem.incidences, residual)
    return alloc, [a + x + y for a, x, y in zip(alloc, extra, idle, strict=True)]


def _lp_residual(
    capacity: Sequence[float],
    incidences: Sequence[Sequence[tuple[int, float]]],
    values: Sequence[float],
) -> list[float]:
    residual = []
    for p, c in enumerate(capacity):
        used = sum(values[i] * k for i, lane in enumerate(incidences) for q, k in lane if q == p)
        residual.append(max(c - used, 0.0))
    return residual


def problem_from(topology: object, demand: Mapping[str, float]) -> tuple[list[str], Problem]:
    """Flatten an engine Topology into a reference Problem (lane keys in engine order)."""
    from arklow_pulumi.core.allocating import compile_topology
    from arklow_pulumi.core.topology import Topology

    assert isinstance(topology, Topology)
    c = compile_topology(topology)
    problem = Problem(
        weights=list(c.weights),
        limits=list(c.limits),
        demands=[demand.get(k, 0.0) for k in c.lane_keys],
        incidences=[list(x) for x in c.lane_pools],
        capacity=[topology.pools[p].total_capacity for p in c.pool_names],
    )
    return list(c.lane_keys), problem
