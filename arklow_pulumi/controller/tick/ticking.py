"""The controller tick: observe → decide → act → publish, on an injected clock.

One :class:`Controller` owns the runtime state of one process: the last published tick, each
target's recent single-tick recommendations (the scale-down window), the last demand-history row
of each lane, and the lease it writes under. A tick:

1. **observes** (:mod:`.observing`): topology from the store, demand reports fresher than the TTL
   (default 3 intervals), every group in one batched describe;
2. **decides** with the pure :func:`arklow_pulumi.core.deciding.decide` (allocation, scale policy);
3. **acts** (:mod:`.acting`) only where a group's asked size differs from the decision, after
   renewing the lease by compare-and-set (a replica that lost it never resizes); in dry-run it
   prints the plan instead and acts on nothing;
4. **publishes** (:mod:`.publishing`): the :class:`~..ports.Published` value in memory and, in one
   fenced transaction, in the runtime store with the demand history, the recommendations and the
   observed/desired replicas. A dry run publishes too (it is a controller that does not resize);
   :meth:`Controller.plan` (``arklow controller plan``) is the one path that writes nothing.

A tick that takes longer than the interval is reported (log and ``TickObserver``); the loop
(:mod:`..leadership.looping`, the one loop, run while this process leads) starts the next one
right after it, never two at once, and does the store's upkeep between two ticks
(:meth:`Controller.after_tick`: SQLite's checkpoint), off the tick's path. Leadership reaches the
controller through :meth:`Controller.lead` and :meth:`Controller.step_down`, called by the loop
and by the elector's ``stopped`` callback; a process standing by (PostgreSQL) serves the leader's
last tick (:meth:`Controller.follow`).
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from arklow_pulumi.controller import faults
from arklow_pulumi.controller.leadership.fencing import fence_for, held
from arklow_pulumi.controller.ports import (
    Clock,
    DemandSink,
    Elector,
    LeaderView,
    Published,
    SystemClock,
    TickObserver,
)
from arklow_pulumi.controller.tick import acting, heap, readiness
from arklow_pulumi.controller.tick.acting import (
    ActReport,
    Change,
    apply_changes,
    changes_to_make,
    describe_plan,
    with_detail,
)
from arklow_pulumi.controller.tick.documents import published_from_document, published_json
from arklow_pulumi.controller.tick.history import LaneHistory
from arklow_pulumi.controller.tick.observing import (
    Observation,
    describe_targets,
    fresh_demand,
    group_refs,
)
from arklow_pulumi.controller.tick.publishing import (
    build_published,
    in_target_order,
    move_of,
    observed_from_published,
    target_records,
)
from arklow_pulumi.controller.tick.readiness import ReadinessLog
from arklow_pulumi.controller.tick.sinking import StoreDemandSink
from arklow_pulumi.core.allocating import compile_topology
from arklow_pulumi.core.deciding import (
    Decision,
    Observed,
    Recommendation,
    TargetId,
    decide,
    scale_targets,
)
from arklow_pulumi.core.policy import retention_s
from arklow_pulumi.core.topology import Topology
from arklow_pulumi.store.engine import Store, StoreError, checkpoint
from arklow_pulumi.store.revision import topology_revision
from arklow_pulumi.store.runtime import (
    Lease,
    TargetRecord,
    TickRecord,
    load_demand_split,
    load_published,
    load_snapshot,
    write_tick,
)
from arklow_pulumi.store.service import stored_topology
from arklow_pulumi.supply.routing import SupplyRouter

log = logging.getLogger("arklow.controller")

DAY_S = 86400.0


@dataclass(frozen=True, slots=True)
class TickSettings:
    interval_s: float = 10.0
    ttl_intervals: float = 3.0
    retention_s: float = 7 * DAY_S
    keyframe_s: float = 3600.0
    dry_run: bool = False
    # One compare-and-set renewal fences every resize started within this many seconds of it
    # (monotonic clock; with an elector, never more than its ``fence_window_s``): a tick's
    # resizes, sent together, share one renewal.
    fence_reuse_s: float = 1.0
    # After a tick that (re)loaded the topology, freeze the long-lived heap out of the cyclic
    # collector's scans (:mod:`.heap`): the process turns this on, embedded controllers do not.
    settle_heap: bool = False

    @property
    def ttl_s(self) -> float:
        return self.ttl_intervals * self.interval_s


@dataclass(frozen=True, slots=True)
class TickOutcome:
    published: Published
    decision: Decision
    changes: tuple[Change, ...]
    report: ActReport
    plan: tuple[str, ...]  # dry-run: what would have been done
    duration_s: float
    overran: bool
    next_delay_s: float


@dataclass(frozen=True, slots=True)
class PlanView:
    """What one tick would do now (``arklow controller plan``): nothing is written anywhere."""

    observation: Observation
    decision: Decision
    changes: tuple[Change, ...]
    published: Published


@dataclass
class _Memory:
    published: Published | None = None
    tick: int = 0
    history: dict[str, list[Recommendation]] = field(default_factory=dict)
    # Each lane's last demand-history row (columns over the topology's lanes).
    lanes: LaneHistory = field(default_factory=LaneHistory)
    observed: dict[TargetId, Observed] = field(default_factory=dict)
    written: dict[str, TargetRecord] = field(default_factory=dict)
    topology: Topology | None = None
    revision: int | None = None
    topology_loaded: bool = False  # since the heap was last settled


class Controller:
    """The running controller behind :class:`~..ports.ControllerPort` (see the module doc)."""

    def __init__(
        self,
        store: Store,
        supply: SupplyRouter,
        lease: Lease | None,
        *,
        settings: TickSettings | None = None,
        clock: Clock | None = None,
        observer: TickObserver | None = None,
        say: Callable[[str], None] = print,
        elector: Elector | None = None,
    ) -> None:
        """``lease``: what an embedded controller (tests, the scenario) ticks under; a process
        passes None and its ``elector``, whose news sets it (:meth:`lead`, :meth:`step_down`)."""
        self.store = store
        self.supply = supply
        self.lease = lease
        self.settings = settings or TickSettings()
        self.clock = clock or SystemClock()
        self.observer = observer
        self.say = say
        self._memory = _Memory()
        self._sink = StoreDemandSink(self)
        # The act step's resizes run in parallel; their fence checks (sharing renewals) take
        # turns here rather than in the database's lock wait (SQLite's busy handler sleeps).
        self._fencing = threading.Lock()
        self._resize_pool: ThreadPoolExecutor | None = None
        # Who leads (a process): the lease's own deadline, checked around every resize.
        self.elector = elector
        # why /readyz says what it says, logged at start and on each change (.readiness)
        waiting = elector is not None and not elector.view().leader
        self.readiness = ReadinessLog(readiness.NO_LEADERSHIP if waiting else readiness.STARTING)

    # -- ControllerPort --------------------------------------------------------------------

    @property
    def interval_s(self) -> float:
        return self.settings.interval_s

    def latest(self) -> Published | None:
        return self._memory.published

    def demand_sink(self) -> DemandSink:
        return self._sink

    def leader(self) -> LeaderView:
        if self.elector is not None:
            return self.elector.view()
        lease = self.lease
        if lease is None:
            return LeaderView(leader=False, holder=None, epoch=0)
        return LeaderView(leader=True, holder=lease.holder, epoch=lease.epoch)

    def ready(self) -> bool:
        return self.readiness.ready

    # -- start ---------------------------------------------------------------------------

    def restore(self) -> Topology:
        """Continue from the store: last published tick, recommendations, demand history."""
        topo = self._topology()
        snapshot = load_snapshot(self.store, self.clock.time() - self._window_s(topo))
        memory = self._memory
        if snapshot.published is not None:
            tick, _at, document = snapshot.published
            memory.published = published_from_document(document)
            memory.tick = tick
            memory.observed = observed_from_published(memory.published)
        memory.history = {
            target: [Recommendation(at, n) for at, n in rows]
            for target, rows in snapshot.recommendations.items()
        }
        memory.lanes = LaneHistory(snapshot.last_demand)
        memory.written = dict(snapshot.targets)
        self._sink.refresh(topo)
        return topo

    # -- one tick --------------------------------------------------------------------------

    def observe(self) -> Observation:
        now = self.clock.time()
        topo = self._topology()
        fresh, old = load_demand_split(self.store, now, self.settings.ttl_s)
        self._sink.refresh(topo)
        lanes = fresh_demand(topo, fresh, old)
        targets = scale_targets(topo)
        faults.hit("describe")
        seen = describe_targets(self.supply, targets, self._memory.observed, group_refs(topo))
        return Observation(
            now,
            topo,
            lanes.reports,
            lanes.demand,
            lanes.stale,
            targets,
            seen.groups,
            seen.observed,
            seen.errors,
            seen.read,
        )

    def _topology(self) -> Topology:
        """The store's topology; the same value as last tick while its revision (one number the
        database raises on every topology write) stayed, so the allocator's compiled form (cached
        per topology value) is reused. The revision is read before the topology: a write landing
        in between shows as a newer revision next tick, which loads again."""
        revision = topology_revision(self.store)
        memory = self._memory
        if memory.topology is None or revision != memory.revision:
            memory.topology, memory.revision = stored_topology(self.store), revision
            memory.topology_loaded = True
        return memory.topology

    def decide(self, obs: Observation) -> Decision:
        memory = self._memory
        history = {tid: memory.history.get(tid.name, ()) for tid in obs.targets}
        # each target's last move, as its last written row has it
        written = memory.written
        moves = {tid: move for tid in obs.targets if (move := move_of(written.get(tid.name)))}
        return decide(obs.topology, obs.demand, obs.observed, history, obs.at, moves=moves)

    def plan(self) -> PlanView:
        """Observe and decide; act on nothing, write nothing."""
        obs = self.observe()
        decision = self.decide(obs)
        changes = tuple(changes_to_make(decision.targets, obs.targets, obs.groups))
        published = build_published(self._memory.tick + 1, obs, decision, self._memory.published)
        return PlanView(obs, decision, changes, published)

    def tick(self) -> TickOutcome:
        started = self.clock.monotonic()
        # The collection at the end of the block runs once the tick's observation (its reports,
        # demand, groups) is gone: reference counting has freed it, the collector never sees it.
        with heap.collected_at_end(self.settings.settle_heap):
            published, decision, changes, report, plan = self._observe_to_publish()
        self._settle_heap()
        duration = self.clock.monotonic() - started
        overran = duration > self.settings.interval_s
        if overran:
            log.warning(
                "tick %d took %.1fs, longer than the %.1fs interval; the next starts now",
                published.tick,
                duration,
                self.settings.interval_s,
            )
        if self.observer is not None:
            self.observer.tick_done(published, duration, overran)
        delay = max(0.0, self.settings.interval_s - duration)
        return TickOutcome(published, decision, changes, report, plan, duration, overran, delay)

    def _observe_to_publish(
        self,
    ) -> tuple[Published, Decision, tuple[Change, ...], ActReport, tuple[str, ...]]:
        view = self.plan()
        obs, changes = view.observation, view.changes
        for tid, error in obs.errors.items():
            self._supply_error(tid, obs.targets[tid].kind, error)
        if self.settings.dry_run:
            plan = tuple(describe_plan(with_detail(self.supply, changes)))
            report = ActReport()
            for line in plan:
                self.say(f"tick {view.published.tick}: {line}")
        else:
            plan, report = (), self._act(changes, view.published.tick)
        self._publish(view, report)
        return view.published, view.decision, changes, report, plan

    def after_tick(self, delay_s: float) -> float:
        """Upkeep that is no part of a tick's answer, done in the time the loop waits anyway:
        SQLite's write-ahead log copied back into the database (:func:`checkpoint`), which
        SQLite would otherwise do inside the commit of every few ticks. A failure is logged and
        left to the next one (SQLite still checkpoints by itself past 1,000 pages). Returns what
        is left of ``delay_s``."""
        started = self.clock.monotonic()
        try:
            checkpoint(self.store)
        except StoreError as exc:
            log.warning("store checkpoint: %s", str(exc).splitlines()[0])
        return max(0.0, delay_s - (self.clock.monotonic() - started))

    # -- act and publish -------------------------------------------------------------------

    def _act(self, changes: tuple[Change, ...], tick: int) -> ActReport:
        if not changes:
            return ActReport()
        fence = fence_for(
            self.store,
            held(self.lease),
            tick,
            elector=self.elector,
            monotonic=self.clock.monotonic,
            turns=self._fencing,
            reuse_s=self.settings.fence_reuse_s,
        )
        report = apply_changes(self.supply, changes, fence, self._resizers())
        for change, result in report.done:
            if result.changed:
                log.info("%s: %s -> %s", change.target, result.previous, result.desired)
                if self.observer is not None:
                    self.observer.scale_action(
                        change.target.pool, change.target.name, acting.direction(change, result)
                    )
        for change, error in report.failed:
            log.warning("%s: %s", change.target, error)
            self._supply_error(change.target, change.spec.kind, error)
        return report

    def _resizers(self) -> ThreadPoolExecutor:
        """The act step's threads, started once (as many as a tick has needed, up to
        :data:`~.acting.MAX_PARALLEL`) and shut down with the controller."""
        pool = self._resize_pool
        if pool is None:
            pool = self._resize_pool = ThreadPoolExecutor(
                acting.MAX_PARALLEL, thread_name_prefix="arklow-resize"
            )
            weakref.finalize(self, pool.shutdown, wait=False)
        return pool

    # -- leadership ------------------------------------------------------------------------

    def lead(self, lease: Lease) -> None:
        """Leadership gained (the loop, on the elector's news, once it has continued from the
        store, :meth:`restore`): tick under ``lease`` from now."""
        self.lease = lease

    def step_down(self, lease: Lease) -> None:
        """Leadership lost (the elector's ``stopped`` callback): no resize or fenced write from
        here on, not even by the tick in progress."""
        if self.lease == lease:
            self.lease = None

    def follow(self) -> None:
        """A standby's tick: serve the leader's last published tick, know the topology's lanes."""
        topo = self._topology()
        self._sink.refresh(topo)
        row = load_published(self.store)
        memory = self._memory
        if row is not None and row.tick != memory.tick:
            memory.published = published_from_document(row.document)
            memory.tick = row.tick
        self.readiness.set(readiness.FOLLOWING)
        self._settle_heap()

    def _settle_heap(self) -> None:
        """Once per topology loaded, when the process asks for it (:mod:`.heap`)."""
        if self.settings.settle_heap and self._memory.topology_loaded:
            heap.settle()
            self._memory.topology_loaded = False

    def failed(self, error: Exception) -> None:
        """A tick that could not complete: not ready until one does."""
        log.error("tick failed: %s", error)
        self.readiness.set(readiness.tick_failed(error))

    def _supply_error(self, target: TargetId, kind: str, error: Exception) -> None:
        if self.observer is not None:
            self.observer.supply_error(target.pool, target.name, kind, type(error).__name__)

    def _publish(self, view: PlanView, report: ActReport) -> None:
        obs, decision, published = view.observation, view.decision, view.published
        memory = self._memory
        lease = held(self.lease)
        decided = in_target_order(decision)
        recommendations = [(tid.name, obs.at, d.recommended) for tid, d in decided]
        targets = target_records(obs, decided)
        record = TickRecord(
            tick=published.tick,
            at=obs.at,
            published=published_json(published),
            targets=[t for t in targets if memory.written.get(t.target) != t],
            recommendations=recommendations,
            demand=memory.lanes.rows(
                compile_topology(obs.topology).lane_keys,
                obs.demand,
                obs.at,
                self.settings.keyframe_s,
            ),
            history_before=obs.at - self.settings.retention_s,
            recommendations_before=obs.at - self._window_s(obs.topology),
        )
        faults.hit("publish")
        write_tick(self.store, lease, record)
        memory.written.update({t.target: t for t in record.targets})
        for name, at, replicas in recommendations:
            memory.history.setdefault(name, []).append(Recommendation(at, replicas))
        self._forget_old(obs)
        memory.published = published
        memory.tick = published.tick
        memory.observed = dict(obs.observed)
        read = readiness.TICKED if obs.supply_read else readiness.supply_not_read(obs.errors)
        self.readiness.set(read)
        if self.observer is not None:
            self.observer.leadership(True, lease.epoch, 0.0)  # write_tick renewed it

    def _forget_old(self, obs: Observation) -> None:
        """Drop recommendations older than the window, and targets gone from the topology. A
        target's list is in time order (appended tick by tick): its old rows are a prefix, cut
        in place (no new list per target per tick)."""
        horizon = obs.at - self._window_s(obs.topology)
        history = self._memory.history
        names = {tid.name for tid in obs.targets}
        for name in [name for name in history if name not in names]:
            del history[name]
        for rows in history.values():
            if rows and rows[0].at < horizon:
                cut = 1  # a tick or two of them, usually
                while cut < len(rows) and rows[cut].at < horizon:
                    cut += 1
                del rows[:cut]

    def _window_s(self, topo: Topology) -> float:
        """How far back recommendations matter: the longest scale-down window, and a tick."""
        policies = [p.scale_policy for p in topo.pools.values()]
        return retention_s(policies) + self.settings.interval_s
