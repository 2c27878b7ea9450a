"""``what-if``: the ``arklow`` policy on a topology before and after a change, over one trace.

Both sides run in one pass: components that the change leaves identical are simulated once
(:mod:`.units`). A lane's held share is held / Σ min(demand, limit) over the trace (0 without
demand); a lane present on both sides is flagged when its share grows by more than the
threshold (absolute). A lane only after the change is *new* (``held_before`` null, never
flagged: it had no share to grow from), one only before is *removed*; a pool on one side only is
null on the other. Flagged lanes are listed by growth, largest first.

With ``change_at`` the *after* side is one replay that switches topology at the first tick at or
after that time, carrying each target's group over by name (:mod:`.simulating`); the *before*
side is the before topology throughout. Sides are still told by topology: a lane or pool not in
the after topology is null on the after side, whatever it ran before the switch.

Growth limits on replica-hours and on peak replicas (relative: 0.1 flags a growth of more than
10%) flag each pool on both sides, and the totals over all pools (``totals``: the whole replay's
replica-hours, and the highest Σ in-service replicas at one tick); a value growing from 0 grows
by more than any limit.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TypeVar

from arklow_pulumi.core.topology import Topology
from arklow_pulumi.simulation.figures import LaneFigures, PoolFigures
from arklow_pulumi.simulation.policies import build
from arklow_pulumi.simulation.simulating import Scenario, run
from arklow_pulumi.simulation.tracing import MAX_TICKS, Trace

DEFAULT_THRESHOLD = 0.01
F = TypeVar("F")


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
class Limits:
    """What flags a what-if: the lanes' held share growth (absolute), and, when set, the
    relative growth of replica-hours and of peak replicas."""

    threshold: float = DEFAULT_THRESHOLD
    replica_hours_growth: float | None = None
    peak_replicas_growth: float | None = None

    def flags(self, delta: PoolDelta) -> list[str]:
        """The figures of ``delta`` that grew past their limit."""
        out = []
        hours = (delta.replica_hours_before, delta.replica_hours_after)
        if _grew(*hours, self.replica_hours_growth):
            out.append("replica_hours")
        peaks = (delta.peak_replicas_before, delta.peak_replicas_after)
        if _grew(*peaks, self.peak_replicas_growth):
            out.append("peak_replicas")
        return out


def _grew(before: float | None, after: float | None, limit: float | None) -> bool:
    """``after`` exceeds ``before × (1 + limit)`` (past float noise); never without a side or a
    limit."""
    if limit is None or before is None or after is None:
        return False
    return after - before > limit * before + 1e-12 * max(1.0, before)


@dataclass(frozen=True, slots=True)
class WhatIf:
    lanes: dict[str, LaneDelta]
    pools: dict[str, PoolDelta]
    flagged: list[str]
    new_lanes: list[str]
    removed_lanes: list[str]
    totals: PoolDelta
    flagged_pools: list[str]
    flagged_totals: list[str]

    @property
    def anything_flagged(self) -> bool:
        return bool(self.flagged or self.flagged_pools or self.flagged_totals)


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
    threshold: float | Limits = DEFAULT_THRESHOLD,
    *,
    jobs: int | None = None,
    max_ticks: int = MAX_TICKS,
    change_at: float | None = None,
    policy: str = "arklow",
    utilization: float | None = None,
    max_memory: int | None = None,
) -> WhatIf:
    """Both topologies replayed over the trace under ``policy`` (``arklow``, ``single-tick`` or
    ``cloud-autoscaler``, :mod:`.policies`), the after side switching at ``change_at``."""
    limits = threshold if isinstance(threshold, Limits) else Limits(threshold)
    old_topo, rule = build(policy, before, None, utilization)
    new_topo, _ = build(policy, after, None, utilization)
    changed = (
        Scenario(new_topo, rule)
        if change_at is None
        else Scenario(old_topo, rule, then=new_topo, at=change_at)
    )
    sides = {"before": Scenario(old_topo, rule), "after": changed}
    results = run(
        sides, trace, tick, launch_delay, jobs=jobs, max_ticks=max_ticks, max_memory=max_memory
    )
    old, new = results["before"], results["after"]
    old_lanes = _on(old.lanes, before.lanes_by_key)
    new_lanes = _on(new.lanes, after.lanes_by_key)
    lanes: dict[str, LaneDelta] = {}
    for key in dict.fromkeys([*old_lanes, *new_lanes]):
        a, b = old_lanes.get(key), new_lanes.get(key)
        lanes[key] = LaneDelta(
            demand=b.demand if b else a.demand if a else 0.0,
            held_before=a.held if a else None,
            held_after=b.held if b else None,
            share_before=share(a),
            share_after=share(b),
        )
    flagged = sorted(
        (key for key, d in lanes.items() if d.growth > limits.threshold),
        key=lambda key: (-lanes[key].growth, key),
    )
    old_pools, new_pools = _on(old.pools, before.pools), _on(new.pools, after.pools)
    pools = {
        name: _pool_delta(old_pools.get(name), new_pools.get(name))
        for name in dict.fromkeys([*old_pools, *new_pools])
    }
    totals = PoolDelta(old.replica_hours, new.replica_hours, old.peak_replicas, new.peak_replicas)
    return WhatIf(
        lanes=lanes,
        pools=pools,
        flagged=flagged,
        new_lanes=[key for key in new_lanes if key not in old_lanes],
        removed_lanes=[key for key in old_lanes if key not in new_lanes],
        totals=totals,
        flagged_pools=[name for name, delta in pools.items() if limits.flags(delta)],
        flagged_totals=limits.flags(totals),
    )


def _on(figures: Mapping[str, F], names: Collection[str]) -> dict[str, F]:
    """The figures of the names a topology has, in the figures' order."""
    return {name: f for name, f in figures.items() if name in names}


def _pool_delta(a: PoolFigures | None, b: PoolFigures | None) -> PoolDelta:
    return PoolDelta(
        replica_hours_before=a.replica_hours if a else None,
        replica_hours_after=b.replica_hours if b else None,
        peak_replicas_before=a.peak_replicas if a else None,
        peak_replicas_after=b.peak_replicas if b else None,
    )
