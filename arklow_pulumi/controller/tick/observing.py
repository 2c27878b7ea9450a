"""The observe step of a tick: one point-in-time snapshot of topology, demand and supply.

- **Topology** from the store (one read transaction).
- **Demand**: each lane's latest report, if it is fresher than the TTL; a lane whose report is
  older is *stale*: demand 0 for the decision, its raw value kept for publishing.
- **Supply**: every scale target's group in one describe through the
  :class:`~arklow_pulumi.supply.routing.SupplyRouter` (partitions per kind and region or project,
  in parallel; each binding batches: ⌈N/100⌉ calls for N ASGs of a region). A group's
  ``current`` for the scale policy is the size it was asked for (``desired``): replicas
  launched but not yet in service are *pending*, never capacity, so they are never requested
  twice; in-service replicas beyond ``desired`` are on their way out and are not counted as
  capacity either.

A failed partition is not fatal: its targets keep their last observation (or the topology's
``replicas``) for the decision and nothing is acted on for them; the others go on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from weakref import WeakKeyDictionary

from arklow_pulumi.core.deciding import Observed, TargetId, scale_targets
from arklow_pulumi.core.topology import GroupRef, ScaleTarget, Topology
from arklow_pulumi.supply.errors import GroupNotFound, SupplyError
from arklow_pulumi.supply.groups import GroupState
from arklow_pulumi.supply.routing import SupplyRouter


@dataclass(frozen=True, slots=True)
class Observation:
    at: float
    topology: Topology
    # lane -> its last reported demand (raw, fresh or stale), lanes of the topology only
    reports: Mapping[str, float]
    demand: Mapping[str, float]  # fresh reports only: what the decision sees
    stale: frozenset[str]
    targets: Mapping[TargetId, ScaleTarget]
    groups: Mapping[TargetId, GroupState]  # targets whose group was described
    observed: Mapping[TargetId, Observed]
    errors: Mapping[TargetId, SupplyError] = field(default_factory=dict)
    supply_read: bool = True


@dataclass(frozen=True, slots=True)
class LaneDemand:
    """The topology's lanes' reports as a tick reads them."""

    reports: Mapping[str, float]  # each lane's last report, raw: fresh or stale
    demand: dict[str, float]  # fresh reports only: what the decision sees
    stale: frozenset[str]


def fresh_demand(topo: Topology, fresh: dict[str, float], stale: dict[str, float]) -> LaneDemand:
    """From each lane's latest report, split into fresh and stale (lane -> demand). Reports of
    lanes the topology does not hold are left out; ``fresh`` itself is used (and so changed)
    when it has none."""
    known = topo.lanes_by_key
    unknown = fresh.keys() - known.keys()
    for lane in unknown:
        del fresh[lane]
    stale_lanes = frozenset(lane for lane in stale if lane in known)
    if not stale_lanes:
        return LaneDemand(fresh, fresh, stale_lanes)
    raw = dict(fresh)
    raw.update((lane, stale[lane]) for lane in stale_lanes)
    return LaneDemand(raw, fresh, stale_lanes)


_REFS: WeakKeyDictionary[Topology, tuple[GroupRef, ...]] = WeakKeyDictionary()


def group_refs(topo: Topology) -> tuple[GroupRef, ...]:
    """Every scale target's group once, sorted; made once per topology value."""
    refs = _REFS.get(topo)
    if refs is None:
        groups = {t.group for t in scale_targets(topo).values()}
        refs = _REFS[topo] = tuple(sorted(groups, key=GroupRef.sort_key))
    return refs


def observed_of(state: GroupState, last: Observed | None = None) -> Observed:
    """In service (at most the asked size) and pending (the asked size not yet in service);
    for a group with its own autoscaler, the minimum Arklow sets as what it asked (the policy
    moves that, not what the autoscaler runs); ``last`` itself when it says the same (a steady
    group makes no new value each tick)."""
    in_service = min(state.in_service, state.desired)
    pending = max(0, state.desired - in_service)
    asked = state.min if state.autoscaler else None
    if last is not None and (last.in_service, last.pending, last.asked) == (
        in_service,
        pending,
        asked,
    ):
        return last
    return Observed(in_service=in_service, pending=pending, asked=asked)


@dataclass(frozen=True, slots=True)
class SupplySeen:
    """The scale targets' groups as one describe saw them."""

    groups: dict[TargetId, GroupState]  # targets whose group was described
    observed: dict[TargetId, Observed]  # every target (the last seen, for one not described)
    errors: dict[TargetId, SupplyError]
    read: bool  # every partition answered


def describe_targets(
    supply: SupplyRouter,
    targets: Mapping[TargetId, ScaleTarget],
    fallback: Mapping[TargetId, Observed],
    refs: Sequence[GroupRef],
) -> SupplySeen:
    """Every target's group in one batched describe. ``refs``: the targets' groups, sorted
    (:func:`group_refs`)."""
    described = supply.describe_partial(refs, detail=False)
    found, failed, last = described.found, described.failed, fallback.get
    groups: dict[TargetId, GroupState] = {}
    errors: dict[TargetId, SupplyError] = {}
    observed: dict[TargetId, Observed] = {}
    for tid, target in targets.items():
        state = found.get(target.group)
        if state is not None:
            groups[tid] = state
            observed[tid] = observed_of(state, last(tid))
        else:
            errors[tid] = failed.get(target.group) or GroupNotFound(target.group)
            observed[tid] = _fallback(tid, target, fallback)
    return SupplySeen(groups, observed, errors, not described.failed)


def _fallback(tid: TargetId, target: ScaleTarget, last: Mapping[TargetId, Observed]) -> Observed:
    return last.get(tid) or Observed(in_service=target.replicas, pending=0)
