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

The filling runs in a compiled kernel (``_filling.c``, built at install) when one is there:
the same floating-point operations in the same order, so the results are the same to the last
bit (``tests/core/test_filling_native.py``). :func:`_fill` stays the reference, and the
fallback: without a compiler at install, or with ``ARKLOW_PURE_PYTHON=1`` in the environment,
the Python runs. :data:`NATIVE` says which is in use. The kernel reads a topology packed once
(:func:`pack`, kept by the compiled topology), so a call only converts caps and capacity.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType

from arklow_pulumi.core.native import load_compiled

LanePools = Sequence[Sequence[tuple[int, float]]]


_native = load_compiled("arklow_pulumi.core._filling")
NATIVE: bool = _native is not None
"""Whether fillings run in the compiled kernel (else in :func:`_fill`)."""


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
    packed: bytes | None = None,
) -> Filling:
    """Fill lanes by weight up to ``caps`` within pool ``capacity`` (pool usage = Σ alloc × cost).

    ``lane_pools[i]`` lists ``(pool, cost)`` for lane ``i``; ``pool_lanes[p]`` lists
    ``(lane, cost)`` for pool ``p`` (the same incidences, indexed the other way, each pool's
    lanes in increasing order: pool sums are added up in that order). Returns each
    lane's allocation, which pools saturated, and each pool's final usage.

    ``packed`` is :func:`pack` of these weights and incidences, made once per topology (the
    compiled kernel reads it; without it, the call packs them itself).
    """
    if _native is not None:
        if packed is None:
            packed = pack(weights, lane_pools, pool_lanes, len(capacity))
        if packed is not None:
            result = _native.fill(caps, capacity, packed)
            if result is not None:
                return Filling(*result)
    if len(capacity) == 1 and caps and all(len(pools) == 1 for pools in lane_pools):
        return _fill_one_pool(caps, weights, lane_pools, capacity[0])
    return _fill(caps, weights, lane_pools, pool_lanes, capacity)


def kernel() -> ModuleType | None:
    """The compiled kernel in use, or ``None`` when the Python runs (read at each call, so that
    a test can force the Python by setting ``_native``)."""
    return _native


def pack(
    weights: Sequence[float], lane_pools: LanePools, pool_lanes: LanePools, pools: int
) -> bytes | None:
    """The weights and incidences flattened for the compiled kernel; ``None`` without it, or
    when they are not plain finite numbers and in-range indices (the Python then runs)."""
    if _native is None:
        return None
    try:
        packed: bytes = _native.pack(weights, lane_pools, pool_lanes, pools)
    except (TypeError, ValueError):
        return None
    return packed


def _fill(
    caps: Sequence[float],
    weights: Sequence[float],
    lane_pools: LanePools,
    pool_lanes: LanePools,
    capacity: Sequence[float],
) -> Filling:
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


def _fill_one_pool(
    caps: Sequence[float], weights: Sequence[float], lane_pools: LanePools, capacity: float
) -> Filling:
    """:func:`progressive_fill` for one pool that every lane draws on (most independent units of
    a fleet, and every standalone pool): the same steps and the same floating-point operations in
    the same order, with the pool's running sums held in locals instead of lists and a heap of
    at most one entry (``tests/core/test_filling_one_pool.py`` holds the two equal, bit for
    bit)."""
    n = len(caps)
    alloc = [0.0] * n
    rising = [i for i, cap in enumerate(caps) if cap > 0]
    if not rising:
        return Filling(alloc, [False], [0.0])
    costs = [pools[0][1] for pools in lane_pools]
    frozen = [True] * n
    slope = 0.0
    active = 0
    fixed = 0.0
    lane_level = [math.nan] * (n + 1)
    for i in rising:
        frozen[i] = False
        w = weights[i]
        lane_level[i] = caps[i] / w
        slope += w * costs[i]
        active += 1
    key: float | None = capacity / slope if active and slope > 0 else None
    order = sorted(rising, key=lane_level.__getitem__)
    order.append(n)
    nxt = 0
    level = 0.0
    saturated = False
    while True:
        # the pool's entry, refreshed as _next_pool refreshes it
        while key is not None:
            if saturated or active == 0 or slope <= 0:
                key = None
                break
            current = max(capacity - fixed, 0.0) / slope
            if current > key:
                key = current
                continue
            break
        bound = math.inf if key is None else key
        i = order[nxt]
        while lane_level[i] <= bound:
            if not frozen[i]:
                frozen[i] = True
                value = alloc[i] = caps[i]
                c = costs[i]
                fixed += value * c
                slope -= weights[i] * c
                active -= 1
            nxt += 1
            i = order[nxt]
        if key is None:
            break
        pool_level = key
        if saturated or active == 0 or slope <= 0:
            continue  # the entry went stale: the next round drops it
        if max(capacity - fixed, 0.0) / slope > pool_level:
            continue  # lanes frozen above moved the pool's level; look again
        key = None  # popped
        if pool_level > level:
            level = pool_level
        saturated = True
        for j in range(n):
            if not frozen[j]:
                frozen[j] = True
                w = weights[j]
                value = w * level
                if value > caps[j]:
                    value = caps[j]
                alloc[j] = value
                c = costs[j]
                fixed += value * c
                slope -= w * c
                active -= 1
    return Filling(alloc, [saturated], [fixed])
