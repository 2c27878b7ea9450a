"""The single-tick scale decision in Python: the oracle the Rust kernel's ``Sizings`` is held to
(``tests/core/test_scaling_kernel.py``). The package has no copy of it: the kernel
(``kernel/src/sizing.rs``) is the one implementation; the operations and their order are the
same here, so the counts agree exactly."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from operator import mul, truediv

from arklow_pulumi.core.policy import clamp
from arklow_pulumi.core.topology import ScaleTarget

_EPS = 1e-9


@dataclass(frozen=True, slots=True)
class PoolSizing:
    """A pool as the single-tick decision reads it, made once per topology: ``1 + headroom``,
    the static capacity, and per target its units per replica, bounds, and the units those
    bounds supply (``min × units``, ``max × units``)."""

    grow: float
    static_capacity: float
    units_per_replica: tuple[float, ...]
    lows: tuple[int, ...]
    highs: tuple[int, ...]
    low_units: tuple[float, ...]
    high_units: tuple[float, ...]


def pool_sizing(
    headroom: float, targets: Sequence[ScaleTarget], static_capacity: float
) -> PoolSizing:
    return PoolSizing(
        grow=1.0 + headroom,
        static_capacity=static_capacity,
        units_per_replica=tuple(t.units_per_replica for t in targets),
        lows=tuple(t.min_replicas for t in targets),
        highs=tuple(t.max_replicas for t in targets),
        low_units=tuple(t.min_replicas * t.units_per_replica for t in targets),
        high_units=tuple(t.max_replicas * t.units_per_replica for t in targets),
    )


def desired_for_pools(
    demands: Sequence[float], sizings: Sequence[PoolSizing]
) -> list[tuple[int, ...]]:
    """The single-tick decision of each pool (a tick decides 1,000 pools and more at once): its
    units split across the targets (:func:`_split`), each share rounded down to whole replicas
    within the target's bounds, then rounded up one replica at a time, largest remainder first,
    only until the units are covered (the targets together run ceil(units / units_per_replica),
    not one extra per target)."""
    out: list[tuple[int, ...]] = []
    floor = math.floor
    for demand, sizing in zip(demands, sizings, strict=True):
        uprs = sizing.units_per_replica
        if not uprs:
            out.append(())
            continue
        needed = demand * sizing.grow
        rest = needed - sizing.static_capacity
        units = rest if rest > _EPS * needed else 0.0  # float noise of a full cover: none short
        highs = sizing.highs
        exact = list(map(truediv, _split(units, sizing), uprs))
        counts: list[int] = []
        for x, lo, hi in zip(exact, sizing.lows, highs, strict=True):
            # floor tolerant of float noise (2.9999999999 -> 3), at least 0, then within bounds
            size = x if x > 1.0 else -x if x < -1.0 else 1.0
            c = floor(x + _EPS * size)
            counts.append(clamp(c if c > 0 else 0, lo, hi))
        tolerance = _EPS * (units if units > 1.0 else 1.0)
        while units - sum(map(mul, counts, uprs)) > tolerance:
            room = [k for k, hi in enumerate(highs) if counts[k] < hi]
            if not room:
                break
            k = room[0] if len(room) == 1 else max(room, key=lambda i: (exact[i] - counts[i], -i))
            counts[k] += 1
        out.append(tuple(counts))
    return out


def _within(low: float, x: float, high: float) -> bool:
    return low <= x <= high


def _split(units: float, sizing: PoolSizing) -> list[float]:
    """Split ``units`` across the targets by their largest supply; floors at min and ceilings at
    max are fixed first and the rest shared again among the others."""
    low, high = sizing.low_units, sizing.high_units
    total = sum(high)
    level = units / total if total > 0 else 0.0
    first = [h * level for h in high]
    if all(map(_within, low, first, high)):
        return first  # no share at a bound: the loop's first round, which it would end with
    share: list[float | None] = [None] * len(high)
    while True:
        free = [k for k, s in enumerate(share) if s is None]
        if not free:
            return [s or 0.0 for s in share]
        left = units - sum(s for s in share if s is not None)
        total = sum(high[k] for k in free)
        level = left / total if total > 0 else 0.0
        changed = False
        for k in free:
            if high[k] * level < low[k] or high[k] * level > high[k]:
                share[k] = low[k] if high[k] * level < low[k] else high[k]
                changed = True
        if not changed:
            for k in free:
                share[k] = high[k] * level
