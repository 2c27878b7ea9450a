"""The clock loop: a trace replayed tick by tick against simulated supply, decided by ``decide``.

Each tick at ``t = k × tick``: the trace's rows up to ``t`` set each lane's demand; each
simulated group brings launches whose delay has passed into service; ``decide`` (the
controller's) gives the allocation (capacity = static + in-service supply) and each target's
desired count under its pool's scale policy; the tick's figures are counted; the recommendation
joins the target's history and the group is resized to the desired count (launches become
pending, see :mod:`.supplying`).

Figures per tick, counted in ticks and turned into hours at the end: each lane's
``e = min(demand, limit)`` and allocation (served; held = e − allocation), each pool's capacity
and in-service replicas, and a scale action whenever a target's desired count differs from the
previous tick's (the first tick compares with the starting replicas).

The work is split by :mod:`.units` and stepped by :mod:`.stepping`: a unit whose inputs did not
change keeps its decision, and units of one topology are decided together when many changed.
The batches are partitioned into shards (:mod:`.sharding`), each with its own running totals per
tick, stepped in this process or by forked workers (:mod:`.forking`); a tick's series value is
the shards' totals added in shard order, so the output is the same bytes for any worker count.
"""

from __future__ import annotations

import threading
from array import array
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from operator import add
from typing import TYPE_CHECKING

from arklow_pulumi.core.topology import Topology
from arklow_pulumi.simulation.forking import fork_available, map_forked, usable_cores
from arklow_pulumi.simulation.sharding import Shard, assign, shard
from arklow_pulumi.simulation.stepping import Batch, UnitRun, batches
from arklow_pulumi.simulation.tracing import MAX_TICKS, Trace, changes, check_replay
from arklow_pulumi.simulation.units import split

BATCH_LANES = 256
# Estimated work (shard cost × ticks, :mod:`.sharding`; about 0.15 µs of stepping per unit)
# below which the shards are stepped in this process. Forking two workers and collecting their
# results costs 10-15 ms here (2 cores); the four policies on examples/traces/gpu_day (0.9 million,
# 0.18 s in-process) took 0.13 s with two workers. So a tenth of a second of work pays for it.
PARALLEL_MIN = 700_000

if TYPE_CHECKING:  # array is subscriptable at runtime only from Python 3.12
    Columns = tuple[array[float], array[float], array[float], array[float]]
    ShardSeries = dict[int, Columns]  # per scenario (by position): its four totals per tick
    # what a worker sends back per shard: its series, and per unit run (in ``Shard.runs``
    # order) the figures ``_result`` reads
    RunSums = tuple[array[float], array[float], array[float], array[float], list[int], int]
    Stepped = list[tuple[ShardSeries, list[RunSums]]]


@dataclass(frozen=True, slots=True)
class LaneFigures:
    """Unit-hours over the trace: ``demand`` = Σ min(demand, limit), ``served + held = demand``."""

    demand: float
    served: float
    held: float


@dataclass(frozen=True, slots=True)
class PoolFigures:
    capacity_hours: float
    replica_hours: float
    peak_replicas: int


@dataclass(frozen=True, slots=True)
class Series:
    """Totals per tick (units, and in-service replicas), for charts."""

    times: list[float]
    demand: list[float]
    served: list[float]
    capacity: list[float]
    replicas: list[float]


@dataclass(frozen=True, slots=True)
class RunResult:
    lanes: dict[str, LaneFigures]
    pools: dict[str, PoolFigures]
    served_ratio: float
    utilization: float
    replica_hours: float
    scale_actions: int
    series: Series


def run(
    scenarios: Mapping[str, tuple[Topology, str]],
    trace: Trace,
    tick: float,
    launch_delay: float,
    *,
    jobs: int | None = None,
    parallel_min: int = PARALLEL_MIN,
    max_ticks: int = MAX_TICKS,
) -> dict[str, RunResult]:
    """Simulate each named scenario (a topology and its sharing rule) over the trace, at once.

    Units found identical in several scenarios are stepped once and counted in each. The shards
    (:mod:`.sharding`) are stepped by up to ``jobs`` worker processes (default: the usable
    cores), in this process when the estimated work is below ``parallel_min``; the results are
    the same bytes for any worker count. A run over ``max_ticks`` ticks is refused before
    anything is built (:func:`~.tracing.check_replay`).
    """
    check_replay(trace, tick, max_ticks)
    runs: dict[Hashable, UnitRun] = {}
    members: dict[str, list[UnitRun]] = {}
    groups: list[Batch] = []
    for name, (topo, rule) in scenarios.items():
        members[name] = []
        fresh = []
        for unit in split(topo, rule):
            unit_run = runs.get(unit.signature)
            if unit_run is None:
                unit_run = runs[unit.signature] = UnitRun(unit, tick, launch_delay)
                fresh.append(unit_run)
            members[name].append(unit_run)
        groups += batches(fresh, BATCH_LANES)
    names = list(scenarios)
    for s, name in enumerate(names):
        for unit_run in members[name]:
            unit_run.scenarios.append(s)
    shards = shard(groups)
    ticks = trace.tick_count(tick)
    workers = worker_count(jobs, len(shards), ticks * sum(s.cost for s in shards), parallel_min)
    if workers == 1:
        totals = clock(shards, trace, tick)
    else:
        parts = assign(shards, workers)
        payloads = map_forked(lambda w: _stepped(parts[w], trace, tick), len(parts))
        totals = {}
        for part, payload in zip(parts, payloads, strict=True):
            totals.update(_taken(part, payload))
    hours = tick / 3600.0
    return {
        name: _result(members[name], hours, _series(s, shards, totals, ticks, tick))
        for s, name in enumerate(names)
    }


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


def clock(shards: Sequence[Shard], trace: Trace, tick: float) -> dict[int, ShardSeries]:
    """Step the shards' batches over the whole trace; each shard's running totals per tick (per
    scenario it counts). Every unit run of the shards is flushed at the end."""
    # each lane's places: its unit's demand list (kept in place), its position there, the unit
    by_lane: dict[str, list[tuple[list[float], int, UnitRun]]] = {}
    for sh in shards:
        for group in sh.batches:
            for unit_run in group.runs:
                for i, key in enumerate(unit_run.unit.lane_keys):
                    by_lane.setdefault(key, []).append((unit_run.values, i, unit_run))
    count = 1 + max((s for sh in shards for r in sh.runs for s in r.scenarios), default=0)
    accs = [[[0.0, 0.0, 0.0, 0.0] for _ in range(count)] for _ in shards]
    out: list[ShardSeries] = [
        {s: (array("d"), array("d"), array("d"), array("d")) for s in sh.scenarios} for sh in shards
    ]
    recorded = [
        [(acc[s], cols) for s, cols in series.items()]
        for acc, series in zip(accs, out, strict=True)
    ]
    plan = list(zip(shards, accs, recorded, strict=True))
    no_runs: list[tuple[list[float], int, UnitRun]] = []
    for k, batch in enumerate(changes(trace, tick)):
        now = k * tick
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
                    d0, d1, d2, d3 = unit_run.delta()
                    for s in unit_run.scenarios:
                        acc = totals[s]
                        acc[0] += d0
                        acc[1] += d1
                        acc[2] += d2
                        acc[3] += d3
            for acc, (c0, c1, c2, c3) in records:
                c0.append(acc[0])
                c1.append(acc[1])
                c2.append(acc[2])
                c3.append(acc[3])
    ticks = trace.tick_count(tick)
    for sh in shards:
        for unit_run in sh.runs:
            unit_run.flush(ticks)
    return {sh.index: series for sh, series in zip(shards, out, strict=True)}


def _stepped(shards: Sequence[Shard], trace: Trace, tick: float) -> Stepped:
    """In a worker: step its shards, then keep only what the parent needs (arrays of floats
    pickle compactly)."""
    series = clock(shards, trace, tick)
    return [
        (
            series[sh.index],
            [
                (
                    array("d", r.sum_e),
                    array("d", r.sum_alloc),
                    array("d", r.sum_capacity),
                    array("d", r.sum_replicas),
                    r.peak,
                    r.actions,
                )
                for r in sh.runs
            ],
        )
        for sh in shards
    ]


def _taken(shards: Sequence[Shard], stepped: Stepped) -> dict[int, ShardSeries]:
    """A worker's figures written back to this process's unit runs; its shards' series."""
    out: dict[int, ShardSeries] = {}
    for sh, (series, sums) in zip(shards, stepped, strict=True):
        out[sh.index] = series
        for r, (sum_e, sum_alloc, sum_capacity, sum_replicas, peak, actions) in zip(
            sh.runs, sums, strict=True
        ):
            r.sum_e, r.sum_alloc = sum_e.tolist(), sum_alloc.tolist()
            r.sum_capacity, r.sum_replicas = sum_capacity.tolist(), sum_replicas.tolist()
            r.peak, r.actions = peak, actions
    return out


def _series(
    scenario: int,
    shards: Sequence[Shard],
    totals: Mapping[int, ShardSeries],
    ticks: int,
    tick: float,
) -> Series:
    """A scenario's series: each tick's shard totals added in shard order."""
    columns: list[list[float]] = [[0.0] * ticks for _ in range(4)]
    for sh in shards:
        part = totals[sh.index].get(scenario)
        if part is not None:
            columns = [list(map(add, c, p)) for c, p in zip(columns, part, strict=True)]
    demand, served, capacity, replicas = columns
    return Series([k * tick for k in range(ticks)], demand, served, capacity, replicas)


def _result(unit_runs: Sequence[UnitRun], hours: float, series: Series) -> RunResult:
    lanes: dict[str, LaneFigures] = {}
    pools: dict[str, PoolFigures] = {}
    served_units = capacity_units = demand_total = served_total = 0.0
    replica_hours = 0.0
    actions = 0
    for r in unit_runs:
        unit = r.unit
        for i, (key, cost) in enumerate(zip(unit.lane_keys, unit.cost_sums, strict=True)):
            demand, served = r.sum_e[i] * hours, r.sum_alloc[i] * hours
            lanes[key] = LaneFigures(demand, served, max(demand - served, 0.0))
            demand_total += demand
            served_total += served
            served_units += served * cost
        for p, name in enumerate(unit.pool_names):
            figures = PoolFigures(r.sum_capacity[p] * hours, r.sum_replicas[p] * hours, r.peak[p])
            pools[name] = figures
            capacity_units += figures.capacity_hours
            replica_hours += figures.replica_hours
        actions += r.actions
    return RunResult(
        lanes=lanes,
        pools=pools,
        served_ratio=served_total / demand_total if demand_total > 0 else 1.0,
        utilization=served_units / capacity_units if capacity_units > 0 else 0.0,
        replica_hours=replica_hours,
        scale_actions=actions,
        series=series,
    )
