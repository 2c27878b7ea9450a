"""What each tick of the day published, and the day's figures derived from it.

Lane figures are unit-hours, as ``arklow simulate`` counts them: ``demand`` = Σ min(demand,
limit) × tick hours (the published ``allocation + held``), ``served`` = Σ allocation × tick
hours, so ``served + held = demand``. A pool's replicas are its targets' in-service replicas
summed; a scale action is a (tick, target) whose desired count changed from the tick before.

Beside what was published, the recording keeps the topology's layout in force from each ``pulumi
up`` on (:class:`Layout`: which pools each lane draws from, what one unit of a lane costs, what
each scale target is), so the report can name a lane's pools and a chart's units.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from arklow_pulumi.controller.ports import LaneView, PoolView, Published
from arklow_pulumi.core.topology import Topology
from arklow_pulumi.scenario.day import Event


@dataclass(frozen=True, slots=True)
class TargetInfo:
    pool: str
    kind: str  # aws_asg | gcp_mig
    resource: str
    units_per_replica: float
    autoscaled: bool  # a MIG with its own autoscaler: Arklow sets the autoscaler's minimum


@dataclass(frozen=True, slots=True)
class Layout:
    lane_pools: Mapping[str, tuple[str, ...]]  # lane -> the pools it draws from, by name
    pool_members: Mapping[str, tuple[str, ...]]  # pool -> the destinations drawing from it
    lane_costs: Mapping[str, Mapping[str, float]]  # lane -> resource -> units per unit of work
    targets: Mapping[str, TargetInfo]


def layout_of(topology: Topology, autoscaled: frozenset[str] = frozenset()) -> Layout:
    lane_pools, lane_costs = {}, {}
    for destination in topology.destinations.values():
        pools = tuple(sorted(set(topology.pools_of(destination.name).values())))
        for lane in destination.lanes:
            lane_pools[lane.key] = pools
            lane_costs[lane.key] = {r: lane.cost_of(r) for r in destination.resources}
    targets = {
        t.name: TargetInfo(
            pool.name, t.kind, pool.resource, t.units_per_replica, t.name in autoscaled
        )
        for pool in topology.pools.values()
        for t in pool.scale_targets
    }
    members = {name: topology.members(name) for name in topology.pools}
    return Layout(lane_pools, members, lane_costs, targets)


@dataclass
class Recording:
    tick_s: float
    times: list[float] = field(default_factory=list)  # seconds since the day's start
    lanes: dict[str, list[LaneView | None]] = field(default_factory=dict)
    pools: dict[str, list[PoolView | None]] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    layouts: list[tuple[float, Layout]] = field(default_factory=list)  # (from t, layout)

    def add(self, t: float, published: Published) -> None:
        index = len(self.times)
        self.times.append(t)
        for name, lane in published.lanes.items():
            self.lanes.setdefault(name, [None] * index).append(lane)
        for name, pool in published.pools.items():
            self.pools.setdefault(name, [None] * index).append(pool)
        for lanes in self.lanes.values():
            if len(lanes) <= index:
                lanes.append(None)
        for pools in self.pools.values():
            if len(pools) <= index:
                pools.append(None)

    def event(self, event: Event) -> None:
        self.events.append(event)
        self.events.sort(key=lambda e: e.t)

    def layout(self, t: float, layout: Layout) -> None:
        """``layout`` is in force from ``t`` on (a ``pulumi up`` applied it)."""
        self.layouts.append((t, layout))

    def layout_at(self, t: float) -> Layout:
        return next(
            (lay for since, lay in reversed(self.layouts) if since <= t),
            self.layouts[0][1] if self.layouts else Layout({}, {}, {}, {}),
        )

    def lane_pools(self, lane: str) -> list[tuple[float, tuple[str, ...]]]:
        """(from t, the pools ``lane`` draws from) each time they changed."""
        return self._changes(lambda lay: lay.lane_pools.get(lane, ()))

    def pool_members(self, pool: str) -> list[tuple[float, tuple[str, ...]]]:
        """(from t, the destinations drawing from ``pool``) each time they changed."""
        return self._changes(lambda lay: lay.pool_members.get(pool, ()))

    def _changes(
        self, of: Callable[[Layout], tuple[str, ...]]
    ) -> list[tuple[float, tuple[str, ...]]]:
        out: list[tuple[float, tuple[str, ...]]] = []
        for since, lay in self.layouts:
            names = of(lay)
            if not out or out[-1][1] != names:
                out.append((since, names))
        return out

    def target_info(self, name: str) -> TargetInfo | None:
        """What the latest layout naming target ``name`` says of it."""
        return next(
            (lay.targets[name] for _, lay in reversed(self.layouts) if name in lay.targets), None
        )

    def target_series(self, pool: str) -> dict[str, list[tuple[int, int] | None]]:
        """target -> per tick (desired, in service), None while the pool did not exist."""
        out: dict[str, list[tuple[int, int] | None]] = {}
        views = self.pools[pool]
        names = sorted({t for v in views if v is not None for t in v.targets})
        for name in names:
            out[name] = [
                (v.targets[name].desired, v.targets[name].in_service)
                if v is not None and name in v.targets
                else None
                for v in views
            ]
        return out


@dataclass(frozen=True, slots=True)
class LaneFigures:
    demand: float  # unit-hours
    served: float
    held: float
    mean_admission: float
    peak_demand: float

    @property
    def held_pct(self) -> float:
        return 100.0 * self.held / self.demand if self.demand > 0 else 0.0


@dataclass(frozen=True, slots=True)
class PoolFigures:
    resource: str
    mean_pressure: float | None
    peak_pressure: float | None
    constrained_ticks: int
    replicas: tuple[int, float, int] | None  # min, mean, max in service; None without targets
    scale_actions: int


def lane_figures(rec: Recording) -> dict[str, LaneFigures]:
    hours = rec.tick_s / 3600.0
    out = {}
    for name, series in sorted(rec.lanes.items()):
        seen = [v for v in series if v is not None]
        wanted = [v.allocation + v.held for v in seen]
        out[name] = LaneFigures(
            demand=sum(wanted) * hours,
            served=sum(v.allocation for v in seen) * hours,
            held=sum(v.held for v in seen) * hours,
            mean_admission=sum(v.admission for v in seen) / len(seen) if seen else 0.0,
            peak_demand=max((v.demand for v in seen), default=0.0),
        )
    return out


def pool_figures(rec: Recording) -> dict[str, PoolFigures]:
    out = {}
    for name, series in sorted(rec.pools.items()):
        seen = [v for v in series if v is not None]
        pressures = [v.pressure for v in seen if v.pressure is not None]
        replicas = None
        if any(v.targets for v in seen):
            counts = [sum(t.in_service for t in v.targets.values()) for v in seen]
            replicas = (min(counts), sum(counts) / len(counts), max(counts))
        out[name] = PoolFigures(
            resource=seen[0].resource if seen else "",
            mean_pressure=sum(pressures) / len(pressures) if pressures else None,
            peak_pressure=max(pressures) if pressures else None,
            constrained_ticks=sum(1 for v in seen if v.state == "constrained"),
            replicas=replicas,
            scale_actions=sum(_changes(s) for s in rec.target_series(name).values()),
        )
    return out


def _changes(series: Sequence[tuple[int, int] | None]) -> int:
    desired = [s[0] for s in series if s is not None]
    return sum(1 for a, b in pairwise(desired) if a != b)
