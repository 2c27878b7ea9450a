"""The progressive filling in plain Python: the oracle the Rust kernel
(``arklow_pulumi.core._kernel``) is held equal to, bit for bit, by ``tests/core/test_kernel_oracle.py``.

The same steps as ``kernel/src/filling.rs`` with the same floating-point operations in the same order
(Rust contracts nothing into fused multiply-adds), so both give the same doubles: the algorithm and
its numerical care are described in :mod:`arklow_pulumi.core.filling`. It trusts its inputs (the
kernel checks them); :func:`allocate` is the kernel's ``Network.allocate`` (the allocation
filling, both admission fillings, each pool's demand). Not used by the package.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass

LanePools = Sequence[Sequence[tuple[int, float]]]

RECOMPUTE = 1.0 / 16.0  # the kernel's: a pool's slope is re-summed under this share of its last sum


@dataclass(frozen=True)
class Filled:
    allocation: list[float]
    saturated: list[bool]
    used: list[float]


def pool_lanes_of(lane_pools: LanePools, pools: int) -> list[list[tuple[int, float]]]:
    """Each pool's ``(lane, cost)`` members, in lane order."""
    members: list[list[tuple[int, float]]] = [[] for _ in range(pools)]
    for i, incidences in enumerate(lane_pools):
        for p, c in incidences:
            members[p].append((i, c))
    return members


class _Filling:
    def __init__(
        self,
        caps: Sequence[float],
        weights: Sequence[float],
        lane_pools: LanePools,
        capacity: Sequence[float],
    ) -> None:
        n, m = len(caps), len(capacity)
        self.caps, self.weights, self.lane_pools = caps, weights, lane_pools
        self.alloc = [0.0] * n
        self.frozen = [cap <= 0 for cap in caps]
        self.fixed = [0.0] * m
        self.slope = [0.0] * m
        self.scale = [0.0] * m
        self.active = [0] * m
        self.saturated = [False] * m
        self.live = pool_lanes_of(lane_pools, m)

    def resum(self, q: int) -> None:
        live = [(j, c) for j, c in self.live[q] if not self.frozen[j]]
        total = 0.0
        for j, c in live:
            total += self.weights[j] * c
        self.live[q] = live
        self.slope[q] = total
        self.scale[q] = total

    def freeze(self, i: int, value: float) -> None:
        self.frozen[i] = True
        self.alloc[i] = value
        w = self.weights[i]
        for q, c in self.lane_pools[i]:
            self.fixed[q] += value * c
            self.active[q] -= 1
            if self.saturated[q]:
                continue
            if self.active[q] == 0:
                self.slope[q] = 0.0
            else:
                self.slope[q] -= w * c
                if self.slope[q] <= self.scale[q] * RECOMPUTE:
                    self.resum(q)

    def next_pool(
        self, heap: list[tuple[float, int]], capacity: Sequence[float]
    ) -> tuple[float, int] | None:
        while heap:
            key, p = heap[0]
            if self.saturated[p] or self.active[p] == 0 or self.slope[p] <= 0:
                heapq.heappop(heap)
                continue
            current = max(capacity[p] - self.fixed[p], 0.0) / self.slope[p]
            if current > key:
                heapq.heapreplace(heap, (current, p))
                continue
            return key, p
        return None


def _reached(level: float, bound: float) -> bool:
    return level < bound or (level == bound and bound > 0)


def fill(
    caps: Sequence[float],
    weights: Sequence[float],
    lane_pools: LanePools,
    capacity: Sequence[float],
) -> Filled:
    """Weighted progressive filling of ``caps`` within pool ``capacity``."""
    f = _Filling(caps, weights, lane_pools, capacity)
    if all(f.frozen):
        return Filled(f.alloc, f.saturated, f.fixed)
    heap = []
    for p in range(len(capacity)):
        f.resum(p)
        f.active[p] = len(f.live[p])
        if f.active[p] > 0 and f.slope[p] > 0:
            heap.append((capacity[p] / f.slope[p], p))
    heapq.heapify(heap)
    lane_level = [cap / w for cap, w in zip(caps, weights, strict=True)]
    order = sorted((i for i in range(len(caps)) if not f.frozen[i]), key=lane_level.__getitem__)
    nxt = 0
    level = 0.0
    while True:
        pool = f.next_pool(heap, capacity)
        bound = math.inf if pool is None else pool[0]
        while nxt < len(order) and _reached(lane_level[order[nxt]], bound):
            i = order[nxt]
            if not f.frozen[i]:
                f.freeze(i, caps[i])
            nxt += 1
        if pool is None:
            break
        pool_level, p = pool
        if f.next_pool(heap, capacity) != pool:
            continue
        heapq.heappop(heap)
        if pool_level > level:
            level = pool_level
        f.saturated[p] = True
        for j, _c in f.live[p]:
            if not f.frozen[j]:
                value = weights[j] * level
                if value > caps[j]:
                    value = caps[j]
                f.freeze(j, value)
    return Filled(f.alloc, f.saturated, f.fixed)


def _unused(capacity: Sequence[float], filled: Filled) -> list[float]:
    return [
        0.0 if full else max(cap - used, 0.0)
        for cap, used, full in zip(capacity, filled.used, filled.saturated, strict=True)
    ]


def _fillable(room: list[float], lane_pools: LanePools, residual: Sequence[float]) -> bool:
    any_room = False
    for i, r in enumerate(room):
        if r > 0:
            if any(residual[p] <= 0 for p, _c in lane_pools[i]):
                room[i] = 0.0
            else:
                any_room = True
    return any_room


def allocate(
    weights: Sequence[float],
    limits: Sequence[float],
    lane_pools: LanePools,
    demands: Sequence[float],
    capacity: Sequence[float],
    admission: bool = True,
) -> tuple[list[float], list[float], list[float], list[float]]:
    """``(caps, allocation, admission, pool_demand)``, as ``Network.allocate`` makes them."""
    caps = [float(d if d < lim else lim) for d, lim in zip(demands, limits, strict=True)]
    first = fill(caps, weights, lane_pools, capacity)
    pool_demand = [0.0] * len(capacity)
    for i, e in enumerate(caps):
        if e != 0:
            for p, c in lane_pools[i]:
                pool_demand[p] += e * c
    alloc = first.allocation
    if not admission:
        return caps, alloc, list(alloc), pool_demand
    residual = _unused(capacity, first)
    admitted = list(alloc)
    room = [
        lim - a if d > 0 and lim > a else 0.0
        for d, lim, a in zip(demands, limits, alloc, strict=True)
    ]
    if _fillable(room, lane_pools, residual):
        active = fill(room, weights, lane_pools, residual)
        residual = _unused(residual, active)
        admitted = [a + x for a, x in zip(admitted, active.allocation, strict=True)]
    room = [float(lim) if d <= 0 else 0.0 for d, lim in zip(demands, limits, strict=True)]
    if _fillable(room, lane_pools, residual):
        idle = fill(room, weights, lane_pools, residual)
        admitted = [a + x for a, x in zip(admitted, idle.allocation, strict=True)]
    admitted = [a if a < lim else float(lim) for a, lim in zip(admitted, limits, strict=True)]
    return caps, alloc, admitted, pool_demand
