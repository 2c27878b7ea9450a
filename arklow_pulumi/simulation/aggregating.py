"""A replay's per-tick totals folded as the clock makes them, so that its memory depends on the
topology and not on the number of ticks.

The clock (:func:`.simulating.clock`) keeps each shard's running totals tick by tick for one
*chunk* of ticks at a time (:func:`chunk_ticks`) and hands the chunk here (from a worker process
through its pipe, :func:`.forking.stream_forked`); the chunk is then dropped. Per scenario, a
tick's values are the shards' totals added in shard order, column by column, the same additions
in the same order as when every tick was kept to the end, so every figure read from them is the
same bytes. :class:`Folding` keeps, per scenario:

- read from every tick, exactly: the highest Σ in-service replicas over all its pools at one
  tick (what-if's ``totals``), and per resource the highest Σ in-service replicas of its pools,
  the ticks at which none of them was below its max and the ticks at which any was constrained
  (:class:`Tally`);
- the series (:class:`.series.Series`, which the chart draws) in at most :data:`CHART_POINTS`
  points per column: a run of that many ticks or fewer keeps every tick; a longer one is cut
  into buckets of ``⌈ticks / CHART_POINTS⌉`` consecutive ticks (the last one may be shorter),
  each point the bucket's mean at the time of its first tick, the bucket's highest value beside
  it (``Series.highs``).

A bucket may span chunks: its sum goes on from the previous chunk's (left to right, as ``sum``
adds), so the points do not depend on where the chunks end.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Collection, Mapping, Sequence
from operator import add
from typing import TYPE_CHECKING

from arklow_pulumi.simulation.columns import COUNTS, TOTALS, UNITS
from arklow_pulumi.simulation.series import Folded, ResourceSeries, Series, Tally
from arklow_pulumi.simulation.sharding import Shard

if TYPE_CHECKING:  # array is subscriptable at runtime only from Python 3.12
    ShardSeries = dict[int, array[float]]  # per scenario (by position): its totals, tick by tick

# Points per series column: every tick of a week at 60 s ticks (10,081) would not fit, every tick
# of the example traces at 30 s (5,761) does; a chart 990 pixels wide draws fewer.
CHART_POINTS = 8192
# Buckets up to this many ticks are folded column-wise (fewer Python steps than one per bucket).
STRIDED = 10
# Ticks per chunk: about 4,096 × the shards' columns × 8 bytes each, whatever the run's length.
CHUNK_TICKS = 4096


def bucket_ticks(ticks: int) -> int:
    """Consecutive ticks per point of a run of ``ticks`` ticks: 1 up to :data:`CHART_POINTS`."""
    return max(1, math.ceil(ticks / CHART_POINTS))


def chunk_ticks(ticks: int) -> int:
    """Ticks per chunk of a run of ``ticks`` ticks: :data:`CHUNK_TICKS` (or all of them)."""
    return max(1, min(ticks, CHUNK_TICKS))


def bucketed(column: Sequence[float], bucket: int) -> tuple[list[float], list[float]]:
    """Each bucket's mean and highest value: ``column`` cut into runs of ``bucket`` values (the
    last may be shorter). A sum is added from the bucket's first value on, as ``sum`` adds, and
    the highest is the first of the highest, as ``max`` picks."""
    full = len(column) // bucket * bucket
    if bucket <= STRIDED:  # add and compare the buckets' i-th values, all buckets at once
        sums = highs = list(column[0:full:bucket])
        for i in range(1, bucket):
            values = column[i:full:bucket]
            sums = list(map(add, sums, values))
            highs = [x if x >= y else y for x, y in zip(highs, values, strict=True)]
    else:  # one slice a bucket
        parts = [column[j : j + bucket] for j in range(0, full, bucket)]
        sums = list(map(sum, parts))
        highs = list(map(max, parts))
    means = [x / bucket for x in sums]
    if full < len(column):
        rest = column[full:]
        means.append(sum(rest) / len(rest))
        highs.append(max(rest))
    return means, highs


class Folding:
    """One scenario's per-tick totals, taken a chunk at a time (:meth:`add`)."""

    def __init__(
        self,
        scenario: int,
        shards: Sequence[Shard],
        used: Collection[str],
        *,
        tick: float,
        bucket: int,
        detail: bool,
    ) -> None:
        self.scenario, self.tick, self.bucket, self.detail = scenario, tick, bucket, detail
        self.width = COUNTS + (UNITS if detail else 0)
        self.used = list(used)
        # per shard counting this scenario: its index, its columns per tick, and the first
        # column of each of its resources this scenario uses
        self.parts: list[tuple[int, int, list[tuple[int, str]]]] = []
        for sh in shards:
            if scenario in sh.scenarios:
                first = {name: TOTALS + self.width * i for i, name in enumerate(sh.resources)}
                blocks = [(c, name) for name, c in first.items() if name in used]
                self.parts.append((sh.index, sh.width, blocks))
        self.seen = 0  # ticks folded so far
        self.peak = 0.0
        self.peaks = dict.fromkeys(self.used, 0.0)
        self.full = dict.fromkeys(self.used, 0)
        self.constrained = dict.fromkeys(self.used, 0)
        columns = TOTALS + self.width * len(self.used)
        self.times: array[float] = array("d")
        self.points: list[array[float]] = [array("d") for _ in range(columns)]
        self.highs: list[array[float]] = [array("d") for _ in range(columns if bucket > 1 else 0)]
        # a bucket begun in a chunk and not ended there: per column its sum and highest so far
        self.opened: list[tuple[float, float]] = []
        self.open_ticks = 0

    def add(self, ticks: int, chunk: Mapping[int, ShardSeries]) -> None:
        """The next ``ticks`` ticks: each shard's series over them (by shard index)."""
        columns = self._columns(ticks, chunk)
        replicas = columns[TOTALS - 1]
        top = max(replicas)
        if top > self.peak:
            self.peak = top
        for i, name in enumerate(self.used):
            first = TOTALS + self.width * i
            in_service, below_max, constrained = columns[first : first + COUNTS]
            top = max(in_service)
            if top > self.peaks[name]:
                self.peaks[name] = top
            # whole counts (sums of 0s and 1s, exact): none below max, or any constrained
            self.full[name] += below_max.count(0.0)
            self.constrained[name] += ticks - constrained.count(0.0)
        self._points(ticks, columns)
        self.seen += ticks

    def _columns(self, ticks: int, chunk: Mapping[int, ShardSeries]) -> list[list[float]]:
        """The chunk's four totals, then each used resource's columns, tick by tick: the
        shards' values added in shard order."""
        totals: list[list[float]] = [[0.0] * ticks for _ in range(TOTALS)]
        width = self.width
        by_resource = {name: [[0.0] * ticks for _ in range(width)] for name in self.used}
        for index, step, blocks in self.parts:
            part = chunk[index].get(self.scenario)
            if part is None:
                continue
            for c in range(TOTALS):
                totals[c] = list(map(add, totals[c], part[c::step]))
            for first, name in blocks:
                cols = by_resource[name]
                for c in range(width):
                    cols[c] = list(map(add, cols[c], part[first + c :: step]))
        return totals + [col for name in self.used for col in by_resource[name]]

    def _points(self, ticks: int, columns: Sequence[list[float]]) -> None:
        start, tick, bucket = self.seen, self.tick, self.bucket
        if bucket == 1:
            self.times.extend([k * tick for k in range(start, start + ticks)])
            for point, column in zip(self.points, columns, strict=True):
                point.extend(column)
            return
        # the ticks that end the bucket the last chunk left open, the whole buckets, the rest
        lead = min(-start % bucket, ticks)
        full = (ticks - lead) // bucket * bucket
        if lead:
            self.opened = [
                (sum(column[:lead], total), max(high, max(column[:lead])))
                for (total, high), column in zip(self.opened, columns, strict=True)
            ]
            self.open_ticks += lead
            if self.open_ticks == bucket:
                self._close()
        self.times.extend([(start + j) * tick for j in range(lead, ticks, bucket)])
        for point, high, column in zip(self.points, self.highs, columns, strict=True):
            means, highest = bucketed(column[lead : lead + full], bucket)
            point.extend(means)
            high.extend(highest)
        if lead + full < ticks:  # a bucket the next chunk goes on with
            rest = [column[lead + full :] for column in columns]
            self.opened = [(sum(part), max(part)) for part in rest]
            self.open_ticks = ticks - lead - full

    def _close(self) -> None:
        """The open bucket's point: its mean and its highest."""
        for point, high, (total, highest) in zip(self.points, self.highs, self.opened, strict=True):
            point.append(total / self.open_ticks)
            high.append(highest)
        self.opened, self.open_ticks = [], 0

    def folded(self) -> Folded:
        if self.open_ticks:
            self._close()
        tallies = {
            name: Tally(self.peaks[name], self.full[name], self.constrained[name])
            for name in self.used
        }
        highs = _series(self.times, self.highs, self.used, self.width) if self.highs else None
        series = _series(self.times, self.points, self.used, self.width, self.bucket, highs)
        return Folded(self.peak, tallies, series)


def _series(
    times: Sequence[float],
    columns: Sequence[Sequence[float]],
    used: Sequence[str],
    width: int,
    bucket: int = 1,
    highs: Series | None = None,
) -> Series:
    demand, served, capacity, replicas = columns[:TOTALS]
    resources = {}
    for i, name in enumerate(used):
        cols = columns[TOTALS + width * i : TOTALS + width * (i + 1)]
        units = cols[COUNTS:] if width > COUNTS else (None, None, None)
        resources[name] = ResourceSeries(*cols[:COUNTS], *units)
    return Series(times, demand, served, capacity, replicas, resources, bucket, highs)
