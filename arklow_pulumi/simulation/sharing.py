"""``free-for-all``'s allocation: no fairness, each pool's capacity shared in proportion to demand.

With ``e = min(demand, limit)`` per lane and a pool's demand ``D = Σ e × cost`` over its lanes,
every lane of a pool gets the same fraction ``min(1, capacity / D)`` of its ``e`` (1 without
demand, 0 on zero capacity with demand). A lane drawing from several pools gets the smallest of
their fractions. A noisy lane thus takes a share of a short pool as large as its demand.
"""

from __future__ import annotations

from collections.abc import Sequence

from arklow_pulumi.core.allocating import pool_sums


def proportional_shares(
    wanted: Sequence[float],
    lane_pools: Sequence[Sequence[tuple[int, float]]],
    capacity: Sequence[float],
    demand: Sequence[float] | None = None,
) -> list[float]:
    """Each lane's allocation; ``lane_pools[i]`` lists ``(pool, cost)`` for lane ``i``;
    ``demand`` is :func:`~arklow_pulumi.core.allocating.pool_sums` of the same lanes' ``e``
    when the caller has it."""
    if demand is None:
        demand = pool_sums(wanted, lane_pools, len(capacity))
    fraction = [
        1.0 if d <= c else (c / d if c > 0 else 0.0) for d, c in zip(demand, capacity, strict=True)
    ]
    shares = []
    for e, pools in zip(wanted, lane_pools, strict=True):
        if e > 0:
            if len(pools) == 1:
                shares.append(e * fraction[pools[0][0]])
            else:
                shares.append(e * min([fraction[p] for p, _cost in pools], default=1.0))
        else:
            shares.append(0.0)
    return shares
