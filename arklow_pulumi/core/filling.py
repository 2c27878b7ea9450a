"""Weighted progressive filling over many coupled pools, in the Rust kernel
(``arklow_pulumi.core._kernel``).

Every unfrozen lane ``i`` sits at ``weight[i] * t`` for one global level ``t`` that rises from 0.
A lane freezes when it reaches its cap (event at ``t = cap / weight``) or when a pool it draws from
saturates (``Σ allocation × cost = capacity``). The allocation found is the unique weighted
max-min fair one.

Instead of re-scanning every pool after each freeze, each pool keeps two running sums: ``fixed``
(units used by its frozen lanes) and ``slope`` (units added per unit of ``t`` by its unfrozen
lanes). Its saturation level is ``(capacity - fixed) / slope``. Freezing a lane at a level no later
than a pool's saturation level can only *raise* that level, so the pool heap is kept lazily: a
popped entry is re-checked against the pool's current level and pushed back if it was stale.
Lane events come from one sort. Each lane freezes once, each pool saturates once: O((L + I) log P).

Numerical care: ``slope`` falls as lanes freeze, by ``weight × cost`` each, and weights and costs
span 1e-6..1e6, so one subtraction can cancel all but the rounding error of a sum twelve orders of
magnitude larger (a pool called saturated, or never, with a lane given a million times its
capacity). A pool therefore re-sums its slope exactly over its unfrozen members (compacting its
list of them) whenever the running value falls under 1/16 of its last exact sum: every
subtraction since then was rounded to half an ulp of that sum, so the running slope keeps a
relative error of at most ``k × 2⁻⁴⁹`` after ``k`` of them, whatever the spread. Each re-sum
walks only the members still unfrozen at the last one, so in the common case (comparable
weights) the re-sums add up to about one more pass over the pool; a pool whose members' products
spread over 24 orders of magnitude re-sums at most a few dozen times.

The kernel (``kernel/`` in the repository, a required dependency built from source by maturin) is
the one implementation; the Python oracle it is tested against bit for bit lives in the tests
(``tests/reference_filling.py``), beside the exact-fractions reference. It copies and checks every
input (types, lengths, pool indices, numbers in range, weights and costs > 0; a cap or a limit
may be +inf, no limit) and raises ``ValueError``/``TypeError`` on anything else.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arklow_pulumi.core._kernel import Network

__all__ = ["Filling", "LanePools", "Network", "network", "progressive_fill"]

LanePools = Sequence[Sequence[tuple[int, float]]]


@dataclass(frozen=True, slots=True)
class Filling:
    allocation: list[float]
    saturated: list[bool]
    used: list[float]


def network(
    weights: Sequence[float], limits: Sequence[float], lane_pools: LanePools, pools: int
) -> Network:
    """The kernel's copy of a topology's lanes: ``lane_pools[i]`` lists ``(pool, cost)`` for
    lane ``i``; made once per topology."""
    return Network(weights, limits, lane_pools, pools)


def progressive_fill(net: Network, caps: Sequence[float], capacity: Sequence[float]) -> Filling:
    """Fill lanes by weight up to ``caps`` within pool ``capacity`` (pool usage = Σ alloc × cost):
    each lane's allocation, which pools saturated, and each pool's final usage."""
    filled = net.fill(caps, capacity)
    return Filling(filled.allocation, filled.saturated, filled.used)
