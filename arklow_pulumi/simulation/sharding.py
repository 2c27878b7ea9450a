"""Shards: a fixed partition of the simulation's batches, so they can be stepped in parallel.

Batches never share a lane, a pool or a unit run, so each can be stepped on its own clock loop
(another process included) and give the same figures. What would change with the grouping is the
series: per tick, the sum of every renewed unit's change in totals is a floating-point sum whose
order matters. So each shard keeps its own running totals, and a tick's value is the shards'
totals added in shard order. The partition depends only on the inputs (the batches and their
estimated cost), never on the machine or the worker count: the output is the same bytes however
many processes step it.

The cost estimate only balances the shards (and the workers); it never changes a result. Its
weights come from timing each batch over a slice of the benchmark's fleet (``bench/``): about
0.53 ms per lane, 1.4 ms per unit and 2.8 ms per scale target per 361 ticks (6% error).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from arklow_pulumi.simulation.stepping import Batch, UnitRun

MAX_SHARDS = 8
LANE_COST = 10
UNIT_COST = 26
TARGET_COST = 53


def batch_cost(batch: Batch) -> int:
    """Relative work of stepping a batch for one tick (integer: no rounding in the partition)."""
    units = len(batch.runs)
    targets = sum(len(r.groups) for r in batch.runs)
    return LANE_COST * batch.lanes + UNIT_COST * units + TARGET_COST * targets


@dataclass(slots=True)
class Shard:
    """Batches stepped together, in their original order, with their own running totals."""

    index: int
    batches: list[Batch] = field(default_factory=list)
    cost: int = 0

    @property
    def runs(self) -> list[UnitRun]:
        return [r for b in self.batches for r in b.runs]

    @property
    def scenarios(self) -> list[int]:
        """The scenarios (by position) that count at least one of this shard's unit runs."""
        return sorted({s for r in self.runs for s in r.scenarios})


def shard(batches: Sequence[Batch]) -> list[Shard]:
    """``min(MAX_SHARDS, len(batches))`` shards, largest batch first into the lightest shard."""
    count = min(MAX_SHARDS, len(batches))
    shards = [Shard(i) for i in range(count)]
    costs = [batch_cost(b) for b in batches]
    placed: list[list[int]] = [[] for _ in shards]
    for i in sorted(range(len(batches)), key=lambda i: (-costs[i], i)):
        lightest = min(shards, key=lambda s: (s.cost, s.index))
        lightest.cost += costs[i]
        placed[lightest.index].append(i)
    for s, members in zip(shards, placed, strict=True):
        s.batches = [batches[i] for i in sorted(members)]
    return shards


def assign(shards: Sequence[Shard], workers: int) -> list[list[Shard]]:
    """The shards each worker steps (in shard order), heaviest first to the least loaded; no
    worker without a shard."""
    loads = [0] * workers
    out: list[list[Shard]] = [[] for _ in range(workers)]
    for s in sorted(shards, key=lambda s: (-s.cost, s.index)):
        w = min(range(workers), key=lambda w: (loads[w], w))
        loads[w] += s.cost
        out[w].append(s)
    return [sorted(group, key=lambda s: s.index) for group in out if group]
