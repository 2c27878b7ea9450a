"""What each tick of the day published, and the day's figures derived from it.

Lane figures are unit-hours, as ``arklow simulate`` counts them: ``demand`` = Σ min(demand,
limit) × tick hours (the published ``allocation + held``), ``served`` = Σ allocation × tick
hours, so ``served + held = demand``. A pool's replicas are its targets' in-service replicas
summed; a scale action is a (tick, target) whose desired count changed from the tick before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from arklow_pulumi.controller.ports import LaneView, PoolView, Published


@dataclass
class Recording:
    tick_s: float
    times: list[float] = field(default_factory=list)  # seconds since the day's start
    lanes: dict[str, list[LaneView | None]] = field(default_factory=dict)
    pools: dict[str, list[PoolView | None]] = field(default_factory=dict)
    events: list[tuple[float, str]] = field(default_factory=list)

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

    def event(self, t: float, what: str) -> None:
        self.events.append((t, what))

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
