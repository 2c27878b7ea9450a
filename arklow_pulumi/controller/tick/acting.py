"""The act step of a tick: bring each group whose decided count differs from what it was asked
to run to that count, through the one act path; or, in dry-run, only say what would be done.

The targets to act on are picked against the group as the observe step described it
(:func:`changes_to_make`), so a group that already runs the decided count costs no call at all.
They then go through :func:`~arklow_pulumi.supply.reconciling.reconcile_pass` with that
describe: the groups whose policies the tick's cheap describe skipped are described again in
full, the pure planner (:func:`~arklow_pulumi.supply.planning.plan_change`, the one place
bounds and policy conflicts are enforced) refuses a count without any write, and the writes run
in parallel, each one fenced (:class:`~..leadership.fencing.Fence`). One group's failure never
stops the others.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from typing import Literal

from arklow_pulumi.controller.leadership.fencing import Fence
from arklow_pulumi.core.deciding import TargetDecision, TargetId
from arklow_pulumi.core.topology import ScaleTarget
from arklow_pulumi.supply.errors import SupplyError
from arklow_pulumi.supply.groups import GroupState, Plan, SetResult
from arklow_pulumi.supply.planning import needs_change, plan_change, plan_text
from arklow_pulumi.supply.reconciling import detailed, reconcile_pass
from arklow_pulumi.supply.routing import Described, SupplyRouter

MAX_PARALLEL = 8


@dataclass(frozen=True, slots=True)
class Change:
    target: TargetId
    spec: ScaleTarget
    state: GroupState
    desired: int

    @property
    def replaced(self) -> int | None:
        """The value the write replaces at the place it writes: an autoscaled MIG's autoscaler
        minimum (``None`` when it has none), else the group's target size."""
        return self.state.min if self.state.autoscaler else self.state.desired


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
    actions, which the tick's cheap describe skips) by the act path's own detail step, so a
    printed plan shows every refusal. Reads only; a group that cannot be described again keeps
    its first description (and a write planned against it is refused)."""
    if not changes:
        return ()
    found = detailed(
        supply, {c.state.ref: c.state for c in changes}, [c.state.ref for c in changes]
    ).found
    return tuple(replace(c, state=found.get(c.state.ref, c.state)) for c in changes)


def direction(change: Change, result: SetResult) -> Literal["up", "down"]:
    """Which way a write went: the value written against the value it replaced at that place,
    never against the group's size. An autoscaled MIG is written through its autoscaler's
    minimum, so a minimum raised from 3 to 4 while the group runs 4 is ``up``; a resize or an
    ASG's desired capacity compares the counts before and after."""
    before: int | None
    if result.window is not None and result.previous_window is not None:
        before, after = result.previous_window[0], result.window[0]
    elif change.state.autoscaler:
        before, after = change.replaced, result.desired
    else:
        before, after = result.previous, result.desired
    return "up" if before is None or after > before else "down"


def plan_of(change: Change) -> Plan | SupplyError:
    try:
        return plan_change(change.state, change.desired, change.spec)
    except SupplyError as exc:
        return exc


def describe_plan(changes: Sequence[Change]) -> list[str]:
    """One line per change, as dry-run prints it."""
    return [f"would {plan_text(f'{c.target} ({c.state.ref})', plan_of(c))}" for c in changes]


def apply_changes(
    supply: SupplyRouter,
    changes: Sequence[Change],
    fence: Fence | None = None,
    executor: Executor | None = None,
) -> ActReport:
    """Make ``changes`` through the act path, in parallel (at most :data:`MAX_PARALLEL` at
    once): on ``executor`` (a long-lived pool: no threads started per tick), or on a pool made
    for the call. Each write is fenced by ``fence``."""
    if not changes:
        return ActReport()
    by_ref = {c.state.ref: c for c in changes}
    guard: Callable[[], AbstractContextManager[object]] | None = (
        None if fence is None else fence.around_resize
    )
    report = reconcile_pass(
        supply,
        {ref: c.desired for ref, c in by_ref.items()},
        targets={ref: c.spec for ref, c in by_ref.items()},
        observed=Described({ref: c.state for ref, c in by_ref.items()}),
        guard=guard,
        executor=executor,
        max_workers=MAX_PARALLEL,
    )
    done = [(c, report.changed[c.state.ref]) for c in changes if c.state.ref in report.changed]
    failed = [(c, report.failed[c.state.ref]) for c in changes if c.state.ref in report.failed]
    return ActReport(done, failed)
