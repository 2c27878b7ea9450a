"""The one interface every supply binding implements, and helpers written against it only."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from arklow_pulumi.core.topology import GroupRef
from arklow_pulumi.supply.errors import GroupNotFound
from arklow_pulumi.supply.groups import GroupState, Plan, ReplicaLimits, SetResult


@runtime_checkable
class Supply(Protocol):
    """Describe many groups at once; set the size of one; apply a plan made beforehand.

    ``describe`` returns only the groups that exist (missing ones are absent from the mapping).
    With ``detail=False`` a binding may skip per-group look-ups it would otherwise make (an
    ASG's policies and scheduled actions: those fields are then ``None``).

    ``set_desired`` describes the group unless ``current`` is given, plans the change with
    :func:`~arklow_pulumi.supply.planning.plan_change` (so it refuses, making no write call, a
    count out of bounds or a group with policies of its own) and applies it only when it differs.
    Implementations hold configuration only and are picklable; clients are created lazily.
    """

    def describe(
        self, refs: Sequence[GroupRef], *, detail: bool = True
    ) -> Mapping[GroupRef, GroupState]: ...

    def set_desired(
        self,
        ref: GroupRef,
        replicas: int,
        *,
        limits: ReplicaLimits | None = None,
        override_policies: bool = False,
        current: GroupState | None = None,
    ) -> SetResult: ...

    def apply(self, plan: Plan, current: GroupState) -> SetResult:
        """Carry out ``plan`` (made by :func:`~arklow_pulumi.supply.planning.plan_change`
        against ``current``) and nothing else: no describe, no planning; no call when
        unchanged."""
        ...


def describe_one(supply: Supply, ref: GroupRef, *, detail: bool = True) -> GroupState:
    found = supply.describe([ref], detail=detail).get(ref)
    if found is None:
        raise GroupNotFound(ref)
    return found
