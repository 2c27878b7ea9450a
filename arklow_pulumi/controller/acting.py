"""The act step of a tick: bring each group whose decided count differs from what it was asked
to run to that count, in parallel across groups; or, in dry-run, only say what would be done.

A change is planned against the group as the observe step described it
(:func:`~arklow_pulumi.supply.planning.plan_change`, the one place bounds and policy conflicts are
enforced), so a group that already runs the decided count costs no call at all, and a refused
count is reported without any write. One group's failure never stops the others.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Literal

from arklow_pulumi.controller import faults
from arklow_pulumi.core.deciding import TargetDecision, TargetId
from arklow_pulumi.core.topology import ScaleTarget
from arklow_pulumi.supply import fencing
from arklow_pulumi.supply.errors import SupplyError
from arklow_pulumi.supply.groups import GroupState, Plan, ReplicaLimits, SetResult
from arklow_pulumi.supply.planning import needs_change, plan_change
from arklow_pulumi.supply.routing import SupplyRouter

MAX_PARALLEL = 8


@dataclass(frozen=True, slots=True)
class Change:
    target: TargetId
    spec: ScaleTarget
    state: GroupState
    desired: int

    @property
    def direction(self) -> Literal["up", "down"]:
        return "up" if self.desired > self.state.desired else "down"


@dataclass(frozen=True, slots=True)
class ActReport:
    done: Sequence[tuple[Change, SetResult]] = ()
    failed: Sequence[tuple[Change, SupplyError]] = ()


def changes_to_make(
    decisions: Mapping[TargetId, TargetDecision],
    targets: Mapping[TargetId, ScaleTarget],
    groups: Mapping[TargetId, GroupState],
) -> list[Change]:
    """The targets whose group would be written to, in target order."""
    found = []
    for tid in sorted(decisions, key=lambda t: (t.pool, t.name)):
        state = groups.get(tid)
        if state is not None and needs_change(state, decisions[tid].desired):
            found.append(Change(tid, targets[tid], state, decisions[tid].desired))
    return found


def with_detail(supply: SupplyRouter, changes: Sequence[Change]) -> tuple[Change, ...]:
    """The changes with their groups described in full (an ASG's scaling policies and scheduled
    actions, which the tick's cheap describe skips), so a printed plan shows every refusal. Reads
    only; a group that cannot be described again keeps its first description."""
    if not changes:
        return ()
    described = supply.describe_partial([c.state.ref for c in changes], detail=True)
    return tuple(replace(c, state=described.found.get(c.state.ref, c.state)) for c in changes)


def plan_of(change: Change) -> Plan | SupplyError:
    try:
        return plan_change(
            change.state,
            change.desired,
            ReplicaLimits.of(change.spec),
            change.spec.override_policies,
        )
    except SupplyError as exc:
        return exc


def describe_plan(changes: Sequence[Change]) -> list[str]:
    """One line per change, as dry-run prints it."""
    lines = []
    for change in changes:
        plan = plan_of(change)
        head = f"{change.target} ({change.state.ref})"
        if isinstance(plan, SupplyError):
            lines.append(f"would refuse {head}: {plan}")
        else:
            window = f" window {list(plan.window)}" if plan.window else ""
            lines.append(f"would {plan.method} {head}: {plan.previous} -> {plan.desired}{window}")
    return lines


@dataclass(frozen=True, slots=True)
class Fence:
    """What each resize is made under: ``check`` re-checks the lease epoch right before the call
    (raises :class:`~arklow_pulumi.store.runtime.LeaseLost` or a store error, and then nothing is
    sent), and the call carries ``epoch`` and ``tick`` (:mod:`arklow_pulumi.supply.fencing`)."""

    check: Callable[[], None]
    epoch: int
    tick: int


def apply_changes(
    supply: SupplyRouter,
    changes: Sequence[Change],
    fence: Fence | None = None,
    executor: Executor | None = None,
) -> ActReport:
    """Make ``changes`` in parallel (at most :data:`MAX_PARALLEL` at once): on ``executor`` (a
    long-lived pool: no threads started per tick), or on a pool made for the call."""
    if not changes:
        return ActReport()
    if executor is not None:
        results = list(executor.map(lambda c: _apply(supply, c, fence), changes))
    else:
        with ThreadPoolExecutor(max_workers=min(MAX_PARALLEL, len(changes))) as pool:
            results = list(pool.map(lambda c: _apply(supply, c, fence), changes))
    done = [(c, r) for c, r in zip(changes, results, strict=True) if isinstance(r, SetResult)]
    failed = [(c, r) for c, r in zip(changes, results, strict=True) if isinstance(r, SupplyError)]
    return ActReport(done, failed)


def _apply(supply: SupplyRouter, change: Change, fence: Fence | None) -> SetResult | SupplyError:
    if fence is None:
        return _set(supply, change)
    fence.check()
    faults.hit("resize")
    with fencing.acting_under(fence.epoch, fence.tick):
        result = _set(supply, change)
    faults.hit("resized")
    return result


def _set(supply: SupplyRouter, change: Change) -> SetResult | SupplyError:
    try:
        return supply.set_desired(
            change.state.ref,
            change.desired,
            limits=ReplicaLimits.of(change.spec),
            override_policies=change.spec.override_policies,
            current=change.state,
        )
    except SupplyError as exc:
        return exc
