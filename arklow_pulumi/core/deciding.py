"""One controller tick's decision, pure: allocation and admission for every lane, and the replica
count each scale target should run, keyed by target identity.

Inputs are a point-in-time snapshot: the topology, each lane's demand, what each target's group
was observed to run (in service and pending), and the recent single-tick recommendations of each
target. Nothing here reads a clock, a store or a cloud.

- **Capacity** for allocation is each pool's static capacity plus its targets' *in-service*
  replicas × units per replica. Pending replicas are not capacity (AWS counts warming instances as
  pending, not in service).
- **Single tick**: the pool's decision from :func:`arklow_pulumi.core.scaling.desired_replicas`
  (through the allocation), clamped to each target's [min, max]: the ``recommended`` count, which
  the caller keeps in the history.
- **Scale policy** (:mod:`arklow_pulumi.core.policy`, the pool's ``scale_policy``): tolerance on
  the pool's needed units against what its targets supply (in-service + pending), immediate but
  bounded scale-up, windowed and bounded scale-down. Pending replicas are current supply, so they
  are never requested twice.
- A pool without members settles its targets to their minimum at once (T5): there is no demand
  to wait for.
- ``desired`` is always within the target's [min, max].
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from arklow_pulumi.core.allocating import Allocation, allocate
from arklow_pulumi.core.policy import clamp, next_replicas, within_tolerance
from arklow_pulumi.core.topology import Pool, ScaleTarget, Topology


@dataclass(frozen=True, slots=True, order=True)
class TargetId:
    pool: str
    name: str  # scale target name (unique in the store)

    def __str__(self) -> str:
        return f"{self.pool}/{self.name}"


@dataclass(frozen=True, slots=True)
class Observed:
    """What a target's group runs: ``in_service`` counts as capacity for allocation and as supply
    for scaling; ``pending`` (launched, not in service) is supply for scaling only."""

    in_service: int
    pending: int = 0

    @property
    def current(self) -> int:
        return self.in_service + self.pending


@dataclass(frozen=True, slots=True)
class Recommendation:
    """One single-tick recommendation kept in a target's history."""

    at: float
    replicas: int


@dataclass(frozen=True, slots=True)
class TargetDecision:
    target: TargetId
    recommended: int  # this tick's single-tick decision (after clamp), goes into the history
    desired: int  # after the scale policy; always within [min, max]
    current: int  # in_service + pending as observed


@dataclass(frozen=True, slots=True)
class Decision:
    allocation: Allocation  # capacity = static + in-service supply
    targets: Mapping[TargetId, TargetDecision]


_NO_HISTORY: Sequence[Recommendation] = ()


def observed_of(pool: Pool, target: ScaleTarget, observed: Mapping[TargetId, Observed]) -> Observed:
    """The target's observation, or the topology's ``replicas`` in service and none pending."""
    seen = observed.get(TargetId(pool.name, target.name))
    return seen if seen is not None else Observed(in_service=target.replicas, pending=0)


# Per pool with targets: each target's id, value and observation, in the pool's target order.
_Seen = tuple[tuple[TargetId, ScaleTarget, Observed], ...]


def _seen(topo: Topology, observed: Mapping[TargetId, Observed]) -> dict[str, _Seen]:
    return {
        pool.name: tuple(
            (TargetId(pool.name, t.name), t, observed_of(pool, t, observed))
            for t in pool.scale_targets
        )
        for pool in topo.pools.values()
        if pool.scale_targets
    }


def in_service_capacity(topo: Topology, observed: Mapping[TargetId, Observed]) -> dict[str, float]:
    """Each pool with targets: static capacity plus in-service replicas × units per replica."""
    return _capacity(topo, _seen(topo, observed))


def _capacity(topo: Topology, seen: Mapping[str, _Seen]) -> dict[str, float]:
    return {
        name: topo.pools[name].capacity + sum(o.in_service * t.units_per_replica for _, t, o in ts)
        for name, ts in seen.items()
    }


def decide(
    topo: Topology,
    demand: Mapping[str, float],
    observed: Mapping[TargetId, Observed],
    history: Mapping[TargetId, Sequence[Recommendation]],
    now: float,
    *,
    admission: bool = True,
) -> Decision:
    """Allocation for every lane and the replica count for every scale target (see module doc).

    ``admission=False`` skips admission (see :func:`~arklow_pulumi.core.allocating.allocate`);
    the allocation, pools and target decisions are the same.
    """
    seen = _seen(topo, observed)
    allocation = allocate(topo, demand, _capacity(topo, seen), admission=admission)
    targets: dict[TargetId, TargetDecision] = {}
    for name, ts in seen.items():
        for decision in _decide_pool(topo, topo.pools[name], allocation, ts, history, now):
            targets[decision.target] = decision
    return Decision(allocation=allocation, targets=targets)


def _decide_pool(
    topo: Topology,
    pool: Pool,
    allocation: Allocation,
    seen: _Seen,
    history: Mapping[TargetId, Sequence[Recommendation]],
    now: float,
    /,
) -> list[TargetDecision]:
    policy = pool.scale_policy
    result = allocation.pools[pool.name]
    currents = [o.in_service + o.pending for _, _, o in seen]
    settle = not topo.members(pool.name)
    hold = not settle and _within_tolerance(pool, result.demand, seen, currents)
    horizon = now - policy.scale_down_window_s
    decisions = []
    for (tid, t, _), current, rec in zip(seen, currents, result.desired_replicas, strict=True):
        lo, hi = t.min_replicas, t.max_replicas
        rec = clamp(rec, lo, hi)
        if settle:
            desired = lo
        elif hold:
            desired = clamp(current, lo, hi)
        else:
            window = (r.replicas for r in history.get(tid, _NO_HISTORY) if r.at >= horizon)
            desired = next_replicas(
                policy, current=current, recommended=rec, window=window, low=lo, high=hi
            )
        decisions.append(
            TargetDecision(target=tid, recommended=rec, desired=desired, current=current)
        )
    return decisions


def _within_tolerance(pool: Pool, demand: float, seen: _Seen, currents: Sequence[int]) -> bool:
    """The pool's targets supply (in service + pending) what it needs, within the tolerance."""
    needed = demand * (1.0 + pool.headroom) - pool.capacity
    supplied = sum(c * t.units_per_replica for c, (_, t, _) in zip(currents, seen, strict=True))
    return within_tolerance(max(0.0, needed), supplied, pool.scale_policy.tolerance)
