"""One unit on the simulated clock (:class:`UnitRun`); units decided together: :mod:`.batching`.

A unit's decision depends only on its lanes' demand, its groups' observations and its targets'
histories, and a history only through the highest recommendation in the scale-down window (the
scale policy's contract; the history is pruned exactly as ``decide`` filters it, and keeps only
recommendations no newer one reaches, so its first entry is the window's highest). When those are
the same as on the previous tick, the decision is the same: it is reused and the tick's figures
repeat (counted as a run length, :meth:`UnitRun.flush`). The single-tick rule reads no history
at all, so the key holds for it too (it only renews a little more often than it must).

A unit run may start mid-replay (``start``, what-if's ``--change-at``): on its first tick its
groups take over the state of the groups it carries (:meth:`UnitRun.activate`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import add, mul, sub
from typing import Protocol

from arklow_pulumi.core.allocating import lane_caps, pool_pressure, pool_sums
from arklow_pulumi.core.autoscalers import DEFAULT_AUTOSCALERS
from arklow_pulumi.core.deciding import (
    Decision,
    Observed,
    Recommendation,
    TargetId,
    decide,
    pool_capacity,
)
from arklow_pulumi.core.policy import Move, guarding, history_horizon
from arklow_pulumi.simulation.columns import COUNTS, TOTAL_COLUMNS, UNITS, Sums, lane_columns
from arklow_pulumi.simulation.policies import CLOUD, PROPORTIONAL, SINGLE_TICK
from arklow_pulumi.simulation.sharing import proportional_shares
from arklow_pulumi.simulation.supplying import SimulatedGroup
from arklow_pulumi.simulation.units import Unit, demand_lane


class Owner(Protocol):
    """The batch a unit run is decided in (:class:`.batching.Batch`)."""

    def demand_changed(self, run: UnitRun) -> None: ...


@dataclass(slots=True)
class Carry:
    """Where a target of a run that starts mid-replay takes its group's state from."""

    target: int  # the target's position in its run
    source: UnitRun
    source_target: int


class UnitRun:
    """One unit's groups, histories and last decision, and its figures so far (in ticks)."""

    def __init__(
        self,
        unit: Unit,
        tick: float,
        launch_delay: float,
        *,
        admission: bool = True,
        start: int = 0,
        detail: bool = False,
    ) -> None:
        self.unit = unit
        self.tick = tick
        self.delay = launch_delay
        self.admission = admission
        self.detail = detail  # keep each pool's served units per tick (for charts)
        self.start = start  # the first tick it is stepped
        self.carry: list[Carry] = []
        self.groups = [SimulatedGroup(t) for _pool, t in unit.targets]
        self.ids = [TargetId(pool, t.name) for pool, t in unit.targets]
        pools = unit.topology.pools
        self.policies = [pools[pool].scale_policy for pool, _t in unit.targets]
        self.windows = [p.scale_down_window_s for p in self.policies]
        self.pool_of_target = [unit.pool_names.index(pool) for pool, _t in unit.targets]
        self.slots = list(zip(self.pool_of_target, self.groups, strict=True))
        self.scaled = sorted(set(self.pool_of_target))  # pools with targets
        # per pool: its static capacity, its targets' groups and units per replica
        self.supply: list[tuple[float, list[SimulatedGroup], list[float]]] = [
            (pools[name].capacity, [], []) for name in unit.pool_names
        ]
        for p, group, (_pool, target) in zip(
            self.pool_of_target, self.groups, unit.targets, strict=True
        ):
            self.supply[p][1].append(group)
            self.supply[p][2].append(target.units_per_replica)
        self.histories: list[deque[Recommendation]] = [deque() for _ in unit.targets]
        # the histories are kept in place, so one mapping serves every decision
        self.history: dict[TargetId, Sequence[Recommendation]] = dict(
            zip(self.ids, self.histories, strict=True)
        )
        # each target's last move, as its decisions return it (a batch shares one mapping)
        self.moves: dict[TargetId, Move] = {}
        # under the cloud-autoscaler rule: since when each recommendation stood above its count
        self.above: dict[TargetId, float] = {}
        self.cloud = DEFAULT_AUTOSCALERS if unit.rule == CLOUD else None
        # each lane's demand, in ``unit.lane_keys`` order (0 until its first row)
        self.values = [0.0] * len(unit.lane_keys)
        self.batch: Owner | None = None
        # its lanes' figures out of a column of its batch's decision (:func:`.columns.picker`),
        # or None when it is decided alone
        self.pick: Callable[[Sequence[float]], Sequence[float]] | None = None
        self.scenarios: list[int] = []  # the scenarios (by position) that count this unit
        self.version = 0
        self.key: Hashable = None
        self.settled = False  # see :meth:`advance`
        n, m = len(unit.lane_keys), len(unit.pool_names)
        self.resources = [pools[name].resource for name in unit.pool_names]
        slot: dict[str, int] = {}
        self.resource_slot = [slot.setdefault(r, len(slot)) for r in self.resources]
        self.resource_names = list(slot)
        self.per_resource = COUNTS + (UNITS if detail else 0)
        # its totals' columns in its shard's series (:meth:`place`): the four, then its blocks
        self.cols: list[int] = []
        self.e: Sequence[float] = [0.0] * n
        self.e_sum = 0.0
        self.e_version = -1  # the demand version ``e`` (and what follows from it) was computed for
        self.pool_demand: dict[str, float] = {}  # the proportional rule's scaling demand
        self.pools_used: list[float] = []  # each pool's Σ e × cost
        self.pool_demand_version = -1
        self.alloc: Sequence[float] = [0.0] * n
        self.admit: Sequence[float] = self.alloc
        self.capacity = [0.0] * m
        self.pool_units = [0.0] * m  # this tick's Σ e × cost per pool
        self.pool_served = [0.0] * m  # Σ allocation × cost per pool
        self.constrained = [0] * m  # 1 for a constrained pool
        self.at_max = [1] * m  # 1 for a pool whose every target runs its max in service
        self.in_service = [0] * m
        self.seen = tuple([(g.in_service, 0) for g in self.groups])  # as the tick observed
        self.recommended = [g.in_service for g in self.groups]
        self.desired = [g.in_service for g in self.groups]
        self.reasons: list[str] = ["on-target"] * len(self.groups)  # the last decision's
        self.since = start
        self.lane_now: list[float] = [0.0] * (3 * n)  # this tick's figures, as Sums.lanes
        self.pool_now: list[float] = [0.0] * (4 * m)  # and as Sums.pools
        self.sums = Sums.zero(n, m)
        self.kept: dict[int, Sums] = {}  # per scenario it stopped counting for: its figures then
        self.totals = (0.0, 0.0, 0.0, 0.0)  # the four last counted
        self.block = [0.0] * (self.per_resource * len(slot))  # its resources' columns, too

    def place(self, columns: dict[str, int]) -> None:
        """Its totals' columns, given the first column of each resource in its shard's series."""
        self.cols = list(TOTAL_COLUMNS)
        for name in self.resource_names:
            first = columns[name]
            self.cols += range(first, first + self.per_resource)

    def check(self, k: int, now: float) -> bool:
        """Observe the groups; True (figures so far counted) when the decision must be renewed."""
        if self.groups:
            seen = tuple([g.observe(now) for g in self.groups])
            key: Hashable = (
                self.version,
                seen,
                tuple([h[0].replicas if h else None for h in self.histories]),
                self._guards(now),
                # the autoscalers' models read their periods' history and alarms: renewed always
                k if self.cloud is not None else None,
            )
        else:
            seen = ()
            key = self.version
        if key == self.key:
            return False
        self.flush(k)
        self.key = key
        self.seen = seen
        return True

    def _guards(self, now: float) -> tuple[int, ...]:
        """Per target, the direction of a last move still inside its window (0 when none)."""
        get = self.moves.get
        pairs = zip(self.ids, self.windows, strict=True)
        return tuple([guarding(get(tid), window, now) for tid, window in pairs])

    def observed(self) -> dict[TargetId, Observed]:
        return dict(zip(self.ids, [g.observed() for g in self.groups], strict=True))

    def demand(self) -> dict[str, float]:
        """Each lane's demand, keyed as ``decide`` reads it."""
        return dict(zip(self.unit.lane_keys, self.values, strict=True))

    def decide_alone(self, now: float) -> None:
        unit = self.unit
        if unit.rule == PROPORTIONAL:
            self._share(now)
            return
        decision = decide(
            unit.topology,
            self.demand(),
            self.observed(),
            self.history,
            now,
            admission=self.admission,
            single_tick=unit.rule == SINGLE_TICK,
            moves=self.moves,
            cloud=self.cloud,
            above=self.above,
        )
        self.take(decision, *lane_columns(decision.allocation), None)

    def take(
        self,
        decision: Decision,
        caps: Sequence[float],
        alloc: Sequence[float],
        admit: Sequence[float],
        pick: Callable[[Sequence[float]], Sequence[float]] | None,
    ) -> None:
        """This tick's figures and desired counts from a decision covering this unit, whose
        lanes' ``e``, allocation and admission are ``caps``, ``alloc`` and ``admit`` (as ``pick``
        picks them out, or all of them in order when the decision is this unit's alone)."""
        if pick is None:
            self.e, self.alloc, self.admit = caps, alloc, admit
        else:
            self.e, self.alloc, self.admit = pick(caps), pick(alloc), pick(admit)
        self.e_sum = sum(self.e)
        unit = self._start()
        pools = decision.allocation.pools
        results = [pools[name] for name in unit.pool_names]
        self.capacity = [r.capacity for r in results]
        self.constrained = [1 if r.state == "constrained" else 0 for r in results]
        if self.detail:
            self.pool_units = [r.demand for r in results]
            self.pool_served = pool_sums(self.alloc, unit.lane_pools, len(results))
        self._now()
        if self.ids:
            self._targets(decision)

    def _now(self) -> None:
        """This tick's figures, laid out for :meth:`flush`."""
        self.lane_now = [*self.e, *self.alloc, *self.admit]
        self.pool_now = [*self.capacity, *self.in_service, *self.at_max, *self.constrained]

    def _capped(self) -> None:
        """Each lane's ``e`` where no filling gives it (the proportional rule)."""
        if self.e_version != self.version:  # e changes only with the demand
            self.e_version = self.version
            self.e = lane_caps(self.values, self.unit.limits)
            self.e_sum = sum(self.e)

    def _start(self) -> Unit:
        unit = self.unit
        if self.groups:
            m = len(unit.pool_names)
            in_service = [0] * m
            at_max = [1] * m
            for p, group in self.slots:
                count = group.in_service
                in_service[p] += count
                if count < group.high:
                    at_max[p] = 0
            self.in_service = in_service
            self.at_max = at_max
            peak = self.sums.peak
            for p in self.scaled:  # a pool without targets runs no replicas
                count = in_service[p]
                if count > peak[p]:
                    peak[p] = count
        return unit

    def _targets(self, decision: Decision) -> None:
        targets, desired, recommended = decision.targets, self.desired, self.recommended
        moves, reasons, above = self.moves, self.reasons, self.above
        for j, tid in enumerate(self.ids):
            target = targets[tid]
            if target.move is not None:
                moves[tid] = target.move
            if target.above is not None:
                above[tid] = target.above
            elif tid in above:
                del above[tid]
            if target.desired != desired[j]:
                self.sums.actions += 1
                desired[j] = target.desired
            recommended[j] = target.recommended
            reasons[j] = target.reason

    def _share(self, now: float) -> None:
        """free-for-all: capacity in proportion to demand (admission is the share: the rule has
        no second filling); scaling by ``decide`` on one lane per pool carrying the pool's
        demand."""
        self._capped()
        unit = self._start()
        capacity = [
            pool_capacity(static, [g.in_service for g in groups], units)
            for static, groups, units in self.supply
        ]
        same = capacity == self.capacity and self.e_version == self.pool_demand_version
        self.capacity = capacity
        if not same:  # the shares follow e and the capacity only
            self._shares()
        self._now()
        decision = decide(
            unit.scaling,
            self.pool_demand,
            self.observed(),
            self.history,
            now,
            admission=False,
            moves=self.moves,
        )
        self._targets(decision)

    def _shares(self) -> None:
        unit = self.unit
        m = len(unit.pool_names)
        if self.e_version != self.pool_demand_version:  # the pools' demand follows e
            self.pool_demand_version = self.e_version
            self.pools_used = pool_sums(self.e, unit.lane_pools, m)
            known = unit.scaling.lanes_by_key
            self.pool_demand = {
                demand_lane(name): self.pools_used[p]
                for p, name in enumerate(unit.pool_names)
                if demand_lane(name) in known
            }
        self.alloc = self.admit = proportional_shares(
            self.e, unit.lane_pools, self.capacity, self.pools_used
        )
        self.pool_units = self.pools_used
        self.constrained = [
            1 if pool_pressure(d, c)[1] == "constrained" else 0
            for d, c in zip(self.pools_used, self.capacity, strict=True)
        ]
        if self.detail:
            self.pool_served = pool_sums(self.alloc, unit.lane_pools, m)

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
        for history, replicas, policy, desired, group in zip(
            self.histories, self.recommended, self.policies, self.desired, self.groups, strict=True
        ):
            # An older recommendation no higher than a newer one never decides the window's
            # highest (the newer one stays in the window longer): drop it, so the history is
            # decreasing and its first entry is the highest.
            while history and history[-1].replicas <= replicas:
                history.pop()
            history.append(Recommendation(now, replicas))
            horizon = history_horizon(policy, following)
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
            self._guards(following),
            k + 1 if self.cloud is not None else None,
        )
        return key == self.key

    def catch_up(self, k: int) -> None:
        """The state a settled unit would have after tick ``k - 1``: each history's one entry
        renewed at that tick (the skipped ticks changed nothing else)."""
        self.advance(k - 1, (k - 1) * self.tick, settling=False)

    def activate(self, k: int) -> None:
        """The first tick ``k`` of a run that carries groups: each carried target's group takes
        over its source group's state after tick ``k - 1`` (at ``k = 0``, its starting state):
        in service, pending launches, recommendation history, last desired count, last move;
        its own bounds apply from its first decision. A target carried from nowhere keeps its
        starting replicas."""
        for c in self.carry:
            source = c.source
            if source.settled:  # bring its history's one entry up to tick k - 1
                source.catch_up(k)
            j, s = c.target, c.source_target
            self.groups[j].take_over(source.groups[s])
            self.histories[j].extend(source.histories[s])
            self.desired[j] = source.desired[s]
            self.recommended[j] = source.recommended[s]
            move = source.moves.get(source.ids[s])
            if move is not None:
                self.moves[self.ids[j]] = move

    def stop_counting(self, k: int, scenario: int) -> None:
        """From tick ``k`` on this run no longer counts for ``scenario``: its figures up to
        then are kept for it (what-if's before side, ended by ``--change-at``)."""
        self.flush(k)
        self.kept[scenario] = self.sums.copy()
        self.scenarios.remove(scenario)

    def delta(self) -> tuple[list[int], list[float]]:
        """The change in this unit's per-tick totals since it was last decided: its columns and
        their changes (only the four totals' when no column of its resources changed)."""
        new = (self.e_sum, sum(self.alloc), sum(self.capacity), float(sum(self.in_service)))
        old, self.totals = self.totals, new
        diffs = [new[0] - old[0], new[1] - old[1], new[2] - old[2], new[3] - old[3]]
        block = self._block()
        if block == self.block:
            return TOTAL_COLUMNS, diffs
        diffs += map(sub, block, self.block)
        self.block = block
        return self.cols, diffs

    def _block(self) -> list[float]:
        """This tick's columns of its resources (see :data:`COUNTS` and :data:`UNITS`)."""
        in_service, at_max, constrained = self.in_service, self.at_max, self.constrained
        slots = self.resource_slot
        if len(slots) == 1:
            block = [float(in_service[0]), float(1 - at_max[0]), float(constrained[0])]
            if self.detail:
                block += (self.pool_units[0], self.pool_served[0], self.capacity[0])
            return block
        width = self.per_resource
        block = [0.0] * (width * len(self.resource_names))
        for p, slot in enumerate(slots):
            b = width * slot
            block[b] += in_service[p]
            block[b + 1] += 1 - at_max[p]
            block[b + 2] += constrained[p]
            if self.detail:
                block[b + 3] += self.pool_units[p]
                block[b + 4] += self.pool_served[p]
                block[b + 5] += self.capacity[p]
        return block

    def counted(self) -> tuple[list[int], list[float]]:
        """Its columns and what it last added to them."""
        return self.cols, [*self.totals, *self.block]

    def flush(self, k: int) -> None:
        """Count the current per-tick figures for every tick since the last flush, up to ``k``.

        A lane without demand adds ``0 × n`` (its allocation is 0 then too): its sum, never
        negative, is unchanged by the addition, so no lane needs a test.
        """
        n = k - self.since
        if n <= 0:
            return
        self.since = k
        s = self.sums
        times = repeat(n)
        # s + x × n for each figure, in C: the same two operations per element
        s.lanes = list(map(add, s.lanes, map(mul, self.lane_now, times)))
        s.pools = list(map(add, s.pools, map(mul, self.pool_now, times)))
        counts = s.reasons
        for key in zip(self.pool_of_target, self.reasons, strict=True):
            counts[key] = counts.get(key, 0) + n
