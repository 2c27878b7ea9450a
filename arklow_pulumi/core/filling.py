"""Weighted progressive filling over many coupled pools, in O((L + I) log P).

Every unfrozen lane ``i`` sits at ``weight[i] * t`` for one global level ``t`` that rises from 0.
A lane freezes when it reaches its cap (event at ``t = cap / weight``) or when a pool it draws from
saturates (``Σ allocation × cost = capacity``). The allocation found is the unique weighted
max-min fair one.

Instead of re-scanning every pool after each freeze, each pool keeps two running sums: ``fixed``
(units used by its frozen lanes) and ``slope`` (units added per unit of ``t`` by its unfrozen
lanes). Its saturation level is ``(capacity - fixed) / slope``. Freezing a lane at a level no later
than a pool's saturation level can only *raise* that level, so the pool heap is kept lazily: a
popped entry is re-checked against the pool's current level and pushed back if it was stale.
Lane events come from one sort. Each lane freezes once, each pool saturates once.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass

LanePools = Sequence[Sequence[tuple[int, float]]]


@dataclass(frozen=True, slots=True)
class Filling:
    allocation: list[float]
    saturated: list[bool]


def progressive_fill(
    caps: Sequence[float],
    weights: Sequence[float],
    lane_pools: LanePools,
    pool_lanes: LanePools,
    capacity: Sequence[float],
) -> Filling:
    """Fill lanes by weight up to ``caps`` within pool ``capacity`` (pool usage = Σ alloc × cost).

    ``lane_pools[i]`` lists ``(pool, cost)`` for lane ``i``; ``pool_lanes[p]`` lists
    ``(lane, cost)`` for pool ``p`` (the same incidences, indexed the other way).
    """
    n, m = len(caps), len(capacity)
    alloc = [0.0] * n
    frozen = [False] * n
    fixed = [0.0] * m
    slope = [0.0] * m
    active = [0] * m
    saturated = [False] * m
    for p, lanes in enumerate(pool_lanes):
        s = 0.0
        for i, c in lanes:
            s += weights[i] * c
        slope[p] = s
        active[p] = len(lanes)

    def freeze(i: int, value: float) -> None:
        frozen[i] = True
        alloc[i] = value
        w = weights[i]
        for p, c in lane_pools[i]:
            fixed[p] += value * c
            slope[p] -= w * c
            active[p] -= 1

    heap = [(capacity[p] / slope[p], p) for p in range(m) if active[p] and slope[p] > 0]
    heapq.heapify(heap)
    order = sorted(range(n), key=lambda i: caps[i] / weights[i])
    next_lane = 0
    level = 0.0
    while True:
        while next_lane < n and frozen[order[next_lane]]:
            next_lane += 1
        lane_level = caps[order[next_lane]] / weights[order[next_lane]] if next_lane < n else None
        pool = _next_pool(heap, capacity, fixed, slope, active, saturated)
        if pool is None and lane_level is None:
            break
        if pool is None or (lane_level is not None and lane_level <= pool[0]):
            assert lane_level is not None
            i = order[next_lane]
            level = max(level, lane_level)
            freeze(i, caps[i])
            continue
        heapq.heappop(heap)
        pool_level, p = pool
        level = max(level, pool_level)
        saturated[p] = True
        for i, _c in pool_lanes[p]:
            if not frozen[i]:
                freeze(i, min(caps[i], weights[i] * level))
    return Filling(alloc, saturated)


def _next_pool(
    heap: list[tuple[float, int]],
    capacity: Sequence[float],
    fixed: list[float],
    slope: list[float],
    active: list[int],
    saturated: list[bool],
) -> tuple[float, int] | None:
    """The pool that saturates next, with its up-to-date level; stale heap entries are refreshed."""
    while heap:
        key, p = heap[0]
        if saturated[p] or active[p] == 0 or slope[p] <= 0:
            heapq.heappop(heap)
            continue
        current = max(capacity[p] - fixed[p], 0.0) / slope[p]
        if current > key:
            heapq.heapreplace(heap, (current, p))
            continue
        return key, p
    return None
