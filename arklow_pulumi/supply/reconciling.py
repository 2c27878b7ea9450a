"""One reconcile pass: observe every group in one batched describe, then act where needed.

The controller calls :func:`reconcile_pass` each tick with its decisions (one replica count per
group). A pass makes one ``describe`` over all groups (cheap: no per-group policy look-ups), then
calls ``set_desired`` only for groups whose count differs, passing the described state so the
binding does not describe again. Bounds are checked by the binding's planner before any write:
a refused group is reported, never written. One group's failure does not stop the others.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from arklow_pulumi.core.topology import GroupRef, ScaleTarget
from arklow_pulumi.supply.contract import Supply
from arklow_pulumi.supply.errors import GroupNotFound, SupplyError
from arklow_pulumi.supply.groups import ReplicaLimits, SetResult
from arklow_pulumi.supply.planning import needs_change


@dataclass(frozen=True, slots=True)
class PassReport:
    """What a pass did: results of the writes made, groups left as they were, and failures."""

    changed: Mapping[GroupRef, SetResult] = field(default_factory=dict)
    unchanged: tuple[GroupRef, ...] = ()
    failed: Mapping[GroupRef, SupplyError] = field(default_factory=dict)
    describe_calls: int = 0
    set_calls: int = 0
    seconds: float = 0.0

    @property
    def converged(self) -> bool:
        return not self.failed


def reconcile_pass(
    supply: Supply,
    decisions: Mapping[GroupRef, int],
    *,
    targets: Mapping[GroupRef, ScaleTarget] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> PassReport:
    """Bring each group in ``decisions`` to its count; ``targets`` adds their bounds and
    ``override_policies``."""
    start = clock()
    refs = list(decisions)
    try:
        states = supply.describe(refs, detail=False)
    except SupplyError as exc:
        return PassReport(
            failed=dict.fromkeys(refs, exc), describe_calls=1, seconds=clock() - start
        )
    changed: dict[GroupRef, SetResult] = {}
    unchanged: list[GroupRef] = []
    failed: dict[GroupRef, SupplyError] = {}
    set_calls = 0
    for ref, replicas in decisions.items():
        state = states.get(ref)
        if state is None:
            failed[ref] = GroupNotFound(ref)
            continue
        if not needs_change(state, replicas):
            unchanged.append(ref)
            continue
        target = (targets or {}).get(ref)
        set_calls += 1
        try:
            result = supply.set_desired(
                ref,
                replicas,
                limits=ReplicaLimits.of(target) if target else None,
                override_policies=target.override_policies if target else False,
                current=state,
            )
        except SupplyError as exc:
            failed[ref] = exc
            continue
        if result.changed:
            changed[ref] = result
        else:
            unchanged.append(ref)
    return PassReport(changed, tuple(unchanged), failed, 1, set_calls, clock() - start)
