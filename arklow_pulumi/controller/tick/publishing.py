"""The publish step of a tick: the :class:`~arklow_pulumi.controller.ports.Published` value the
HTTP API serves, and the target rows the tick stores (the demand-history rows it adds:
:mod:`.history`).

A stale lane (reports older than the TTL) keeps the allocation and admission it was last
published with, marked ``stale``; its ``demand`` is still the last reported value (raw), as the
contract says. A lane that never reported is simply idle (demand 0).
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping
from datetime import UTC, datetime
from itertools import repeat

from arklow_pulumi.controller.ports import (
    LaneColumns,
    LaneView,
    PoolView,
    Published,
    TargetView,
)
from arklow_pulumi.controller.tick.observing import Observation
from arklow_pulumi.core.allocating import LaneResult, LaneResults
from arklow_pulumi.core.deciding import Decision, Observed, TargetDecision, TargetId
from arklow_pulumi.core.policy import Move
from arklow_pulumi.store.runtime import TargetRecord


def build_published(
    tick: int, obs: Observation, decision: Decision, previous: Published | None
) -> Published:
    keys, allocation, held, admission = _lane_columns(decision.allocation.lanes)
    raw = array("d", map(obs.reports.get, keys, repeat(0.0)))
    lanes = LaneColumns(keys, raw, allocation, held, admission, obs.stale)
    before = previous.lanes if previous is not None else None
    if obs.stale and before:
        lanes = _stale_kept(lanes, before)
    return Published(
        tick=tick,
        time=datetime.fromtimestamp(obs.at, UTC),
        lanes=lanes,
        pools=_pools(obs, decision),
    )


def _stale_kept(lanes: LaneColumns, before: Mapping[str, LaneView]) -> LaneColumns:
    """A stale lane keeps what it was last published with (or, never published, this tick's)."""
    keys, index = lanes.keys_in_order, lanes.index
    raw, allocation, held, admission = (list(c) for c in lanes.columns())
    if isinstance(before, LaneColumns):  # read by position, no view per lane
        _, was_allocation, was_held, was_admission = before.columns()
        was = before.index
        for key in lanes.stale:
            j = was.get(key)
            if j is not None:
                i = index[key]
                allocation[i], held[i], admission[i] = (
                    was_allocation[j],
                    was_held[j],
                    was_admission[j],
                )
    else:
        for key in lanes.stale:
            view = before.get(key)
            if view is not None:
                i = index[key]
                allocation[i], held[i], admission[i] = view.allocation, view.held, view.admission
    return LaneColumns(keys, raw, allocation, held, admission, lanes.stale)


def _lane_columns(
    lanes: Mapping[str, LaneResult],
) -> tuple[tuple[str, ...], array[float], array[float], array[float]]:
    """``(keys, allocation, held, admission)``: the published columns, as arrays of floats (the
    cyclic collector neither tracks nor walks them); read from the allocation's columns when it
    keeps them (no result object per lane)."""
    if isinstance(lanes, LaneResults):
        keys, _demand, allocation, held, admission = lanes.columns()
        return keys, array("d", allocation), array("d", held), array("d", admission)
    rows = [(r.allocation, r.held, r.admission) for r in lanes.values()]
    return (
        tuple(lanes),
        array("d", [r[0] for r in rows]),
        array("d", [r[1] for r in rows]),
        array("d", [r[2] for r in rows]),
    )


def _pools(obs: Observation, decision: Decision) -> dict[str, PoolView]:
    views: dict[str, dict[str, TargetView]] = {}
    observed, decided = obs.observed, decision.targets
    for tid, target in obs.targets.items():
        seen = observed.get(tid) or Observed(target.replicas, 0)
        chosen = decided.get(tid)
        in_pool = views.get(tid.pool)
        if in_pool is None:
            in_pool = views[tid.pool] = {}
        in_pool[tid.name] = TargetView(
            desired=chosen.desired if chosen is not None else seen.current,
            in_service=seen.in_service,
            pending=seen.pending,
            min=target.min_replicas,
            max=target.max_replicas,
            reason=chosen.reason if chosen is not None else "on-target",
        )
    pools = {}
    for name, result in decision.allocation.pools.items():
        targets = views.get(name, {})
        pools[name] = PoolView(
            resource=result.resource,
            capacity=result.capacity,
            demand=result.demand,
            pressure=result.pressure,
            state=result.state,
            desired_replicas=sum(t.desired for t in targets.values()),
            targets=targets,
        )
    return pools


def observed_from_published(published: Published | None) -> dict[TargetId, Observed]:
    """The last published observation of each target (a restarted controller's fallback)."""
    if published is None:
        return {}
    return {
        TargetId(pool, name): Observed(t.in_service, t.pending)
        for pool, view in published.pools.items()
        for name, t in view.targets.items()
    }


def in_target_order(decision: Decision) -> list[tuple[TargetId, TargetDecision]]:
    """The decision's targets sorted as :class:`TargetId` sorts (pool, then name)."""
    return sorted(decision.targets.items(), key=lambda item: (item[0].pool, item[0].name))


def move_of(record: TargetRecord | None) -> Move | None:
    """A stored target row's last move (None when the target has not moved)."""
    if record is None or record.moved_at is None or record.moved is None:
        return None
    return Move(record.moved_at, record.moved)


def target_records(
    obs: Observation, decided: list[tuple[TargetId, TargetDecision]]
) -> list[TargetRecord]:
    """The stored row of each decided target: observed in service and pending, desired, and its
    last move."""
    records = []
    for tid, d in decided:
        seen = obs.observed[tid]
        move = d.move
        records.append(
            TargetRecord(
                tid.name,
                tid.pool,
                seen.in_service,
                seen.pending,
                d.desired,
                None if move is None else move.at,
                None if move is None else move.direction,
            )
        )
    return records
