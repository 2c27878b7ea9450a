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
import math
from collections.abc import Sequence
from dataclasses import dataclass

LanePools = Sequence[Sequence[tuple[int, float]]]


@dataclass(frozen=True, slots=True)
class Filling:
    allocation: list[float]
    saturated: list[bool]
    used: list[float]


def progressive_fill(
    caps: Sequence[float],
    weights: Sequence[float],
    lane_pools: LanePools,
    pool_lanes: LanePools,
    capacity: Sequence[float],
) -> Filling:
    """Fill lanes by weight up to ``caps`` within pool ``capacity`` (pool usage = Σ alloc × cost).

    ``lane_pools[i]`` lists ``(pool, cost)`` for lane ``i``; ``pool_lanes[p]`` lists
    ``(lane, cost)`` for pool ``p`` (the same incidences, indexed the other way, each pool's
    lanes in increasing order: pool sums are added up in that order). Returns each
    lane's allocation, which pools saturated, and each pool's final usage.
    """
    n, m = len(caps), len(capacity)
    alloc = [0.0] * n
    fixed = [0.0] * m
    saturated = [False] * m
    rising = [i for i, cap in enumerate(caps) if cap > 0]  # the others never count anywhere
    if not rising:
        return Filling(alloc, saturated, fixed)
    frozen = [True] * n
    slope = [0.0] * m
    active = [0] * m
    lane_level = [math.nan] * (n + 1)  # index n: the sentinel, a level no pool bound reaches
    # Each pool's slope summed lane by lane in increasing lane order: the order of ``pool_lanes``.
    for i in rising:
        frozen[i] = False
        w = weights[i]
        lane_level[i] = caps[i] / w
        for q, c in lane_pools[i]:
            slope[q] += w * c
            active[q] += 1

    heap = [(capacity[p] / slope[p], p) for p in range(m) if active[p] and slope[p] > 0]
    heapq.heapify(heap)
    order = sorted(rising, key=lane_level.__getitem__)
    order.append(n)
    nxt = 0
    level = 0.0
    while True:
        pool = _next_pool(heap, capacity, fixed, slope, active, saturated)
        bound = math.inf if pool is None else pool[0]
        # Lane events up to the next pool's (lower-bound) level: a pool's level only rises as
        # lanes freeze, so none of these can be pre-empted by a pool saturating first.
        i = order[nxt]
        while lane_level[i] <= bound:  # False for the NaN sentinel
            if not frozen[i]:
                frozen[i] = True
                value = alloc[i] = caps[i]
                w = weights[i]
                for q, c in lane_pools[i]:
                    fixed[q] += value * c
                    slope[q] -= w * c
                    active[q] -= 1
            nxt += 1
            i = order[nxt]
        if pool is None:
            break
        pool_level, p = pool
        if _next_pool(heap, capacity, fixed, slope, active, saturated) != pool:
            continue  # lanes frozen above moved this pool's level; look again
        heapq.heappop(heap)
        if pool_level > level:
            level = pool_level
        saturated[p] = True
        for j, _c in pool_lanes[p]:
            if not frozen[j]:
                frozen[j] = True
                value = weights[j] * level
                if value > caps[j]:
                    value = caps[j]
                alloc[j] = value
                w = weights[j]
                for q, c in lane_pools[j]:
                    fixed[q] += value * c
                    slope[q] -= w * c
                    active[q] -= 1
    return Filling(alloc, saturated, fixed)


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
