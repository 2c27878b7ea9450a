"""Scale decisions: how many replicas each scale target of a pool should run.

Single tick: ``needed = demand × (1 + headroom)`` units; the pool's static capacity already covers
part of it, so the targets must supply ``max(0, needed - static capacity)``. Those units are split
across the pool's targets in proportion to each target's largest supply
(``max_replicas × units_per_replica``), each share turned into whole replicas (rounded down,
then rounded up by largest remainder only until the units are covered, so two equal targets
needing 5 replicas get 3 + 2, not 3 + 3) within the target's ``[min_replicas, max_replicas]``.
A pool without demand (no members, or idle) settles every target to its minimum.

The rule runs in the Rust kernel (``kernel/src/sizing.rs``, ``core._kernel.Sizings``) beside
the filling: a tick decides 1,000 pools and more, and in Python the rule alone cost a
10,000-lane allocation a fifth of its time. The Python oracle it is held to lives in the tests.

Over time the controller smooths this decision with the scale policy
(:mod:`arklow_pulumi.core.policy`, applied by :mod:`arklow_pulumi.core.deciding`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from arklow_pulumi.core._kernel import Sizings
from arklow_pulumi.core.topology import ScaleTarget


def desired_replicas(
    demand: float,
    headroom: float,
    targets: Sequence[ScaleTarget],
    static_capacity: float = 0.0,
) -> tuple[int, ...]:
    """The single-tick decision for each target of a pool, each within its [min, max]."""
    return pool_sizings([(headroom, targets, static_capacity)]).desired([demand])[0]


# Every pool of a topology as the single-tick decision reads it, made once per topology (the
# kernel copies and checks the figures once).
PoolSizings = Sizings


def pool_sizings(pools: Iterable[tuple[float, Sequence[ScaleTarget], float]]) -> PoolSizings:
    """The sizings of ``(headroom, targets, static capacity)`` pools, in order."""
    return Sizings(
        [
            (
                1.0 + headroom,
                static_capacity,
                [(t.units_per_replica, t.min_replicas, t.max_replicas) for t in targets],
            )
            for headroom, targets, static_capacity in pools
        ]
    )


def desired_for_pools(demands: Sequence[float], sizings: PoolSizings) -> list[tuple[int, ...]]:
    """Each pool's single-tick decision for its demand (a tick decides 1,000 pools and more)."""
    return sizings.desired(demands)
