"""``free-for-all``'s allocation: no fairness, each pool's capacity shared in proportion to demand.

With ``e = min(demand, limit)`` per lane and a pool's demand ``D = Σ e × cost`` over its lanes,
every lane of a pool gets the same fraction ``min(1, capacity / D)`` of its ``e`` (1 without
demand, 0 on zero capacity with demand). A lane drawing from several pools gets the smallest of
their fractions. A noisy lane thus takes a share of a short pool as large as its demand.
"""

from __future__ import annotations

from collections.abc import Sequence


def proportional_shares(
    wanted: Sequence[float],
    lane_pools: Sequence[Sequence[tuple[int, float]]],
    capacity: Sequence[float],
) -> list[float]:
    """Each lane's allocation; ``lane_pools[i]`` lists ``(pool, cost)`` for lane ``i``."""
    demand = [0.0] * len(capacity)
    for e, pools in zip(wanted, lane_pools, strict=True):
        if e > 0:
            for p, cost in pools:
                demand[p] += e * cost
    fraction = [
        1.0 if d <= c else (c / d if c > 0 else 0.0) for d, c in zip(demand, capacity, strict=True)
    ]
    return [
        e * min((fraction[p] for p, _cost in pools), default=1.0) if e > 0 else 0.0
        for e, pools in zip(wanted, lane_pools, strict=True)
    ]
