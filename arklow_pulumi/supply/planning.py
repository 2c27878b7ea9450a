"""Deciding how to apply a replica count to a group, before any call is made.

Pure: takes the group as described and the wanted count, returns a :class:`Plan` or raises a
refusal. Every binding (AWS, GCP, in-memory) and ``arklow supply set --dry-run`` go through
:func:`plan_change`, so bounds and policy conflicts are enforced by the project in one place,
whatever the cloud API would accept (moto, for one, accepts any desired capacity).

- The target's [min_replicas, max_replicas] always binds (a ``None`` side is unbounded).
- A group's own maximum binds too: an ASG's MaxSize, an autoscaled MIG's ``maxNumReplicas``.
  An ASG's MinSize binds below; an autoscaled MIG has no floor of its own but 0, since its
  window min is what a count moves.
- An ASG with scaling policies is a conflict unless ``override_policies``.
- An autoscaled MIG is changed by setting its window's min to ``replicas`` and keeping its max:
  the autoscaler keeps acting above the decided floor, and the window is never widened upwards.
  It is unchanged when the window's min already equals ``replicas``.

:func:`plan_pass` plans a whole reconcile pass the same way: one :class:`PassPlan` saying, per
group, the write to make, that none is needed, or why it is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from arklow_pulumi.core.topology import GroupRef, ScaleTarget
from arklow_pulumi.supply.errors import GroupNotFound, OutOfBounds, PolicyConflict, SupplyError
from arklow_pulumi.supply.groups import GroupState, Method, Plan, ReplicaLimits


def check_bounds(state: GroupState, replicas: int, limits: ReplicaLimits | None) -> None:
    """Refuses ``replicas`` outside the target's or the group's bounds; ``None`` bounds are
    skipped."""
    ref = state.ref
    if replicas < 0:
        raise OutOfBounds(ref, replicas, 0, max(0, replicas), "non-negative")
    if limits is not None:
        low, high = limits.min_replicas, limits.max_replicas
        if (low is not None and replicas < low) or (high is not None and replicas > high):
            raise OutOfBounds(ref, replicas, low or 0, high, "target's")
    # An autoscaled MIG's window min is the lever a count moves: only its max binds.
    low = 0 if state.autoscaler else state.min
    if (low is not None and replicas < low) or (state.max is not None and replicas > state.max):
        raise OutOfBounds(ref, replicas, low or 0, state.max, "group's")


def plan_change(
    state: GroupState,
    replicas: int,
    limits: ReplicaLimits | None = None,
    override_policies: bool = False,
) -> Plan:
    """The change that would bring ``state`` to ``replicas``; raises a refusal instead."""
    check_bounds(state, replicas, limits)
    if state.policies and not override_policies:
        raise PolicyConflict(state.ref, state.policies)
    warnings = _warnings(state, replicas)
    if state.autoscaler:
        return _window_plan(state, replicas, warnings)
    if state.desired == replicas:
        return Plan(state.ref, state.desired, replicas, "unchanged", warnings=warnings)
    method: Method = "set_desired_capacity" if state.ref.kind == "aws_asg" else "resize"
    return Plan(state.ref, state.desired, replicas, method, warnings=warnings)


def needs_change(state: GroupState, replicas: int) -> bool:
    """Whether applying ``replicas`` would make a write call (bounds aside)."""
    if state.autoscaler:
        return state.min != replicas
    return state.desired != replicas


def _window_plan(state: GroupState, replicas: int, warnings: tuple[str, ...]) -> Plan:
    """The window's min becomes ``replicas``; its max stays (check_bounds kept replicas under
    it). ``previous`` is the group's target size; the old window is ``previous_window``."""
    high = state.max if state.max is not None else replicas
    old = (state.min, state.max) if state.min is not None and state.max is not None else None
    method: Method = "unchanged" if state.min == replicas else "autoscaler_window"
    return Plan(state.ref, state.desired, replicas, method, (replicas, high), warnings, old)


def _warnings(state: GroupState, replicas: int) -> tuple[str, ...]:
    out: list[str] = []
    if state.policies:
        out.append(f"overriding scaling policies: {', '.join(state.policies)}")
    if state.scheduled_actions:
        out.append(
            f"scheduled actions may change the size later: {', '.join(state.scheduled_actions)}"
        )
    if state.scale_in_protected and replicas < state.in_service:
        out.append("instances are protected from scale-in: the group may not shrink")
    return tuple(out)


@dataclass(frozen=True, slots=True)
class PassPlan:
    """What one reconcile pass would do: a write per group in ``changes``, nothing for the
    groups in ``unchanged``, and a refusal (missing group, out of bounds, policy conflict) for
    the groups in ``refused``."""

    changes: Mapping[GroupRef, Plan] = field(default_factory=dict)
    unchanged: tuple[GroupRef, ...] = ()
    refused: Mapping[GroupRef, SupplyError] = field(default_factory=dict)


def plan_pass(
    states: Mapping[GroupRef, GroupState],
    decisions: Mapping[GroupRef, int],
    targets: Mapping[GroupRef, ScaleTarget] | None = None,
) -> PassPlan:
    """Plan every group of ``decisions`` against its described state (absent: not found).
    ``targets`` adds each group's bounds and ``override_policies``."""
    changes: dict[GroupRef, Plan] = {}
    unchanged: list[GroupRef] = []
    refused: dict[GroupRef, SupplyError] = {}
    for ref, replicas in decisions.items():
        state = states.get(ref)
        if state is None:
            refused[ref] = GroupNotFound(ref)
            continue
        if not needs_change(state, replicas):
            unchanged.append(ref)
            continue
        target = (targets or {}).get(ref)
        limits = ReplicaLimits.of(target) if target else None
        try:
            plan = plan_change(state, replicas, limits, bool(target and target.override_policies))
        except SupplyError as exc:
            refused[ref] = exc
            continue
        if plan.method == "unchanged":
            unchanged.append(ref)
        else:
            changes[ref] = plan
    return PassPlan(changes, tuple(unchanged), refused)
