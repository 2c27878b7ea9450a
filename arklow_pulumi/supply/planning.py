"""Deciding how to apply a replica count to a group, before any call is made.

Pure: takes the group as described and the wanted count, returns a :class:`Plan` or raises a
refusal; it imports no SDK and makes no call. The one act path
(:func:`~arklow_pulumi.supply.reconciling.reconcile_pass`: the controller's act step,
``arklow supply set`` and the supply bench) plans every group through :func:`plan_pass`, which
calls :func:`plan_change`, so bounds and policy conflicts are enforced by the project in one place,
whatever the cloud API would accept (moto, for one, accepts any desired capacity).

- The target's [min_replicas, max_replicas] always binds (a ``None`` side is unbounded).
- A group's own maximum binds too: an ASG's MaxSize, an autoscaled MIG's ``maxNumReplicas``.
  An ASG's MinSize binds below; an autoscaled MIG has no floor of its own but 0, since its
  window min is what a count moves.
- An ASG with scaling policies is a conflict unless ``override_policies``. A write is never
  planned against a group whose policies were not looked up (a cheap describe): that is refused
  too, so a conflict cannot pass unseen.
- An autoscaled MIG is changed by setting its window's min to ``replicas`` and keeping its max:
  the autoscaler keeps acting above the decided floor, and the window is never widened upwards.
  It is unchanged when the window's min already equals ``replicas``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from arklow_pulumi.core.topology import GroupRef
from arklow_pulumi.supply.errors import (
    GroupNotFound,
    OutOfBounds,
    PermanentSupplyError,
    PolicyConflict,
    SupplyError,
)
from arklow_pulumi.supply.groups import GroupState, Limits, Method, Plan


def check_bounds(state: GroupState, replicas: int, limits: Limits | None) -> None:
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


def plan_change(state: GroupState, replicas: int, limits: Limits | None = None) -> Plan:
    """The change that would bring ``state`` to ``replicas`` within ``limits``; raises a refusal
    instead."""
    check_bounds(state, replicas, limits)
    override = limits is not None and limits.override_policies
    if state.policies and not override:
        raise PolicyConflict(state.ref, state.policies)
    warnings = _warnings(state, replicas)
    if state.autoscaler:
        plan = _window_plan(state, replicas, warnings)
    elif state.desired == replicas:
        return Plan(state.ref, state.desired, replicas, "unchanged", warnings=warnings)
    else:
        method: Method = "set_desired_capacity" if state.ref.kind == "aws_asg" else "resize"
        plan = Plan(state.ref, state.desired, replicas, method, warnings=warnings)
    if plan.method != "unchanged" and state.policies is None and not override:
        raise PermanentSupplyError(
            "the group's scaling policies were not looked up; nothing changed", state.ref
        )
    return plan


def plan_text(head: str, plan: Plan | SupplyError) -> str:
    """One planned write (or its refusal) as a dry run says it: ``<method> <head>: <previous> ->
    <desired>`` (and the autoscaler's window when it is set), or ``refuse <head>: <reason>``."""
    if isinstance(plan, SupplyError):
        return f"refuse {head}: {plan}"
    window = f" window {list(plan.window)}" if plan.window else ""
    return f"{plan.method} {head}: {plan.previous} -> {plan.desired}{window}"


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
    """What one pass would do: a :class:`Plan` per group in ``plans`` (method ``unchanged``
    where no write is needed), and a refusal (missing group, out of bounds, policy conflict) per
    group in ``refused``."""

    plans: Mapping[GroupRef, Plan] = field(default_factory=dict)
    refused: Mapping[GroupRef, SupplyError] = field(default_factory=dict)

    @property
    def changes(self) -> dict[GroupRef, Plan]:
        """The plans that make a write, in decision order."""
        return {r: p for r, p in self.plans.items() if p.method != "unchanged"}

    @property
    def unchanged(self) -> tuple[GroupRef, ...]:
        return tuple(r for r, p in self.plans.items() if p.method == "unchanged")


def plan_pass(
    states: Mapping[GroupRef, GroupState],
    decisions: Mapping[GroupRef, int],
    targets: Mapping[GroupRef, Limits] | None = None,
) -> PassPlan:
    """Plan every group of ``decisions`` against its described state (absent: not found) with
    :func:`plan_change`; ``targets`` gives each group's limits (none: only the group's own)."""
    plans: dict[GroupRef, Plan] = {}
    refused: dict[GroupRef, SupplyError] = {}
    limits_of = (targets or {}).get
    for ref, replicas in decisions.items():
        state = states.get(ref)
        if state is None:
            refused[ref] = GroupNotFound(ref)
            continue
        try:
            plans[ref] = plan_change(state, replicas, limits_of(ref))
        except SupplyError as exc:
            refused[ref] = exc
    return PassPlan(plans, refused)
