"""The one act path: observe the groups, plan once (pure), then apply where needed.

Every write to a cloud group goes through :func:`reconcile_pass`: the controller's act step
(:mod:`arklow_pulumi.controller.tick.acting`), ``arklow supply set`` and the supply bench. It
takes one replica count per group, each group's limits, and a
:class:`~arklow_pulumi.supply.routing.SupplyRouter`:

1. **observe**: one cheap describe over all groups (no per-group policy look-ups), split by the
   router into partitions (region, project) described in parallel; each binding batches inside
   its partition (⌈N/100⌉ ASG describes, aggregated MIG listings). A caller that has described
   the groups already (the controller's observe step) passes that describe in (``observed``) and
   pays for it once; ``detail=True`` makes this describe a detailed one (``arklow supply set``:
   one group, its policies looked up at once);
2. **detail**: the groups whose count differs and whose policies the describe skipped are
   described again with their policies and scheduled actions (:func:`detailed`), so a conflict is
   refused before any write (a steady pass skips this);
3. **plan** (pure, :func:`~arklow_pulumi.supply.planning.plan_pass`): per group a
   :class:`~arklow_pulumi.supply.groups.Plan` (a write, or ``unchanged``) or a refusal (missing,
   out of bounds, policy conflict);
4. **apply**: the bindings carry out the planned writes (``Supply.apply``), in parallel across
   groups on a bounded thread pool (or the caller's ``executor``), so slow retries on some groups
   do not hold up the rest. Each write runs inside ``guard()`` when one is given (the controller's
   fence: the lease epoch checked right before the call, the fencing token set around it) and in
   a copy of the caller's context (a :func:`~arklow_pulumi.supply.fencing.acting_under` around
   the pass holds in every worker). With ``dry_run`` this step is skipped and the report carries
   the plan (``plans``).

One group's failure never stops the others, and no write is made outside the planned ones. An
exception that is no :class:`~arklow_pulumi.supply.errors.SupplyError` (a guard's lost lease, a
deadline) ends the pass and propagates.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field

from arklow_pulumi.core.topology import GroupRef
from arklow_pulumi.supply.errors import GroupNotFound, SupplyError
from arklow_pulumi.supply.groups import GroupState, Limits, Plan, SetResult
from arklow_pulumi.supply.planning import PassPlan, needs_change, plan_pass
from arklow_pulumi.supply.routing import Described, SupplyRouter, in_parallel

# Entered around each write (and nothing else); may raise to stop it being sent.
Guard = Callable[[], AbstractContextManager[object]]


@dataclass(frozen=True, slots=True)
class PassReport:
    """What a pass did (or, with ``dry_run``, would do).

    ``plans`` holds every group's plan (``unchanged`` where no write was needed), ``changed``
    the results of the writes made, ``failed`` refusals and errors, ``states`` the groups as
    described for the plans. ``describe_calls`` counts binding describe calls (one per partition
    and phase); ``set_calls`` the writes attempted.
    """

    changed: Mapping[GroupRef, SetResult] = field(default_factory=dict)
    unchanged: tuple[GroupRef, ...] = ()
    failed: Mapping[GroupRef, SupplyError] = field(default_factory=dict)
    describe_calls: int = 0
    set_calls: int = 0
    seconds: float = 0.0
    plans: Mapping[GroupRef, Plan] = field(default_factory=dict)
    dry_run: bool = False
    states: Mapping[GroupRef, GroupState] = field(default_factory=dict)

    @property
    def converged(self) -> bool:
        """No failure, and (dry run) no write left to make."""
        if self.failed:
            return False
        return not self.dry_run or all(p.method == "unchanged" for p in self.plans.values())

    def result(self, ref: GroupRef) -> SetResult:
        """What the pass did to ``ref``: the write's result, or an unchanged one; raises the
        group's refusal or error."""
        error = self.failed.get(ref)
        if error is not None:
            raise error
        done = self.changed.get(ref)
        return done if done is not None else SetResult.of(self.plans[ref], self.states.get(ref))


def reconcile_pass(
    router: SupplyRouter,
    decisions: Mapping[GroupRef, int],
    *,
    targets: Mapping[GroupRef, Limits] | None = None,
    observed: Described | None = None,
    detail: bool = False,
    dry_run: bool = False,
    guard: Guard | None = None,
    executor: Executor | None = None,
    max_workers: int | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> PassReport:
    """Bring each group in ``decisions`` to its count within its ``targets`` limits (a
    :class:`~arklow_pulumi.core.topology.ScaleTarget` or
    :class:`~arklow_pulumi.supply.groups.ReplicaLimits`; a group without one is bound by its
    own bounds only). See the module docstring for the steps and the other arguments."""
    start = clock()
    seen = _observe(router, decisions, observed, detail)
    states, describes = seen.found, seen.calls
    failed = dict(seen.failed)
    plan = plan_pass(states, {r: n for r, n in decisions.items() if r not in failed}, targets)
    failed.update(plan.refused)
    writes = plan.changes
    if dry_run or not writes:
        return _report(plan, states, {}, failed, describes, 0, clock() - start, dry_run)

    def act(ref: GroupRef) -> SetResult | SupplyError:
        with guard() if guard is not None else nullcontext():
            try:
                return router.apply(writes[ref], states[ref])
            except SupplyError as exc:
                return exc

    refs = list(writes)
    results = _run(act, refs, executor, router.max_workers if max_workers is None else max_workers)
    changed: dict[GroupRef, SetResult] = {}
    for ref, result in zip(refs, results, strict=True):
        if isinstance(result, SupplyError):
            failed[ref] = result
        else:
            changed[ref] = result
    return _report(plan, states, changed, failed, describes, len(refs), clock() - start, False)


def _run(
    act: Callable[[GroupRef], SetResult | SupplyError],
    refs: Sequence[GroupRef],
    executor: Executor | None,
    max_workers: int,
) -> list[SetResult | SupplyError]:
    """``act`` over ``refs``, each in a copy of the caller's context, results in order."""
    contexts = [contextvars.copy_context() for _ in refs]

    def one(k: int) -> SetResult | SupplyError:
        return contexts[k].run(act, refs[k])

    if executor is not None and len(refs) > 1:
        return list(executor.map(one, range(len(refs))))
    return in_parallel(one, range(len(refs)), max_workers)


def detailed(
    router: SupplyRouter, states: Mapping[GroupRef, GroupState], refs: Sequence[GroupRef]
) -> Described:
    """``states`` with the groups of ``refs`` whose policies were not looked up described again
    in full (``calls``: the describe calls that took). A group that is gone now, or whose
    partition failed, moves from the states found to the failures."""
    out = dict(states)
    moving = [r for r in refs if r in out and out[r].policies is None]
    if not moving:
        return Described(out)
    described = router.describe_partial(moving, detail=True)
    failed: dict[GroupRef, SupplyError] = {}
    for ref in moving:
        found = described.found.get(ref)
        if found is not None:
            out[ref] = found
        else:
            del out[ref]
            failed[ref] = described.failed.get(ref) or GroupNotFound(ref)
    return Described(out, failed, described.calls)


def _observe(
    router: SupplyRouter,
    decisions: Mapping[GroupRef, int],
    observed: Described | None,
    detail: bool,
) -> Described:
    """A describe of all (unless ``observed`` covers them), then a detailed one of the groups
    about to change whose policies it skipped; ``calls`` counts both."""
    calls = 0
    if observed is None or not decisions.keys() <= {*observed.found, *observed.failed}:
        observed = router.describe_partial(list(decisions), detail=detail)
        calls = observed.calls
    states = {r: observed.found[r] for r in decisions if r in observed.found}
    failed = {r: observed.failed[r] for r in decisions if r in observed.failed}
    moving = [r for r, n in decisions.items() if r in states and needs_change(states[r], n)]
    seen = detailed(router, states, moving)
    failed.update(seen.failed)
    return Described(seen.found, failed, calls + seen.calls)


def _report(
    plan: PassPlan,
    states: Mapping[GroupRef, GroupState],
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
        plans=plan.plans,
        dry_run=dry_run,
        states=states,
    )
