"""Deciding how to apply a replica count to a group, before any call is made.

Pure: takes the group as described and the wanted count, returns a :class:`Plan` or raises a
refusal. Every binding (AWS, GCP, in-memory) and ``arklow supply set --dry-run`` go through
:func:`plan_change`, so bounds and policy conflicts are enforced by the project in one place,
whatever the cloud API would accept (moto, for one, accepts any desired capacity).

- The target's [min_replicas, max_replicas] always binds.
- A group with hard bounds of its own (an ASG's MinSize/MaxSize) binds too. A MIG autoscaler's
  window does not: moving that window is how a count is applied to an autoscaled MIG.
- An ASG with scaling policies is a conflict unless ``override_policies``.
- An autoscaled MIG is changed by moving its window to ``[replicas, max(replicas, high)]`` where
  ``high`` is the target's max_replicas (or the current window max): the autoscaler keeps acting
  above the decided floor. It is unchanged when the window's min already equals ``replicas``.
"""

from __future__ import annotations

from arklow_pulumi.supply.errors import OutOfBounds, PolicyConflict
from arklow_pulumi.supply.groups import GroupState, Method, Plan, ReplicaLimits


def check_bounds(state: GroupState, replicas: int, limits: ReplicaLimits | None) -> None:
    ref = state.ref
    if replicas < 0:
        raise OutOfBounds(ref, replicas, 0, max(0, replicas), "non-negative")
    if limits is not None and not limits.min_replicas <= replicas <= limits.max_replicas:
        raise OutOfBounds(ref, replicas, limits.min_replicas, limits.max_replicas, "target's")
    if state.autoscaler or state.min is None or state.max is None:
        return
    if not state.min <= replicas <= state.max:
        raise OutOfBounds(ref, replicas, state.min, state.max, "group's")


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
        return _window_plan(state, replicas, limits, warnings)
    if state.desired == replicas:
        return Plan(state.ref, state.desired, replicas, "unchanged", warnings=warnings)
    method: Method = "set_desired_capacity" if state.ref.kind == "aws_asg" else "resize"
    return Plan(state.ref, state.desired, replicas, method, warnings=warnings)


def needs_change(state: GroupState, replicas: int) -> bool:
    """Whether applying ``replicas`` would make a write call (bounds aside)."""
    if state.autoscaler:
        return state.min != replicas
    return state.desired != replicas


def _window_plan(
    state: GroupState, replicas: int, limits: ReplicaLimits | None, warnings: tuple[str, ...]
) -> Plan:
    previous = state.min if state.min is not None else state.desired
    if state.min == replicas:
        window = (replicas, state.max if state.max is not None else replicas)
        return Plan(state.ref, previous, replicas, "unchanged", window, warnings)
    high = limits.max_replicas if limits is not None else (state.max or replicas)
    return Plan(
        state.ref,
        previous,
        replicas,
        "autoscaler_window",
        (replicas, max(replicas, high)),
        warnings,
    )


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
