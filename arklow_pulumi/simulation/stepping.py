"""One unit on the simulated clock (:class:`UnitRun`), and units decided together (:class:`Batch`).

A unit's decision depends only on its lanes' demand, its groups' observations and its targets'
histories, and a history only through the highest recommendation in the scale-down window (the
scale policy's contract; the history is pruned exactly as ``decide`` filters it, and keeps only
recommendations no newer one reaches, so its first entry is the window's highest). When those are
the same as on the previous tick, the decision is the same: it is reused and the tick's figures
repeat (counted as a run length, :meth:`UnitRun.flush`).

``decide`` on several independent units at once gives each the decision it would get alone (no
lane or pool is shared between them), and one call on a few hundred lanes costs much less than
many calls on a few lanes each. So units of one topology are grouped in batches: when many of a
batch's units changed, one ``decide`` serves them all; when few did, each is decided alone.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Sequence
from itertools import repeat
from operator import add, mul

from arklow_pulumi.core.allocating import LaneResults
from arklow_pulumi.core.deciding import Decision, Observed, Recommendation, TargetId, decide
from arklow_pulumi.core.topology import Topology, frozen_map
from arklow_pulumi.simulation.policies import FAIR
from arklow_pulumi.simulation.sharing import pool_demands, proportional_shares
from arklow_pulumi.simulation.supplying import SimulatedGroup
from arklow_pulumi.simulation.units import Unit, demand_lane

Totals = tuple[float, float, float, float]  # one tick's Σ e, Σ allocation, Σ capacity, replicas


class UnitRun:
    """One unit's groups, histories and last decision, and its figures so far (in ticks)."""

    def __init__(self, unit: Unit, tick: float, launch_delay: float) -> None:
        self.unit = unit
        self.tick = tick
        self.delay = launch_delay
        self.groups = [SimulatedGroup(t) for _pool, t in unit.targets]
        self.ids = [TargetId(pool, t.name) for pool, t in unit.targets]
        pools = unit.topology.pools
        self.windows = [pools[pool].scale_policy.scale_down_window_s for pool, _t in unit.targets]
        self.pool_of_target = [unit.pool_names.index(pool) for pool, _t in unit.targets]
        self.slots = list(zip(self.pool_of_target, self.groups, strict=True))
        self.scaled = sorted(set(self.pool_of_target))  # pools with targets
        self.histories: list[deque[Recommendation]] = [deque() for _ in unit.targets]
        # the histories are kept in place, so one mapping serves every decision
        self.history: dict[TargetId, Sequence[Recommendation]] = dict(
            zip(self.ids, self.histories, strict=True)
        )
        # each lane's demand, in ``unit.lane_keys`` order (0 until its first row)
        self.values = [0.0] * len(unit.lane_keys)
        self.batch: Batch | None = None
        self.scenarios: list[int] = []  # the scenarios (by position) that count this unit
        self.version = 0
        self.key: Hashable = None
        self.settled = False  # see :meth:`advance`
        n, m = len(unit.lane_keys), len(unit.pool_names)
        self.e = [0.0] * n
        self.e_sum = 0.0
        self.e_version = -1  # the demand version ``e`` (and what follows from it) was computed for
        self.pool_demand: dict[str, float] = {}  # the proportional rule's scaling demand
        self.pools_used: list[float] = []  # each pool's Σ e × cost
        self.pool_demand_version = -1
        self.alloc = [0.0] * n
        self.capacity = [0.0] * m
        self.in_service = [0] * m
        self.recommended = [g.in_service for g in self.groups]
        self.desired = [g.in_service for g in self.groups]
        self.since = 0
        self.sum_e = [0.0] * n
        self.sum_alloc = [0.0] * n
        self.sum_capacity = [0.0] * m
        self.sum_replicas = [0.0] * m
        self.peak = [0] * m
        self.actions = 0
        self.totals: Totals = (0.0, 0.0, 0.0, 0.0)

    def check(self, k: int, now: float) -> bool:
        """Observe the groups; True (figures so far counted) when the decision must be renewed."""
        if self.groups:
            key: Hashable = (
                self.version,
                tuple([g.observe(now) for g in self.groups]),
                tuple([h[0].replicas if h else None for h in self.histories]),
            )
        else:
            key = self.version
        if key == self.key:
            return False
        self.flush(k)
        self.key = key
        return True

    def observed(self) -> dict[TargetId, Observed]:
        return dict(zip(self.ids, [g.observed() for g in self.groups], strict=True))

    def demand(self) -> dict[str, float]:
        """Each lane's demand, keyed as ``decide`` reads it."""
        return dict(zip(self.unit.lane_keys, self.values, strict=True))

    def decide_alone(self, now: float) -> None:
        if self.unit.rule == FAIR:
            decision = decide(
                self.unit.topology,
                self.demand(),
                self.observed(),
                self.history,
                now,
                admission=False,
            )
            self.take(decision)
        else:
            self._share(now)

    def take(self, decision: Decision) -> None:
        """This tick's figures and desired counts from a decision covering this unit."""
        unit = self._start()
        lanes = decision.allocation.lanes
        if isinstance(lanes, LaneResults):
            self.alloc = lanes.allocations(unit.lane_keys)
        else:
            self.alloc = [lanes[key].allocation for key in unit.lane_keys]
        pools = decision.allocation.pools
        self.capacity = [pools[name].capacity for name in unit.pool_names]
        if self.ids:
            self._targets(decision)

    def _start(self) -> Unit:
        unit = self.unit
        if self.e_version != self.version:  # e changes only with the demand
            self.e_version = self.version
            # min(demand, limit), as min() picks: the demand unless the limit is smaller
            pairs = zip(self.values, unit.limits, strict=True)
            self.e = e = [limit if limit < d else d for d, limit in pairs]
            self.e_sum = sum(e)
        if len(self.slots) == 1:  # as below, for one target
            p, group = self.slots[0]
            in_service = [0] * len(unit.pool_names)
            count = in_service[p] = group.in_service
            self.in_service = in_service
            if count > self.peak[p]:
                self.peak[p] = count
        elif self.groups:
            in_service = [0] * len(unit.pool_names)
            for p, group in self.slots:
                in_service[p] += group.in_service
            self.in_service = in_service
            peak = self.peak
            for p in self.scaled:  # a pool without targets runs no replicas
                count = in_service[p]
                if count > peak[p]:
                    peak[p] = count
        return unit

    def _targets(self, decision: Decision) -> None:
        targets, desired, recommended = decision.targets, self.desired, self.recommended
        for j, tid in enumerate(self.ids):
            target = targets[tid]
            if target.desired != desired[j]:
                self.actions += 1
                desired[j] = target.desired
            recommended[j] = target.recommended

    def _share(self, now: float) -> None:
        """free-for-all: capacity in proportion to demand; scaling by ``decide`` on one lane per
        pool carrying the pool's demand."""
        unit = self._start()
        pools = unit.topology.pools
        capacity = [pools[name].capacity for name in unit.pool_names]
        for j, (_pool, target) in enumerate(unit.targets):
            capacity[self.pool_of_target[j]] += self.groups[j].in_service * target.units_per_replica
        same = capacity == self.capacity and self.e_version == self.pool_demand_version
        self.capacity = capacity
        if not same:  # the shares follow e and the capacity only
            self._shares()
        decision = decide(
            unit.scaling, self.pool_demand, self.observed(), self.history, now, admission=False
        )
        self._targets(decision)

    def _shares(self) -> None:
        unit = self.unit
        if self.e_version != self.pool_demand_version:  # the pools' demand follows e
            self.pool_demand_version = self.e_version
            self.pools_used = pool_demands(self.e, unit.lane_pools, len(unit.pool_names))
            known = unit.scaling.lanes_by_key
            self.pool_demand = {
                demand_lane(name): self.pools_used[p]
                for p, name in enumerate(unit.pool_names)
                if demand_lane(name) in known
            }
        self.alloc = proportional_shares(self.e, unit.lane_pools, self.capacity, self.pools_used)

    def advance(self, k: int, now: float, *, settling: bool = True) -> bool:
        """Keep this tick's recommendations and resize the groups to the desired counts; True
        when the unit settles: demand unchanged, every later tick repeats this one (nothing
        pending, each history one entry equal to this tick's recommendation, each group at its
        desired count, and the next tick's check would find the key of the last decision).
        A settled unit is not checked nor advanced until its demand changes (then
        :meth:`catch_up`)."""
        # keep what the next tick's decide looks at (it reads r.at >= now - window)
        following = (k + 1) * self.tick
        settles = settling
        for history, replicas, window, desired, group in zip(
            self.histories, self.recommended, self.windows, self.desired, self.groups, strict=True
        ):
            # An older recommendation no higher than a newer one never decides the window's
            # highest (the newer one stays in the window longer): drop it, so the history is
            # decreasing and its first entry is the highest.
            while history and history[-1].replicas <= replicas:
                history.pop()
            history.append(Recommendation(now, replicas))
            horizon = following - window
            while history[0].at < horizon:
                history.popleft()
                if not history:
                    break
            if desired != group.in_service + group.pending_total:
                group.resize(desired, now, self.delay)
            if settles and (
                group.pending
                or len(history) != 1
                or history[0].replicas != replicas
                or desired != group.in_service
            ):
                settles = False
        if not settles:
            return False
        key = (
            self.version,
            tuple([(g.in_service, 0) for g in self.groups]),
            tuple([h[0].replicas for h in self.histories]),
        )
        return key == self.key

    def catch_up(self, k: int) -> None:
        """The state a settled unit would have after tick ``k - 1``: each history's one entry
        renewed at that tick (the skipped ticks changed nothing else)."""
        self.advance(k - 1, (k - 1) * self.tick, settling=False)

    def delta(self) -> Totals:
        """The change in this unit's per-tick totals since it was last decided."""
        new = (self.e_sum, sum(self.alloc), sum(self.capacity), float(sum(self.in_service)))
        old, self.totals = self.totals, new
        return (new[0] - old[0], new[1] - old[1], new[2] - old[2], new[3] - old[3])

    def flush(self, k: int) -> None:
        """Count the current per-tick figures for every tick since the last flush, up to ``k``.

        A lane without demand adds ``0 × n`` (its allocation is 0 then too): its sum, never
        negative, is unchanged by the addition, so no lane needs a test.
        """
        n = k - self.since
        self.since = k
        if n <= 0:
            return
        times = repeat(n)
        # s + x × n for each lane (pool), in C: the same two operations per element
        self.sum_e = list(map(add, self.sum_e, map(mul, self.e, times)))
        self.sum_alloc = list(map(add, self.sum_alloc, map(mul, self.alloc, times)))
        self.sum_capacity = list(map(add, self.sum_capacity, map(mul, self.capacity, times)))
        if self.groups:  # a unit without targets has no replicas: its sums stay 0
            self.sum_replicas = list(map(add, self.sum_replicas, map(mul, self.in_service, times)))


class Batch:
    """Units of one topology under the fair rule, decided by one call when many changed."""

    def __init__(self, runs: Sequence[UnitRun]) -> None:
        self.runs = list(runs)
        for r in runs:
            r.batch = self
        self.scaling = [r for r in runs if r.groups]
        self.lanes = sum(len(r.unit.lane_keys) for r in runs)
        # units without groups are decided again only when their demand changed (and at first)
        self.dirty: dict[UnitRun, None] = {r: None for r in runs if not r.groups}
        # settled units whose demand changed: their skipped ticks are caught up before the next
        self.woken: list[UnitRun] = []
        # every unit's histories (kept in place): a decision reads only the changed units' part
        self.history: dict[TargetId, Sequence[Recommendation]] = {}
        for r in runs:
            self.history.update(r.history)
        self.topology: Topology | None = None
        if len(runs) > 1:
            self.topology = Topology(
                destinations=frozen_map(
                    (n, d) for r in runs for n, d in r.unit.topology.destinations.items()
                ),
                pools=frozen_map((n, p) for r in runs for n, p in r.unit.topology.pools.items()),
                memberships=frozen_map(
                    kv for r in runs for kv in r.unit.topology.memberships.items()
                ),
            )

    def step(self, k: int, now: float) -> list[UnitRun]:
        """Advance every unit one tick; the units whose decision was renewed."""
        if self.woken:
            for r in self.woken:
                r.catch_up(k)
            self.woken.clear()
        awake = [r for r in self.scaling if not r.settled]
        changed = [r for r in awake if r.check(k, now)]
        if self.dirty:
            changed += [r for r in self.dirty if r.check(k, now)]
            self.dirty.clear()
        if changed:
            lanes = sum(len(r.unit.lane_keys) for r in changed)
            if self.topology is not None and len(changed) > 1 and 3 * lanes >= self.lanes:
                self._decide_together(changed, now)
            else:
                for r in changed:
                    r.decide_alone(now)
        for r in awake:
            r.settled = r.advance(k, now)
        return changed

    def demand_changed(self, run: UnitRun) -> None:
        if not run.groups:
            self.dirty[run] = None
        elif run.settled:
            run.settled = False
            self.woken.append(run)

    def _decide_together(self, changed: Sequence[UnitRun], now: float) -> None:
        """One ``decide`` for the changed units (the others get defaults; their part is unused)."""
        assert self.topology is not None
        demand: dict[str, float] = {}
        observed: dict[TargetId, Observed] = {}
        for r in changed:
            demand.update(zip(r.unit.lane_keys, r.values, strict=True))
            if r.groups:
                observed.update(zip(r.ids, [g.observed() for g in r.groups], strict=True))
        decision = decide(self.topology, demand, observed, self.history, now, admission=False)
        for r in changed:
            r.take(decision)


def batches(runs: Sequence[UnitRun], lanes: int) -> list[Batch]:
    """Fair units in batches of about ``lanes`` lanes, in order; other units alone. The units
    given must come from one topology (their names do not clash)."""
    out: list[Batch] = []
    pending: list[UnitRun] = []
    size = 0
    for r in runs:
        if r.unit.rule != FAIR:
            out.append(Batch([r]))
            continue
        pending.append(r)
        size += len(r.unit.lane_keys)
        if size >= lanes:
            out.append(Batch(pending))
            pending, size = [], 0
    if pending:
        out.append(Batch(pending))
    return out
