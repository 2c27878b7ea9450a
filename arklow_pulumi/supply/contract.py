"""The one interface every supply binding implements, and helpers written against it only."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from arklow_pulumi.core.topology import GroupRef
from arklow_pulumi.supply.errors import GroupNotFound
from arklow_pulumi.supply.groups import GroupState, Plan, SetResult


@runtime_checkable
class Supply(Protocol):
    """Describe many groups at once; apply a plan made beforehand.

    ``describe`` returns only the groups that exist (missing ones are absent from the mapping).
    With ``detail=False`` a binding may skip per-group look-ups it would otherwise make (an
    ASG's policies and scheduled actions: those fields are then ``None``).

    ``apply`` carries out a :class:`~arklow_pulumi.supply.groups.Plan` made by the pure planner
    (:func:`~arklow_pulumi.supply.planning.plan_change`) against ``current`` and nothing else:
    no describe, no planning, no call when the plan is ``unchanged``. Plans are made, and applied,
    by the one act path (:func:`~arklow_pulumi.supply.reconciling.reconcile_pass`), never by a
    binding. Implementations hold configuration only and are picklable; clients are created
    lazily.
    """

    def describe(
        self, refs: Sequence[GroupRef], *, detail: bool = True
    ) -> Mapping[GroupRef, GroupState]: ...

    def apply(self, plan: Plan, current: GroupState) -> SetResult: ...


def describe_one(supply: Supply, ref: GroupRef, *, detail: bool = True) -> GroupState:
    found = supply.describe([ref], detail=detail).get(ref)
    if found is None:
        raise GroupNotFound(ref)
    return found
