"""``what-if``: the ``arklow`` policy on a topology before and after a change, over one trace.

Both sides run in one pass: components that the change leaves identical are simulated once
(:mod:`.units`). A lane's held share is held / Σ min(demand, limit) over the trace (0 without
demand); a lane present on both sides is flagged when its share grows by more than the
threshold (absolute). A lane only after the change is *new* (``held_before`` null, never
flagged: it had no share to grow from), one only before is *removed*; a pool on one side only is
null on the other. Flagged lanes are listed by growth, largest first.
"""

from __future__ import annotations

from dataclasses import dataclass

from arklow_pulumi.core.topology import Topology
from arklow_pulumi.simulation.policies import FAIR
from arklow_pulumi.simulation.simulating import LaneFigures, PoolFigures, run
from arklow_pulumi.simulation.tracing import MAX_TICKS, Trace

DEFAULT_THRESHOLD = 0.01


@dataclass(frozen=True, slots=True)
class LaneDelta:
    demand: float
    held_before: float | None
    held_after: float | None
    share_before: float | None
    share_after: float | None

    @property
    def growth(self) -> float:
        if self.share_before is None or self.share_after is None:
            return 0.0
        return self.share_after - self.share_before


@dataclass(frozen=True, slots=True)
class PoolDelta:
    replica_hours_before: float | None
    replica_hours_after: float | None
    peak_replicas_before: int | None
    peak_replicas_after: int | None


@dataclass(frozen=True, slots=True)
class WhatIf:
    lanes: dict[str, LaneDelta]
    pools: dict[str, PoolDelta]
    flagged: list[str]
    new_lanes: list[str]
    removed_lanes: list[str]


def share(lane: LaneFigures | None) -> float | None:
    if lane is None:
        return None
    return lane.held / lane.demand if lane.demand > 0 else 0.0


def what_if(
    before: Topology,
    after: Topology,
    trace: Trace,
    tick: float,
    launch_delay: float,
    threshold: float = DEFAULT_THRESHOLD,
    *,
    jobs: int | None = None,
    max_ticks: int = MAX_TICKS,
) -> WhatIf:
    sides = {"before": (before, FAIR), "after": (after, FAIR)}
    results = run(sides, trace, tick, launch_delay, jobs=jobs, max_ticks=max_ticks)
    old, new = results["before"], results["after"]
    lanes: dict[str, LaneDelta] = {}
    for key in dict.fromkeys([*old.lanes, *new.lanes]):
        a, b = old.lanes.get(key), new.lanes.get(key)
        lanes[key] = LaneDelta(
            demand=b.demand if b else a.demand if a else 0.0,
            held_before=a.held if a else None,
            held_after=b.held if b else None,
            share_before=share(a),
            share_after=share(b),
        )
    flagged = sorted(
        (key for key, d in lanes.items() if d.growth > threshold),
        key=lambda key: (-lanes[key].growth, key),
    )
    pools = {
        name: _pool_delta(old.pools.get(name), new.pools.get(name))
        for name in dict.fromkeys([*old.pools, *new.pools])
    }
    return WhatIf(
        lanes=lanes,
        pools=pools,
        flagged=flagged,
        new_lanes=[key for key in new.lanes if key not in old.lanes],
        removed_lanes=[key for key in old.lanes if key not in new.lanes],
    )


def _pool_delta(a: PoolFigures | None, b: PoolFigures | None) -> PoolDelta:
    return PoolDelta(
        replica_hours_before=a.replica_hours if a else None,
        replica_hours_after=b.replica_hours if b else None,
        peak_replicas_before=a.peak_replicas if a else None,
        peak_replicas_after=b.peak_replicas if b else None,
    )
