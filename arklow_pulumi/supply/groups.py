"""Values the supply bindings exchange: what a group looks like, limits, and what a change did."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from arklow_pulumi.core.topology import GroupRef, ScaleTarget

Method = Literal["resize", "set_desired_capacity", "autoscaler_window", "unchanged"]


def ref_json(ref: GroupRef) -> dict[str, object]:
    """How the supply's JSON names a group: its kind and name (the CLI's ``--format json``)."""
    return {"kind": ref.kind, "name": ref.name}


@dataclass(frozen=True, slots=True)
class GroupState:
    """A point-in-time view of one cloud group.

    ``min``/``max`` are the group's own bounds: an ASG's MinSize/MaxSize, a MIG autoscaler's
    window, ``None`` for a MIG without an autoscaler. ``policies`` and ``scheduled_actions`` are
    ``None`` when they were not looked up (a cheap describe), ``()`` when there are none.
    """

    ref: GroupRef
    desired: int
    in_service: int
    pending: int = 0
    min: int | None = None
    max: int | None = None
    autoscaler: bool = False
    policies: tuple[str, ...] | None = ()
    scheduled_actions: tuple[str, ...] | None = ()
    scale_in_protected: bool = False
    stable: bool = True
    autoscaler_link: str | None = None

    def as_json(self) -> dict[str, object]:
        """The shape ``arklow supply describe --format json`` prints."""
        return {
            **ref_json(self.ref),
            "desired": self.desired,
            "in_service": self.in_service,
            "pending": self.pending,
            "min": self.min,
            "max": self.max,
            "autoscaler": self.autoscaler,
            "policies": list(self.policies or ()),
            "scheduled_actions": list(self.scheduled_actions or ()),
            "scale_in_protected": self.scale_in_protected,
            "stable": self.stable,
        }


@dataclass(frozen=True, slots=True)
class ReplicaLimits:
    """What a change of one group may do: stay within [min_replicas, max_replicas] (``None``
    leaves that side unbounded) and, with ``override_policies``, set a group that has scaling
    policies of its own. A :class:`ScaleTarget` says the same with its fields of those names.

    An unbounded side is only ever skipped by the checks: no placeholder value stands in for it,
    so nothing of it can reach a cloud API.
    """

    min_replicas: int | None = None
    max_replicas: int | None = None
    override_policies: bool = False


# What the planner reads of a target: its [min_replicas, max_replicas] and override_policies.
Limits = ReplicaLimits | ScaleTarget


@dataclass(frozen=True, slots=True)
class Plan:
    """What a set would do to one group; computed without any call (used for --dry-run).

    ``previous`` is the group's target size before the change (for an autoscaled MIG too);
    ``window`` is an autoscaled MIG's [min, max] after it and ``previous_window`` the one before.
    """

    ref: GroupRef
    previous: int
    desired: int
    method: Method
    window: tuple[int, int] | None = None
    warnings: tuple[str, ...] = ()
    previous_window: tuple[int, int] | None = None

    def as_json(self) -> dict[str, object]:
        return {
            **ref_json(self.ref),
            "previous": self.previous,
            "desired": self.desired,
            "method": self.method,
            "window": list(self.window) if self.window else None,
            "previous_window": list(self.previous_window) if self.previous_window else None,
            "warnings": list(self.warnings),
        }


@dataclass(frozen=True, slots=True)
class SetResult(Plan):
    """What a set did: its plan (the method used, the counts before and after), the request's
    id, and the group afterwards."""

    request_id: str | None = None
    state: GroupState | None = None

    @property
    def changed(self) -> bool:
        return self.method != "unchanged"

    @classmethod
    def of(
        cls, plan: Plan, state: GroupState | None = None, request_id: str | None = None
    ) -> SetResult:
        fields = {name: getattr(plan, name) for name in Plan.__dataclass_fields__}
        return cls(**fields, request_id=request_id, state=state)
