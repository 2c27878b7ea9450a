"""An in-memory supply for tests and benchmarks: the same contract as the clouds.

Groups are seeded with :meth:`InMemorySupply.add`. ASG-kind groups act like an ASG (hard
[min, max], policies); MIG-kind groups like a MIG (an optional autoscaler window). A cheap
describe (``detail=False``) leaves policies and scheduled actions out, as the AWS binding does.
Calls are counted in ``calls``: "describe" per cheap describe, "detail" per detailed one (the
policies looked up), "write" per write, so tests can prove a pass made no write.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace

from arklow_pulumi.core.policy import clamp
from arklow_pulumi.core.topology import GroupRef
from arklow_pulumi.supply.clients import LockedState
from arklow_pulumi.supply.errors import SupplyError
from arklow_pulumi.supply.groups import GroupState, Plan, SetResult


class InMemorySupply(LockedState):
    def __init__(self, groups: Sequence[GroupState] = ()) -> None:
        self.groups: dict[GroupRef, GroupState] = {g.ref: g for g in groups}
        self.calls: Counter[str] = Counter()
        self.fail_next: list[SupplyError] = []
        self._lock = threading.Lock()
        self._cheap_views: dict[GroupRef, tuple[GroupState, GroupState]] = {}

    def add(self, group: GroupState) -> GroupState:
        with self._lock:
            self.groups[group.ref] = group
        return group

    def _maybe_fail(self) -> None:
        if self.fail_next:
            raise self.fail_next.pop(0)

    def describe(
        self, refs: Sequence[GroupRef], *, detail: bool = True
    ) -> Mapping[GroupRef, GroupState]:
        with self._lock:
            self.calls["detail" if detail else "describe"] += 1
            self._maybe_fail()
            groups = self.groups
            found = {r: g for r in refs if (g := groups.get(r)) is not None}
        if detail:
            return found
        return {r: self._cheap(g) for r, g in found.items()}

    def _cheap(self, group: GroupState) -> GroupState:
        """``group`` as a cheap describe shows it (policies not looked up), made once per state
        of the group."""
        seen = self._cheap_views.get(group.ref)
        if seen is not None and seen[0] is group:
            return seen[1]
        view = replace(group, policies=None, scheduled_actions=None)
        self._cheap_views[group.ref] = (group, view)
        return view

    def apply(self, plan: Plan, current: GroupState) -> SetResult:
        if plan.method == "unchanged":
            return SetResult.of(plan, current)
        ref, replicas = plan.ref, plan.desired
        with self._lock:
            self.calls["write"] += 1
            self._maybe_fail()
            group = self.groups[ref]
            if plan.window is not None:
                low, high = plan.window
                size = clamp(group.desired, low, high)
                after = replace(group, min=low, max=high, desired=size, in_service=size)
            else:
                after = replace(group, desired=replicas, in_service=replicas)
            self.groups[ref] = after
        return SetResult.of(plan, after)
