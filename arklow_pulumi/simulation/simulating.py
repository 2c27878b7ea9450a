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
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

from arklow_pulumi.core.topology import Topology
from arklow_pulumi.simulation.stepping import Batch, UnitRun, batches
from arklow_pulumi.simulation.tracing import Trace, changes
from arklow_pulumi.simulation.units import split

BATCH_LANES = 256


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
) -> dict[str, RunResult]:
    """Simulate each named scenario (a topology and its sharing rule) over the trace, at once.

    Units found identical in several scenarios are stepped once and counted in each.
    """
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
    # each lane's places: its unit's demand list (kept in place), its position there, the unit
    by_lane: dict[str, list[tuple[list[float], int, UnitRun]]] = {}
    for group in groups:
        for unit_run in group.runs:
            for i, key in enumerate(unit_run.unit.lane_keys):
                by_lane.setdefault(key, []).append((unit_run.values, i, unit_run))
    names = list(scenarios)
    for s, name in enumerate(names):
        for unit_run in members[name]:
            unit_run.scenarios.append(s)
    totals = [[0.0, 0.0, 0.0, 0.0] for _ in names]
    series = [Series([], [], [], [], []) for _ in names]
    ticks = trace.tick_count(tick)
    all_runs = list(runs.values())
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
        for group in groups:
            for unit_run in group.step(k, now):
                d0, d1, d2, d3 = unit_run.delta()
                for s in unit_run.scenarios:
                    acc = totals[s]
                    acc[0] += d0
                    acc[1] += d1
                    acc[2] += d2
                    acc[3] += d3
        for s in range(len(names)):
            acc, out = totals[s], series[s]
            out.times.append(now)
            out.demand.append(acc[0])
            out.served.append(acc[1])
            out.capacity.append(acc[2])
            out.replicas.append(acc[3])
    for unit_run in all_runs:
        unit_run.flush(ticks)
    hours = tick / 3600.0
    return {name: _result(members[name], hours, series[s]) for s, name in enumerate(names)}


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
