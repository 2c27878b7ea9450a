"""One reconcile pass: observe every group in batches, plan once, then act where needed.

The controller's act step (and ``arklow supply`` tooling) calls :func:`reconcile_pass` with one
replica count per group and a :class:`~arklow_pulumi.supply.routing.SupplyRouter`:

1. **observe**: one cheap describe over all groups (no per-group policy look-ups), split by the
   router into partitions (region, project) described in parallel; each binding batches inside
   its partition (⌈N/100⌉ ASG describes, aggregated MIG listings). A tick that has described
   the groups already passes that describe in (``observed``) and pays for it once;
2. **detail**: only the groups whose count differs are described again with their policies and
   scheduled actions, so a conflict is refused before any write (a steady pass skips this);
3. **plan** (pure, :func:`~arklow_pulumi.supply.planning.plan_pass`): per group a write, nothing,
   or a refusal (missing, out of bounds, policy conflict);
4. **act**: the bindings apply the planned writes, in parallel across groups on a bounded thread
   pool, so slow retries on some groups do not hold up the rest. With ``dry_run`` this step is
   skipped and the report carries the plan (:meth:`PassReport.plan_lines`).

One group's failure never stops the others, and no write is made outside the planned ones.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from arklow_pulumi.core.topology import GroupRef, ScaleTarget
from arklow_pulumi.supply.errors import GroupNotFound, SupplyError
from arklow_pulumi.supply.groups import GroupState, Plan, SetResult
from arklow_pulumi.supply.planning import PassPlan, needs_change, plan_pass
from arklow_pulumi.supply.routing import Described, SupplyRouter, in_parallel


@dataclass(frozen=True, slots=True)
class PassReport:
    """What a pass did (or, with ``dry_run``, would do).

    ``changed`` holds the results of the writes made; ``plans`` every planned write (made or
    not); ``failed`` refusals and errors. ``describe_calls`` counts binding describe calls (one
    per partition and phase); ``set_calls`` the writes attempted.
    """

    changed: Mapping[GroupRef, SetResult] = field(default_factory=dict)
    unchanged: tuple[GroupRef, ...] = ()
    failed: Mapping[GroupRef, SupplyError] = field(default_factory=dict)
    describe_calls: int = 0
    set_calls: int = 0
    seconds: float = 0.0
    plans: Mapping[GroupRef, Plan] = field(default_factory=dict)
    dry_run: bool = False

    @property
    def converged(self) -> bool:
        return not self.failed and (not self.dry_run or not self.plans)

    def plan_lines(self) -> list[str]:
        """One line per group that would change or is refused, sorted by group."""
        lines = []
        for ref in sorted({*self.plans, *self.failed}):
            plan = self.plans.get(ref)
            if plan is None:
                lines.append(f"refuse {ref}: {self.failed[ref]}")
                continue
            window = f" window {list(plan.window)}" if plan.window else ""
            done = "" if self.dry_run else (" (failed)" if ref in self.failed else "")
            lines.append(f"{plan.method} {ref}: {plan.previous} -> {plan.desired}{window}{done}")
        return lines


def reconcile_pass(
    router: SupplyRouter,
    decisions: Mapping[GroupRef, int],
    *,
    targets: Mapping[GroupRef, ScaleTarget] | None = None,
    observed: Described | None = None,
    dry_run: bool = False,
    max_workers: int | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> PassReport:
    """Bring each group in ``decisions`` to its count; ``targets`` adds their bounds and
    ``override_policies``. ``observed`` is a cheap describe the caller already made this tick
    (the controller's observe step): the pass then makes no describe of its own for a group
    already at its count. See the module docstring for the steps."""
    start = clock()
    states, failed, describes = _observe(router, decisions, observed)
    plan = plan_pass(states, {r: n for r, n in decisions.items() if r not in failed}, targets)
    failed.update(plan.refused)
    if dry_run or not plan.changes:
        return _report(plan, {}, failed, describes, 0, clock() - start, dry_run)
    workers = router.max_workers if max_workers is None else max_workers

    def act(ref: GroupRef) -> SetResult | SupplyError:
        try:
            return router.apply(plan.changes[ref], states[ref])
        except SupplyError as exc:
            return exc

    refs = list(plan.changes)
    results = in_parallel(act, refs, workers)
    changed: dict[GroupRef, SetResult] = {}
    for ref, result in zip(refs, results, strict=True):
        if isinstance(result, SupplyError):
            failed[ref] = result
        else:
            changed[ref] = result
    return _report(plan, changed, failed, describes, len(refs), clock() - start, False)


def _observe(
    router: SupplyRouter, decisions: Mapping[GroupRef, int], observed: Described | None
) -> tuple[dict[GroupRef, GroupState], dict[GroupRef, SupplyError], int]:
    """(states, failures, describe calls): a cheap describe of all (unless ``observed`` covers
    them), a detailed one of the groups about to change whose policies it skipped."""
    calls = 0
    if observed is None or not decisions.keys() <= {*observed.found, *observed.failed}:
        observed = router.describe_partial(list(decisions), detail=False)
        calls = observed.calls
    states = {r: observed.found[r] for r in decisions if r in observed.found}
    failed = {r: observed.failed[r] for r in decisions if r in observed.failed}
    moving = [
        r
        for r, n in decisions.items()
        if r in states and states[r].policies is None and needs_change(states[r], n)
    ]
    if moving:
        detailed = router.describe_partial(moving, detail=True)
        calls += detailed.calls
        failed.update(detailed.failed)
        for ref in moving:
            if ref in detailed.found:
                states[ref] = detailed.found[ref]
            elif ref not in detailed.failed:  # gone between the two describes
                del states[ref]
                failed[ref] = GroupNotFound(ref)
            else:
                del states[ref]
    return states, failed, calls


def _report(
    plan: PassPlan,
    changed: Mapping[GroupRef, SetResult],
    failed: Mapping[GroupRef, SupplyError],
    describes: int,
    sets: int,
    seconds: float,
    dry_run: bool,
) -> PassReport:
    return PassReport(
        changed=changed,
        unchanged=plan.unchanged,
        failed=failed,
        describe_calls=describes,
        set_calls=sets,
        seconds=seconds,
        plans=plan.changes,
        dry_run=dry_run,
    )
