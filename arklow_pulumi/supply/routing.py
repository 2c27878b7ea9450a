"""Every target kind's binding behind one :class:`~arklow_pulumi.supply.contract.Supply`.

The router sends each group to the binding of its kind. A describe is split into *partitions*,
one per (kind, region) for Auto Scaling groups and per (kind, project) for managed instance
groups, described in parallel by a bounded thread pool; inside a partition the binding batches
as it always does (100 ASG names per call, aggregated MIG listings), so N ASGs in one region still
cost ⌈N/100⌉ describe calls. One partition failing does not hide the others:
:meth:`SupplyRouter.describe_partial` returns the failure per group (a failure naming one group
of a partition is that group's alone), and the plain
:meth:`SupplyRouter.describe` (the contract's) raises it.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar

from arklow_pulumi.core.limits import TARGET_KINDS
from arklow_pulumi.core.topology import GroupRef
from arklow_pulumi.supply.clients import LockedState
from arklow_pulumi.supply.contract import Supply
from arklow_pulumi.supply.errors import PermanentSupplyError, SupplyError
from arklow_pulumi.supply.groups import GroupState, Plan, SetResult
from arklow_pulumi.supply.selecting import EndpointConfig, supply_for

MAX_PARALLEL = 8
Partition = tuple[str, str | None]
T = TypeVar("T")
R = TypeVar("R")


def partition_of(ref: GroupRef) -> Partition:
    """Where a group's describe goes: its region (ASG) or its project (MIG)."""
    return (ref.kind, ref.region if ref.kind == "aws_asg" else ref.project)


def in_parallel(work: Callable[[T], R], items: Sequence[T], max_workers: int) -> list[R]:
    """``work`` over ``items``, at most ``max_workers`` at once, results in order."""
    if len(items) <= 1 or max_workers <= 1:
        return [work(item) for item in items]
    with ThreadPoolExecutor(max_workers=min(max_workers, len(items))) as pool:
        return list(pool.map(work, items))


@dataclass(frozen=True, slots=True)
class Described:
    """A describe over many partitions: the groups found, and the groups whose partition failed
    (a group absent from both does not exist)."""

    found: Mapping[GroupRef, GroupState]
    failed: Mapping[GroupRef, SupplyError] = field(default_factory=dict)
    calls: int = 0  # binding describe calls made (one per partition, and one more per group
    # whose own failure took it out of its partition's batch)


class SupplyRouter(LockedState):
    """A :class:`Supply` that routes each group to the binding of its kind."""

    def __init__(self, bindings: Mapping[str, Supply], *, max_workers: int = MAX_PARALLEL) -> None:
        self.bindings = dict(bindings)
        self.max_workers = max_workers
        self.describe_calls = 0
        self._lock = threading.Lock()

    @classmethod
    def of(cls, supply: Supply, *, max_workers: int = MAX_PARALLEL) -> SupplyRouter:
        """One binding for every kind (the in-memory one in tests and benchmarks)."""
        return cls(dict.fromkeys(TARGET_KINDS, supply), max_workers=max_workers)

    def binding(self, ref: GroupRef) -> Supply:
        found = self.bindings.get(ref.kind)
        if found is None:
            raise PermanentSupplyError(f"no supply binding for kind {ref.kind!r}", ref)
        return found

    # -- describing --------------------------------------------------------------------------

    def describe_partial(self, refs: Sequence[GroupRef], *, detail: bool = True) -> Described:
        parts: dict[Partition, list[GroupRef]] = defaultdict(list)
        for ref in dict.fromkeys(refs):
            parts[partition_of(ref)].append(ref)
        batches = list(parts.values())
        results = in_parallel(lambda b: self._describe_batch(b, detail), batches, self.max_workers)
        found: dict[GroupRef, GroupState] = {}
        failed: dict[GroupRef, SupplyError] = {}
        calls = 0
        for part in results:
            found.update(part.found)
            failed.update(part.failed)
            calls += part.calls
        with self._lock:
            self.describe_calls += calls
        return Described(found, failed, calls)

    def _describe_batch(self, batch: list[GroupRef], detail: bool) -> Described:
        """One partition's describe. A failure that names one group of the batch is that group's
        alone: the others are described again without it, so one broken group neither hides
        the rest nor lends them its message. A failure naming no group of the batch (the
        endpoint, the credentials) is every group's."""
        failed: dict[GroupRef, SupplyError] = {}
        remaining = list(batch)
        calls = 0
        while remaining:
            calls += 1
            try:
                found = self.binding(remaining[0]).describe(remaining, detail=detail)
            except SupplyError as exc:
                if exc.ref is not None and exc.ref in remaining and len(remaining) > 1:
                    failed[exc.ref] = exc
                    remaining.remove(exc.ref)
                    continue
                failed.update(dict.fromkeys(remaining, exc))
                return Described({}, failed, calls)
            return Described(found, failed, calls)
        return Described({}, failed, calls)

    def describe(
        self, refs: Sequence[GroupRef], *, detail: bool = True
    ) -> Mapping[GroupRef, GroupState]:
        described = self.describe_partial(refs, detail=detail)
        if described.failed:
            raise next(iter(described.failed.values()))
        return described.found

    # -- acting ------------------------------------------------------------------------------

    def apply(self, plan: Plan, current: GroupState) -> SetResult:
        return self.binding(plan.ref).apply(plan, current)


def router_from_env(
    config: EndpointConfig | None = None, *, max_workers: int = MAX_PARALLEL
) -> SupplyRouter:
    """Each kind's binding with endpoints from ``config`` (default: the environment)."""
    config = config or EndpointConfig.from_env()
    return SupplyRouter({k: supply_for(k, config) for k in TARGET_KINDS}, max_workers=max_workers)
