"""A unit's figures as flat columns: where its per-tick totals stand in its shard's series
(:data:`TOTALS`, :data:`COUNTS`, :data:`UNITS`), its figures summed over ticks (:class:`Sums`),
and the lanes' columns of a decision (:func:`lane_columns`, :func:`picker`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from operator import itemgetter

from arklow_pulumi.core.allocating import Allocation, LaneResults

# Per-tick totals of a unit, in the columns of :mod:`.simulating`'s series: Σ e, Σ allocation,
# Σ capacity, in-service replicas; then per resource of the unit (in its order of first pool):
# in-service replicas, pools below their max, constrained pools; and, with ``detail`` (charts),
# demand, served and capacity in pool units (Σ e × cost, Σ allocation × cost, Σ capacity).
TOTALS = 4
COUNTS = 3
UNITS = 3
TOTAL_COLUMNS = list(range(TOTALS))  # the four's columns: every shard's first


class _Part:
    """One part of a :class:`Sums` flat list (``lanes`` in 3 parts, ``pools`` in 4), read-only."""

    def __init__(self, name: str, parts: int, part: int) -> None:
        self.name, self.parts, self.part = name, parts, part

    def __get__(self, sums: Sums, owner: type[Sums]) -> list[float]:
        values: list[float] = getattr(sums, self.name)
        n = len(values) // self.parts
        return values[self.part * n : (self.part + 1) * n]


class _Count(_Part):
    """A part of ``pools`` that counts ticks."""

    def __get__(self, sums: Sums, owner: type[Sums]) -> list[int]:  # type: ignore[override]
        return [int(x) for x in super().__get__(sums, owner)]


@dataclass(slots=True)
class Sums:
    """A unit's figures summed over ticks (in ticks, turned into hours by the caller), kept as
    two flat lists so that a flush is two operations: ``lanes`` holds each lane's ``e``, then
    its allocation, then its admission; ``pools`` each pool's capacity, in-service replicas,
    ticks at max and ticks constrained. Also each pool's highest in-service count, the scale
    actions and, per (pool position, reason), the (tick, target) pairs decided for it."""

    lanes: list[float]
    pools: list[float]
    peak: list[int]
    actions: int = 0
    reasons: dict[tuple[int, str], int] = field(default_factory=dict)

    e = _Part("lanes", 3, 0)
    alloc = _Part("lanes", 3, 1)
    admit = _Part("lanes", 3, 2)
    capacity = _Part("pools", 4, 0)
    replicas = _Part("pools", 4, 1)
    at_max = _Count("pools", 4, 2)
    constrained = _Count("pools", 4, 3)

    @classmethod
    def zero(cls, lanes: int, pools: int) -> Sums:
        return cls([0.0] * (3 * lanes), [0.0] * (4 * pools), [0] * pools)

    def copy(self) -> Sums:
        return replace(
            self,
            lanes=list(self.lanes),
            pools=list(self.pools),
            peak=list(self.peak),
            reasons=dict(self.reasons),
        )


def picker(positions: Sequence[int]) -> Callable[[Sequence[float]], Sequence[float]]:
    """What picks the values at ``positions`` out of a column, in C."""
    if not positions:
        return lambda column: ()
    if len(positions) == 1:
        at = positions[0]
        return lambda column: (column[at],)
    return itemgetter(*positions)


LaneColumns = tuple[Sequence[float], Sequence[float], Sequence[float]]


def lane_columns(allocation: Allocation) -> LaneColumns:
    """Every lane's ``e`` (the kernel's ``min(demand, limit)``), allocation and admission, in
    the decision's lane order (the columns the results keep: read them, never change them)."""
    lanes = allocation.lanes
    if not isinstance(lanes, LaneResults):  # ``decide`` always makes LaneResults
        raise TypeError("the simulator reads decisions made by decide()")
    _keys, _demand, alloc, _held, admit = lanes.columns()
    return lanes.caps(), alloc, admit
