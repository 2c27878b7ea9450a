"""Scale decisions: how many replicas each scale target of a pool should run.

Single tick: ``needed = demand × (1 + headroom)`` units; the pool's static capacity already covers
part of it, so the targets must supply ``max(0, needed - static capacity)``. Those units are split
across the pool's targets in proportion to each target's largest supply
(``max_replicas × units_per_replica``), each share turned into whole replicas (rounded down,
then rounded up by largest remainder only until the units are covered, so two equal targets
needing 5 replicas get 3 + 2, not 3 + 3) within the target's ``[min_replicas, max_replicas]``.
A pool without demand (no members, or idle) settles every target to its minimum.

Over time the controller smooths this decision with the scale policy
(:mod:`arklow_pulumi.core.policy`, applied by :mod:`arklow_pulumi.core.deciding`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from arklow_pulumi.core.policy import clamp
from arklow_pulumi.core.topology import ScaleTarget

_EPS = 1e-9


def replicas_for(units: float, units_per_replica: float) -> int:
    """The replicas needed to supply ``units``, tolerant of float noise (10 × 1.1 → 11, not 12)."""
    x = units / units_per_replica
    return max(0, math.ceil(x - _EPS * max(1.0, abs(x))))


def target_units(demand: float, headroom: float, static_capacity: float = 0.0) -> float:
    """Units the scale targets must supply: what ``demand`` plus headroom needs beyond the
    pool's static capacity."""
    needed = demand * (1.0 + headroom)
    rest = needed - static_capacity
    return rest if rest > _EPS * needed else 0.0  # float noise of a full cover is no shortfall


def desired_replicas(
    demand: float,
    headroom: float,
    targets: Sequence[ScaleTarget],
    static_capacity: float = 0.0,
) -> tuple[int, ...]:
    """The single-tick decision for each target of a pool, each within its [min, max]."""
    if not targets:
        return ()
    units = target_units(demand, headroom, static_capacity)
    if len(targets) == 1:
        return (_one_target(units, targets[0]),)
    return _several_targets(units, targets)


# A pool as :func:`desired_for_pools` reads it, made once per topology by :func:`scale_plan`:
# ``1 + headroom``, static capacity, the targets, and for a pool's only target its units per
# replica, min, max, and min and max × units per replica (else None).
ScalePlan = tuple[
    float, float, tuple[ScaleTarget, ...], tuple[float, int, int, float, float] | None
]


def scale_plan(
    headroom: float, targets: Sequence[ScaleTarget], static_capacity: float
) -> ScalePlan:
    one = None
    if len(targets) == 1:
        t = targets[0]
        upr, lo, hi = t.units_per_replica, t.min_replicas, t.max_replicas
        one = (upr, lo, hi, lo * upr, hi * upr)
    return 1.0 + headroom, static_capacity, tuple(targets), one


def desired_for_pools(
    demands: Sequence[float], plans: Sequence[ScalePlan]
) -> list[tuple[int, ...]]:
    """``desired_replicas(demand, headroom, targets, static_capacity)`` of each pool (a tick
    decides 1,000 pools and more): the same floating-point operations in the same order, so the
    counts are the same, with a pool's only target worked out here, :func:`target_units` and
    :func:`_one_target` step for step, without most of their calls (``max(1.0, x)`` spelt
    ``x if x > 1.0 else 1.0``: the same choice, NaN included)."""
    out: list[tuple[int, ...]] = []
    add = out.append
    floor = math.floor
    for demand, (grow, static, targets, one) in zip(demands, plans, strict=True):
        if one is None:
            add(_several_targets(_units(demand, grow, static), targets) if targets else ())
            continue
        needed = demand * grow
        rest = needed - static
        units = rest if rest > _EPS * needed else 0.0
        upr, lo, hi, low, high = one
        level = units / high if high > 0 else 0.0
        share = high * level
        if share < low:
            share = low
        elif share > high:
            share = high
        x = (share or 0.0) / upr
        size = abs(x)
        count = floor(x + _EPS * (size if size > 1.0 else 1.0))
        if count < 0:  # max(0, count)
            count = 0
        count = clamp(count, lo, hi)
        tolerance = _EPS * (units if units > 1.0 else 1.0)
        while count < hi and units - count * upr > tolerance:
            count += 1
        add((count,))
    return out


def _units(demand: float, grow: float, static_capacity: float) -> float:
    """:func:`target_units` with ``1 + headroom`` made once."""
    needed = demand * grow
    rest = needed - static_capacity
    return rest if rest > _EPS * needed else 0.0


def _several_targets(units: float, targets: Sequence[ScaleTarget]) -> tuple[int, ...]:
    exact = [
        share / t.units_per_replica
        for share, t in zip(_split(units, targets), targets, strict=True)
    ]
    counts = [
        clamp(_floor(x), t.min_replicas, t.max_replicas)
        for x, t in zip(exact, targets, strict=True)
    ]

    # Round up one replica at a time, largest remainder first, only until the units are covered:
    # the targets together run ceil(units / units_per_replica), not one extra per target.
    def short() -> bool:
        supplied = sum(c * t.units_per_replica for c, t in zip(counts, targets, strict=True))
        return units - supplied > _EPS * max(1.0, units)

    while short():
        room = [k for k, t in enumerate(targets) if counts[k] < t.max_replicas]
        if not room:
            break
        k = max(room, key=lambda i: (exact[i] - counts[i], -i))
        counts[k] += 1
    return tuple(counts)


def _one_target(units: float, t: ScaleTarget) -> int:
    """:func:`desired_replicas` for a pool's only target: the same steps as the general case
    (``_split`` over one target, then rounding up while short), operation for operation, so the
    result is the same to the bit; without the lists and closures."""
    upr, lo, hi = t.units_per_replica, t.min_replicas, t.max_replicas
    low, high = lo * upr, hi * upr
    level = units / high if high > 0 else 0.0
    share = high * level
    if share < low:
        share = low
    elif share > high:
        share = high
    count = clamp(_floor((share or 0.0) / upr), lo, hi)
    tolerance = _EPS * max(1.0, units)
    while count < hi and units - count * upr > tolerance:
        count += 1
    return count


def _floor(x: float) -> int:
    """``floor`` tolerant of float noise (2.9999999999 → 3)."""
    return max(0, math.floor(x + _EPS * max(1.0, abs(x))))


def _split(units: float, targets: Sequence[ScaleTarget]) -> list[float]:
    """Split ``units`` across targets by their largest supply; floors at min and ceilings at max
    are fixed first and the rest shared again among the others."""
    low = [t.min_replicas * t.units_per_replica for t in targets]
    high = [t.max_replicas * t.units_per_replica for t in targets]
    share: list[float | None] = [None] * len(targets)
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
