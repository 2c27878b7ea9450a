"""The clock loop: a trace replayed tick by tick against simulated supply, decided by ``decide``.

Each tick at ``t = k × tick``: the trace's rows up to ``t`` set each lane's demand; each
simulated group brings launches whose delay has passed into service; ``decide`` (the
controller's) gives the allocation (capacity = static + in-service supply), the admission and
each target's desired count under its pool's scale policy; the tick's figures are counted; the
recommendation joins the target's history and the group is resized to the desired count
(launches become pending, see :mod:`.supplying`).

Figures per tick, counted in ticks and turned into hours at the end: each lane's
``e = min(demand, limit)``, allocation (served; held = e − allocation) and admission, each
pool's capacity, in-service replicas, whether it is constrained and whether its targets all run
their max; a scale action whenever a target's desired count differs from the previous tick's
(the first tick compares with the starting replicas).

The work is split by :mod:`.units` and stepped by :mod:`.stepping` and :mod:`.batching`: a unit
whose inputs did not change keeps its decision, and units of one topology are decided together
when many changed. The batches are partitioned into shards (:mod:`.sharding`), each with its own
running totals per tick, stepped in this process or by forked workers (:mod:`.forking`); a
tick's series value is the shards' totals added in shard order, so the output is the same bytes
for any worker count. The totals are kept a chunk of ticks at a time and folded as they come
(:mod:`.aggregating`: the figures read from every tick, and the chart's series in a bounded
number of points), so a replay's memory does not grow with its ticks.

A scenario may switch topology mid-replay (:class:`Scenario` ``then`` and ``at``, what-if's
``--change-at``): its units the switch leaves as they are go on counting; the others stop
counting at the switch, and the new topology's units start then, each target taking over the
state of the group of the same name (:meth:`.stepping.UnitRun.activate`).
"""

from __future__ import annotations

import math
import threading
from array import array
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from arklow_pulumi.core.topology import Topology
from arklow_pulumi.simulation.aggregating import CHUNK_TICKS, Folding, bucket_ticks, chunk_ticks
from arklow_pulumi.simulation.batching import Batch, batches
from arklow_pulumi.simulation.budgeting import Needs, needs, refuse_over
from arklow_pulumi.simulation.columns import COUNTS, UNITS, Sums
from arklow_pulumi.simulation.figures import LaneFigures, PoolFigures, RunResult, result
from arklow_pulumi.simulation.forking import Emit, fork_available, stream_forked, usable_cores
from arklow_pulumi.simulation.policies import FAIR
from arklow_pulumi.simulation.series import Series
from arklow_pulumi.simulation.sharding import Shard, assign, shard
from arklow_pulumi.simulation.stepping import Carry, UnitRun
from arklow_pulumi.simulation.tracing import MAX_TICKS, Trace, changes, check_replay
from arklow_pulumi.simulation.units import split

__all__ = [
    "LaneFigures",
    "PoolFigures",
    "RunResult",
    "Scenario",
    "Series",
    "run",
    "switch_tick",
]

BATCH_LANES = 256
# Estimated work (shard cost × ticks, :mod:`.sharding`; about 0.15 µs of stepping per unit)
# below which the shards are stepped in this process. Forking two workers and collecting their
# results costs 10-15 ms here (2 cores); the four policies on examples/traces/gpu_day (0.9 million,
# 0.18 s in-process) took 0.13 s with two workers. So a tenth of a second of work pays for it.
PARALLEL_MIN = 700_000

if TYPE_CHECKING:
    from arklow_pulumi.simulation.aggregating import ShardSeries

    # what a worker sends back per shard, once its chunks are sent: per unit run (in
    # ``Shard.runs`` order) its figures and the figures kept for scenarios it stopped counting for
    Stepped = list[list[tuple[Sums, dict[int, Sums]]]]
    # where the clock hands each chunk: its ticks, and each shard's series over them (by index)
    Sink = Callable[[int, dict[int, ShardSeries]], None]


@dataclass(frozen=True, slots=True)
class Scenario:
    """A topology replayed under a rule (:mod:`.policies`); with ``then``, that topology from
    the first tick at or after ``at`` seconds on (:func:`switch_tick`)."""

    topology: Topology
    rule: str = FAIR
    then: Topology | None = None
    at: float = 0.0


class Recorder(Protocol):
    """Sees every tick of an in-process run (``arklow simulate --ticks-csv``)."""

    def place(self, names: Sequence[str], members: Mapping[str, Sequence[UnitRun]]) -> None: ...

    def renewed(self, run: UnitRun) -> None: ...

    def tick(self, k: int, now: float) -> None: ...


def switch_tick(at: float, tick: float) -> int:
    """The first tick at or after ``at`` seconds (with the trace's tolerance for float noise)."""
    return max(0, math.ceil(at / tick - 1e-9))


def run(
    scenarios: Mapping[str, Scenario | tuple[Topology, str]],
    trace: Trace,
    tick: float,
    launch_delay: float,
    *,
    jobs: int | None = None,
    parallel_min: int = PARALLEL_MIN,
    max_ticks: int = MAX_TICKS,
    admission: bool = True,
    recorder: Recorder | None = None,
    detail: bool = False,
    max_memory: int | None = None,
) -> dict[str, RunResult]:
    """Simulate each named scenario (a topology and its rule, or a :class:`Scenario`) over the
    trace, at once.

    Units found identical in several scenarios are stepped once and counted in each. The shards
    (:mod:`.sharding`) are stepped by up to ``jobs`` worker processes (default: the usable
    cores), in this process when the estimated work is below ``parallel_min`` or a ``recorder``
    sees every tick; the results are the same bytes for any worker count. A run over
    ``max_ticks`` ticks is refused before anything is built (:func:`~.tracing.check_replay`).
    ``admission=False`` skips the admission fillings (each lane's admission is then its
    allocation). ``detail`` keeps each resource's served pool units per tick in the series (for
    charts: it costs a sum over the lanes at every renewal). A run whose estimated memory
    (:mod:`.budgeting`) is over ``max_memory`` bytes is refused before it starts.
    """
    check_replay(trace, tick, max_ticks)
    ticks = trace.tick_count(tick)
    plan = _Plan(tick, launch_delay, admission, detail)
    names = list(scenarios)
    for s, name in enumerate(names):
        given = scenarios[name]
        plan.add(s, name, given if isinstance(given, Scenario) else Scenario(*given), tick)
    shards = shard(plan.groups, plan.ties)
    order = {name: i for i, name in enumerate(plan.resources)}
    for sh in shards:
        sh.lay_out(order, COUNTS + (UNITS if detail else 0))
    bucket = bucket_ticks(ticks)
    if max_memory is not None:
        refuse_over(max_memory, _needs(plan, shards, ticks, bucket, len(trace.times), recorder))
    if recorder is not None:
        recorder.place(names, {name: [r for r, _cut in plan.members[name]] for name in names})
    folds = [
        Folding(s, shards, plan.used[name], tick=tick, bucket=bucket, detail=detail)
        for s, name in enumerate(names)
    ]

    def fold(count: int, chunk: dict[int, ShardSeries]) -> None:
        for folding in folds:
            folding.add(count, chunk)

    chunk = chunk_ticks(ticks)
    workers = worker_count(jobs, len(shards), ticks * sum(s.cost for s in shards), parallel_min)
    if workers == 1 or recorder is not None:
        clock(shards, trace, tick, plan.endings, recorder, fold, chunk)
    else:
        parts = assign(shards, workers)

        def step(w: int, emit: Emit) -> Stepped:
            return _stepped(parts[w], trace, tick, plan.endings, emit, chunk)

        payloads = stream_forked(step, len(parts), _merged(fold))
        for part, payload in zip(parts, payloads, strict=True):
            _taken(part, payload)
    hours = tick / 3600.0
    return {
        name: result(plan.members[name], s, hours, tick, folds[s].folded())
        for s, name in enumerate(names)
    }


def _needs(
    plan: _Plan,
    shards: Sequence[Shard],
    ticks: int,
    bucket: int,
    rows: int,
    recorder: Recorder | None,
) -> Needs:
    """The run's estimated memory: its unit runs, series and outputs (:mod:`.budgeting`)."""
    recorded = 0
    if recorder is not None:  # a row a tick per pool, target and lane of every scenario
        members = [r.unit for entries in plan.members.values() for r, _cut in entries]
        recorded = sum(len(u.pool_names) + len(u.targets) + len(u.lane_keys) for u in members)
    return needs(
        [r for sh in shards for r in sh.runs],
        shards,
        [len(used) for used in plan.used.values()],
        ticks=ticks,
        rows=rows,
        bucket=bucket,
        detail=bool(plan.options["detail"]),
        recorded_rows=recorded,
    )


def _merged(fold: Sink) -> Callable[[list[Any]], None]:
    """What takes a round of the workers' chunks (each its ticks and its shards' series) and
    folds them as one."""

    def consume(parts: list[Any]) -> None:
        counts = {count for count, _chunk in parts}
        if len(counts) != 1:
            raise RuntimeError(f"the simulation workers sent chunks of {sorted(counts)} ticks")
        merged: dict[int, ShardSeries] = {}
        for _count, chunk in parts:
            merged.update(chunk)
        fold(counts.pop(), merged)

    return consume


class _Plan:
    """The unit runs of every scenario, their batches, and the switches' bookkeeping."""

    def __init__(self, tick: float, launch_delay: float, admission: bool, detail: bool) -> None:
        self.tick, self.delay = tick, launch_delay
        self.options = {"admission": admission, "detail": detail}
        self.runs: dict[Hashable, UnitRun] = {}
        # per scenario: its runs, each with whether it stops counting for it at a switch
        self.members: dict[str, list[tuple[UnitRun, bool]]] = {}
        self.groups: list[Batch] = []
        self.ties: list[tuple[int, int]] = []  # batches stepped in one shard (by position)
        self.endings: dict[int, list[tuple[UnitRun, int]]] = {}  # tick -> (run, scenario)
        self.resources: dict[str, None] = {}  # every resource, in order of first appearance
        self.used: dict[str, dict[str, None]] = {}  # per scenario, the resources of its pools

    def add(self, s: int, name: str, scenario: Scenario, tick: float) -> None:
        own = self._shared(scenario.topology, scenario.rule)
        entries = [(r, False) for r in own]
        if scenario.then is not None:
            entries = self._switch(s, own, scenario, switch_tick(scenario.at, tick))
        used: dict[str, None] = {}
        for r, _cut in entries:
            r.scenarios.append(s)
            used.update(dict.fromkeys(r.resource_names))
        self.resources.update(used)
        self.used[name] = used
        self.members[name] = entries

    def _shared(self, topo: Topology, rule: str) -> list[UnitRun]:
        """The topology's unit runs, made for the units not seen in another scenario yet."""
        own, fresh = [], []
        for unit in split(topo, rule):
            unit_run = self.runs.get(unit.signature)
            if unit_run is None:
                unit_run = UnitRun(unit, self.tick, self.delay, **self.options)
                self.runs[unit.signature] = unit_run
                fresh.append(unit_run)
            own.append(unit_run)
        self.groups += batches(fresh, BATCH_LANES)
        return own

    def _switch(
        self, s: int, own: list[UnitRun], scenario: Scenario, at: int
    ) -> list[tuple[UnitRun, bool]]:
        """Runs of ``own`` the switch leaves as they are count throughout; the others stop at
        tick ``at``, where runs of the new topology's other units start, carrying groups by
        target name."""
        assert scenario.then is not None
        after = split(scenario.then, scenario.rule)
        kept = {u.signature for u in after}
        entries = [(r, r.unit.signature not in kept) for r in own]
        for r, cut in entries:
            if cut:
                self.endings.setdefault(at, []).append((r, s))
        sources = {t.name: (r, j) for r in own for j, (_pool, t) in enumerate(r.unit.targets)}
        known = {r.unit.signature for r in own}
        started = []
        for unit in after:
            if unit.signature in known:
                continue
            unit_run = UnitRun(unit, self.tick, self.delay, start=at, **self.options)
            for j, (_pool, target) in enumerate(unit.targets):
                if target.name in sources:
                    source, k = sources[target.name]
                    unit_run.carry.append(Carry(j, source, k))
            started.append(unit_run)
            entries.append((unit_run, False))
        first = len(self.groups)
        self.groups += batches(started, BATCH_LANES, start=at)
        position = {id(b): i for i, b in enumerate(self.groups)}
        for b in self.groups[first:]:
            for r in b.runs:
                for c in r.carry:
                    assert c.source.batch is not None
                    self.ties.append((position[id(b)], position[id(c.source.batch)]))
        return entries


def worker_count(jobs: int | None, shards: int, work: int, parallel_min: int) -> int:
    """Processes to step ``shards`` shards: min(usable cores, shards, jobs), or 1 (this
    process) when the work is too small to pay for forking or forking is not safe: not
    available, or other threads are running (the policy pack runs what-if inside the engine's
    gRPC server; a fork copies only the calling thread, and any lock another one holds)."""
    cores = usable_cores()
    wanted = min(cores, shards, cores if jobs is None else jobs)
    if wanted < 2 or work < parallel_min or not fork_available():
        return 1
    if other_threads_running():
        return 1
    return wanted


def other_threads_running() -> bool:
    return threading.active_count() > 1


def clock(
    shards: Sequence[Shard],
    trace: Trace,
    tick: float,
    endings: Mapping[int, Sequence[tuple[UnitRun, int]]] | None = None,
    recorder: Recorder | None = None,
    sink: Sink | None = None,
    chunk: int = CHUNK_TICKS,
) -> None:
    """Step the shards' batches over the whole trace; each shard's running totals per tick (per
    scenario it counts) go to ``sink`` every ``chunk`` ticks (and for the last ticks), then are
    dropped. Every unit run of the shards is flushed at the end. ``endings``: per tick, the runs
    that stop counting for a scenario then (those of other shards are skipped)."""
    # each lane's places: its unit's demand list (kept in place), its position there, the unit
    by_lane: dict[str, list[tuple[list[float], int, UnitRun]]] = {}
    shard_of: dict[UnitRun, int] = {}
    for p, sh in enumerate(shards):
        for group in sh.batches:
            for unit_run in group.runs:
                shard_of[unit_run] = p
                for i, key in enumerate(unit_run.unit.lane_keys):
                    by_lane.setdefault(key, []).append((unit_run.values, i, unit_run))
    count = 1 + max((s for sh in shards for r in sh.runs for s in r.scenarios), default=0)
    accs = [[[0.0] * sh.width for _ in range(count)] for sh in shards]
    out: list[ShardSeries] = [{s: array("d") for s in sh.scenarios} for sh in shards]
    recorded = [
        [(acc[s], series) for s, series in kept.items()]
        for acc, kept in zip(accs, out, strict=True)
    ]
    plan = list(zip(shards, accs, recorded, strict=True))
    starts: dict[int, list[Batch]] = {}  # batches that start mid-replay, by their first tick
    for sh in shards:
        for group in sh.batches:
            if group.start > 0 or any(r.carry for r in group.runs):
                starts.setdefault(group.start, []).append(group)
    no_runs: list[tuple[list[float], int, UnitRun]] = []
    chunks = {sh.index: series for sh, series in zip(shards, out, strict=True)}
    filled = 0  # ticks in the current chunk
    for k, batch in enumerate(changes(trace, tick)):
        now = k * tick
        if endings and k in endings:
            _end(endings[k], k, shard_of, accs)
        for group in starts.get(k, ()):
            group.activate(k)
        touched: dict[UnitRun, None] = {}  # in the order their demand first changed this tick
        for lane, value in batch:
            for values, i, unit_run in by_lane.get(lane, no_runs):
                if values[i] != value:
                    values[i] = value
                    touched[unit_run] = None
        for unit_run in touched:
            unit_run.version += 1
            assert unit_run.batch is not None
            unit_run.batch.demand_changed(unit_run)
        for sh, totals, records in plan:
            for group in sh.batches:
                for unit_run in group.step(k, now):
                    cols, diffs = unit_run.delta()
                    for s in unit_run.scenarios:
                        acc = totals[s]
                        for c, d in zip(cols, diffs, strict=True):
                            acc[c] += d
                    if recorder is not None:
                        recorder.renewed(unit_run)
            for acc, series in records:
                series.fromlist(acc)
        if recorder is not None:
            recorder.tick(k, now)
        filled += 1
        if filled == chunk:
            _hand(sink, filled, chunks)
            filled = 0
    if filled:
        _hand(sink, filled, chunks)
    ticks = trace.tick_count(tick)
    if endings:  # a switch at or after the last tick: the runs counted to the end
        for at, ending in endings.items():
            if at >= ticks:
                _end(ending, ticks, shard_of, accs)
    for sh in shards:
        for unit_run in sh.runs:
            unit_run.flush(ticks)


def _hand(sink: Sink | None, ticks: int, chunks: dict[int, ShardSeries]) -> None:
    """The chunk to ``sink``; then its series are emptied for the next one."""
    if sink is not None:
        sink(ticks, chunks)
    for series in chunks.values():
        for values in series.values():
            del values[:]


def _end(
    ending: Sequence[tuple[UnitRun, int]],
    k: int,
    shard_of: Mapping[UnitRun, int],
    accs: list[list[list[float]]],
) -> None:
    """The runs stop counting for their scenarios from tick ``k``: their figures so far are kept
    for it, their totals leave its running totals."""
    for unit_run, s in ending:
        p = shard_of.get(unit_run)
        if p is None:  # stepped by another worker
            continue
        acc = accs[p][s]
        for c, v in zip(*unit_run.counted(), strict=True):
            acc[c] -= v
        unit_run.stop_counting(k, s)


def _stepped(
    shards: Sequence[Shard],
    trace: Trace,
    tick: float,
    endings: Mapping[int, Sequence[tuple[UnitRun, int]]],
    emit: Emit,
    chunk: int,
) -> Stepped:
    """In a worker: step its shards, sending each chunk of their series as it is made; then
    keep only the figures the parent needs."""
    clock(shards, trace, tick, endings, sink=lambda count, part: emit((count, part)), chunk=chunk)
    return [[(r.sums, r.kept) for r in sh.runs] for sh in shards]


def _taken(shards: Sequence[Shard], stepped: Stepped) -> None:
    """A worker's figures written back to this process's unit runs."""
    for sh, sums in zip(shards, stepped, strict=True):
        for r, (figures, kept) in zip(sh.runs, sums, strict=True):
            r.sums, r.kept = figures, kept
