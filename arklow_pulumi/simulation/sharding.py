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

Batches can be *tied*: a run that starts mid-replay (what-if's ``--change-at``) takes over the
state of groups stepped by other batches, so a tied set of batches goes into one shard whole.

A shard's series has the four totals and, per resource its runs draw from, the runs' columns of
it (:data:`~.columns.COUNTS`, and :data:`~.columns.UNITS` with ``detail``; :meth:`Shard.lay_out`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from arklow_pulumi.simulation.batching import Batch
from arklow_pulumi.simulation.columns import TOTALS
from arklow_pulumi.simulation.stepping import UnitRun

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
    resources: list[str] = field(default_factory=list)  # whose columns its series holds
    per_resource: int = 0  # columns per resource

    @property
    def width(self) -> int:
        """Columns per tick of its series."""
        return TOTALS + self.per_resource * len(self.resources)

    def lay_out(self, order: dict[str, int], per_resource: int) -> None:
        """Its resources (ordered by ``order``, every resource's place among all) and each of
        its runs' columns (``per_resource`` for each of its resources)."""
        self.resources = sorted(
            {r for run in self.runs for r in run.resource_names}, key=order.__getitem__
        )
        self.per_resource = per_resource
        first = {name: TOTALS + per_resource * i for i, name in enumerate(self.resources)}
        for run in self.runs:
            run.place(first)

    @property
    def runs(self) -> list[UnitRun]:
        return [r for b in self.batches for r in b.runs]

    @property
    def scenarios(self) -> list[int]:
        """The scenarios (by position) that count at least one of this shard's unit runs."""
        return sorted({s for r in self.runs for s in r.scenarios})


def shard(batches: Sequence[Batch], ties: Sequence[tuple[int, int]] = ()) -> list[Shard]:
    """At most ``MAX_SHARDS`` shards, one per set of tied batches at most (``ties``: pairs of
    positions in ``batches``); the largest set first into the lightest shard."""
    sets = _tied(len(batches), ties)
    count = min(MAX_SHARDS, len(sets))
    shards = [Shard(i) for i in range(count)]
    costs = [sum(batch_cost(batches[i]) for i in members) for members in sets]
    placed: list[list[int]] = [[] for _ in shards]
    for k in sorted(range(len(sets)), key=lambda k: (-costs[k], sets[k][0])):
        lightest = min(shards, key=lambda s: (s.cost, s.index))
        lightest.cost += costs[k]
        placed[lightest.index] += sets[k]
    for s, members in zip(shards, placed, strict=True):
        s.batches = [batches[i] for i in sorted(members)]
    return shards


def _tied(count: int, ties: Sequence[tuple[int, int]]) -> list[list[int]]:
    """The positions ``0 … count - 1`` in sets joined by ``ties``, each set in order, the sets
    in order of their first position."""
    parent = list(range(count))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in ties:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    sets: dict[int, list[int]] = {}
    for i in range(count):
        sets.setdefault(root(i), []).append(i)
    return list(sets.values())


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
