"""A replay's series per tick (for charts) and its figures read from every tick: the values
:mod:`.aggregating` folds the ticks into and :mod:`.figures` reports."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ResourceSeries:
    """One resource's totals per tick over its pools: in-service replicas, pools below their
    max, constrained pools; and, only when the run was asked for them (``detail``, for charts),
    demand, served and capacity in pool units."""

    replicas: Sequence[float]
    below_max: Sequence[float]
    constrained: Sequence[float]
    demand: Sequence[float] | None
    served: Sequence[float] | None
    capacity: Sequence[float] | None


@dataclass(frozen=True, slots=True)
class Series:
    """Totals per tick (units, and in-service replicas), for charts; per resource in pool
    units. Each point is one tick (``bucket`` 1) or the mean of ``bucket`` consecutive ticks
    from its time on (the last bucket may be shorter); ``highs`` then holds each bucket's
    highest values, in the same shape."""

    times: Sequence[float]
    demand: Sequence[float]
    served: Sequence[float]
    capacity: Sequence[float]
    replicas: Sequence[float]
    resources: dict[str, ResourceSeries]
    bucket: int = 1
    highs: Series | None = None


@dataclass(frozen=True, slots=True)
class Tally:
    """A resource's figures read from every tick: the highest Σ in-service replicas of its
    pools at one tick, the ticks at which no pool of it was below its max, and the ticks at
    which any pool of it was constrained."""

    peak: float
    full_ticks: int
    constrained_ticks: int


@dataclass(frozen=True, slots=True)
class Folded:
    """A scenario's per-tick totals, folded: the highest Σ in-service replicas over all its
    pools at one tick, each resource's :class:`Tally`, and its series."""

    peak: float
    tallies: dict[str, Tally]
    series: Series
