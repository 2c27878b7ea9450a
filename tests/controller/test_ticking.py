"""The tick with a fake clock, a real SQLite store and the in-memory supply."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from arklow_pulumi.controller.leadership import fencing
from arklow_pulumi.controller.leadership.looping import run_loop
from arklow_pulumi.controller.ports import DemandReport
from arklow_pulumi.controller.tick import acting, ticking
from arklow_pulumi.controller.tick.observing import Observation
from arklow_pulumi.controller.tick.ticking import Controller, TickSettings
from arklow_pulumi.core.deciding import Decision
from arklow_pulumi.core.topology import GroupRef, Topology
from arklow_pulumi.store import engine, runtime
from arklow_pulumi.store.engine import Store, StoreError
from arklow_pulumi.store.runtime import Lease, LeaseLost, acquire_lease
from arklow_pulumi.supply.errors import TemporarySupplyError
from arklow_pulumi.supply.memory import InMemorySupply
from arklow_pulumi.supply.routing import SupplyRouter
from tests.builders import dest, lane, pool, target, topo
from tests.controller.conftest import (
    FakeClock,
    RecordingObserver,
    groups_for,
    make_controller,
    put_topology,
    tid,
)
from tests.store.runtime_reads import history_rows, load_demand_reports

GPU = tid("shared-gpu", "gpu-workers")
REF = GroupRef("aws_asg", "gpu-workers")
Setup = tuple[Controller, InMemorySupply]


def shared_gpu(max_replicas: int = 10, replicas: int = 1) -> Topology:
    return topo(
        [
            dest("search", ["gpu"], lane("interactive", 16, 3), lane("batch", 64)),
            dest("reports", ["gpu"], lane("nightly", 8)),
        ],
        [
            pool(
                "shared-gpu",
                "gpu",
                ["search", "reports"],
                scale_targets=[target("gpu-workers", 1, max_replicas, 8, replicas)],
            )
        ],
    )


@pytest.fixture
def setup(store: Store, lease: Lease, clock: FakeClock) -> Setup:
    topology = shared_gpu()
    put_topology(store, topology)
    supply = groups_for(topology)
    return make_controller(store, supply, lease, clock), supply


def report(controller: Controller, **demand: float) -> None:
    reports = [DemandReport(k.replace("__", "/"), v) for k, v in demand.items()]
    controller.demand_sink().accept(reports)


def test_demand_scales_the_group_up_and_admission_is_published(setup: Setup) -> None:
    controller, supply = setup
    report(controller, search__interactive=16, search__batch=20)
    outcome = controller.tick()
    # needed = (16 + 20) × 1.1 = 39.6 units → 5 replicas of 8; one tick may add max(4, 100%).
    assert outcome.decision.targets[GPU].recommended == 5
    assert supply.groups[REF].desired == 5
    assert outcome.published.tick == 1
    lanes = outcome.published.lanes
    assert lanes["search/interactive"].demand == 16
    assert not lanes["search/interactive"].stale
    # capacity is what was in service when the tick observed (1 × 8 units)
    assert outcome.published.pools["shared-gpu"].capacity == 8
    assert outcome.published.pools["shared-gpu"].targets["gpu-workers"].desired == 5
    assert controller.latest() == outcome.published


def test_pending_replicas_are_not_requested_twice(setup: Setup) -> None:
    controller, supply = setup
    report(controller, search__interactive=16, search__batch=20)
    controller.tick()
    writes = supply.calls["write"]
    # The group accepted 5 but only 1 is in service yet: 4 are pending, current stays 5.
    supply.groups[REF] = supply.groups[REF].__class__(REF, 5, 1, 4, 1, 10)
    outcome = controller.tick()
    assert outcome.published.pools["shared-gpu"].targets["gpu-workers"].pending == 4
    assert outcome.changes == ()
    assert supply.calls["write"] == writes


def test_a_report_older_than_the_ttl_is_demand_zero_and_keeps_its_admission(
    setup: Setup, clock: FakeClock
) -> None:
    controller, _supply = setup
    report(controller, search__batch=30)
    controller.tick()
    clock.advance(30)  # exactly the TTL (3 × 10 s): still fresh
    kept = controller.tick().published.lanes["search/batch"]
    assert not kept.stale
    clock.advance(1)
    outcome = controller.tick()
    view = outcome.published.lanes["search/batch"]
    assert view.stale
    assert view.demand == 30  # the last reported value, raw
    assert (view.allocation, view.admission) == (kept.allocation, kept.admission)
    assert outcome.published.pools["shared-gpu"].demand == 0  # demand 0 for scaling
    # A lane that never reported is idle, not stale.
    assert not outcome.published.lanes["reports/nightly"].stale


@pytest.mark.parametrize("restored", ["columns", "one view per lane"])
def test_a_stale_lane_keeps_its_admission_across_a_restart(
    setup: Setup, store: Store, lease: Lease, clock: FakeClock, restored: str
) -> None:
    """The kept values come from the published tick the restarted controller read back (stored
    packed: columns; or, from a store written before, one view per lane)."""
    controller, supply = setup
    report(controller, search__batch=30, reports__nightly=6)
    first = controller.tick().published
    again = make_controller(store, supply, lease, clock)
    if restored == "one view per lane":
        latest = again.latest()
        assert latest is not None
        again._memory.published = replace(latest, lanes=dict(latest.lanes.items()))
    clock.advance(31)
    report(again, reports__nightly=60)  # batch goes stale; nightly's demand changes
    outcome = again.tick().published
    batch, nightly = outcome.lanes["search/batch"], outcome.lanes["reports/nightly"]
    assert batch == first.lanes["search/batch"]._replace(stale=True)
    assert not nightly.stale and nightly.demand == 60
    assert nightly.allocation != first.lanes["reports/nightly"].allocation


def test_bounds_are_never_left(store: Store, lease: Lease, clock: FakeClock) -> None:
    topology = shared_gpu(max_replicas=3)
    put_topology(store, topology)
    supply = groups_for(topology)
    controller = make_controller(store, supply, lease, clock)
    report(controller, search__batch=1e6)
    for _ in range(3):
        controller.tick()
        clock.advance(10)
    assert supply.groups[REF].desired == 3
    controller.demand_sink().accept([DemandReport("search/batch", 0)])
    for _ in range(80):  # well past the scale-down window
        outcome = controller.tick()
        assert 1 <= outcome.decision.targets[GPU].desired <= 3
        clock.advance(10)
    assert supply.groups[REF].desired == 1


def test_steady_state_makes_no_write_call(setup: Setup, clock: FakeClock) -> None:
    controller, supply = setup
    report(controller, search__batch=20)
    controller.tick()
    writes = supply.calls["write"]
    for _ in range(20):
        clock.advance(10)
        report(controller, search__batch=20 * (1 + 0.05 * math.sin(clock.now)))  # within tolerance
        assert controller.tick().changes == ()
    assert supply.calls["write"] == writes
    assert supply.calls["describe"] == 21  # one batched describe per tick


class SlowSupply(InMemorySupply):
    """Describing takes ``delay`` seconds of the fake clock."""

    def __init__(self, base: InMemorySupply, clock: FakeClock, delay: float) -> None:
        super().__init__(list(base.groups.values()))
        self.clock, self.delay = clock, delay

    def describe(self, refs, *, detail=True):  # type: ignore[no-untyped-def]
        self.clock.advance(self.delay)
        return super().describe(refs, detail=detail)


def test_an_overrun_is_reported_and_the_next_tick_is_not_stacked(
    store: Store, lease: Lease, clock: FakeClock
) -> None:
    topology = shared_gpu()
    put_topology(store, topology)
    supply = SlowSupply(groups_for(topology), clock, delay=25.0)
    observer = RecordingObserver()
    controller = make_controller(store, supply, lease, clock)
    controller.observer = observer
    delays: list[float] = []

    def wait(delay: float) -> bool:
        delays.append(delay)
        if len(delays) == 2:
            supply.delay = 2.0  # the third tick is quick again
        clock.advance(delay)
        return len(delays) == 3

    run_loop(controller, wait)
    # Each overrun tick (25 s on a 10 s interval) is followed at once by exactly one tick.
    assert observer.ticks == [(1, True), (2, True), (3, False)]
    assert delays == [0.0, 0.0, 8.0]


def test_dry_run_prints_the_plan_and_resizes_nothing(setup: Setup) -> None:
    controller, supply = setup
    controller.settings = TickSettings(dry_run=True)
    lines: list[str] = []
    controller.say = lines.append
    report(controller, search__batch=40)
    outcome = controller.tick()
    assert supply.calls["write"] == 0
    assert supply.groups[REF].desired == 1
    assert outcome.plan and lines == [f"tick 1: {line}" for line in outcome.plan]
    # the pool holds work (40 units on 8): it goes to what the work needs in one step
    assert "gpu-workers" in lines[0] and "1 -> 6" in lines[0]
    assert lines == [
        "tick 1: would set_desired_capacity shared-gpu/gpu-workers (aws_asg:gpu-workers): 1 -> 6"
    ]
    # It still publishes what it decided (admission is served; the desired count is the plan's).
    assert outcome.published.pools["shared-gpu"].targets["gpu-workers"].desired == 6


def test_plan_writes_nothing_in_the_store_or_the_clouds(store: Store, clock: FakeClock) -> None:
    topology = shared_gpu()
    put_topology(store, topology)
    supply = groups_for(topology)
    writer = make_controller(store, supply, acquire_lease(store, "w", 15.0, force=True), clock)
    report(writer, search__batch=40)
    before = runtime.read_lease(store)
    planner = make_controller(store, supply, None, clock)
    view = planner.plan()
    assert [c.desired for c in view.changes] == [6]  # 40 units of work held: to 6 at once
    assert supply.calls["write"] == 0
    assert runtime.load_snapshot(store, 0).published is None
    assert history_rows(store) == 0
    assert runtime.read_lease(store).epoch == before.epoch


def test_demand_history_keeps_changes_and_prunes_old_rows_in_batches(
    setup: Setup, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    controller, _supply = setup
    controller.settings = controller.settings.__class__(retention_s=100.0, keyframe_s=1e9)
    monkeypatch.setattr(runtime, "PRUNE_BATCH", 2)
    for k in range(10):
        report(controller, search__batch=k + 1, search__interactive=1)
        controller.tick()
        clock.advance(10)
    # interactive once (unchanged afterwards), batch every tick; nightly never had demand.
    assert history_rows(controller.store) == 11
    clock.advance(200)  # every row is now older than the retention; reports are stale
    controller.tick()  # adds 2 rows (both lanes to 0), prunes twice that many old ones
    assert history_rows(controller.store) == 11 + 2 - 4
    for left in (7, 5, 3, 1, 0, 0):  # old rows, PRUNE_BATCH (2) per tick that adds nothing
        assert history_rows(controller.store) == left + 2
        clock.advance(10)
        controller.tick()
    assert history_rows(controller.store) == 2  # only the rows of the stale tick remain
    assert load_demand_reports(controller.store) == {}  # reports older than retention


def test_a_restarted_controller_continues_from_the_store(setup: Setup, clock: FakeClock) -> None:
    controller, supply = setup
    report(controller, search__batch=60)
    first = controller.tick()
    assert supply.groups[REF].desired == 9  # the pool holds work: to what it needs at once
    moved = first.decision.targets[GPU].move
    assert moved is not None and moved.direction == 1
    report(controller, search__batch=0)
    clock.advance(10)
    again = make_controller(controller.store, supply, controller.lease, clock)
    assert again.latest() == controller.latest()
    outcome = again.tick()
    assert outcome.published.tick == 2
    # The scale-down window came back from the store: no drop right after a restart.
    assert supply.groups[REF].desired == 9
    # and so did the target's last move (the reversal guard), as the first tick stored it
    assert outcome.decision.targets[GPU].move == moved


def test_a_lost_lease_writes_nothing_and_resizes_nothing(setup: Setup) -> None:
    controller, supply = setup
    report(controller, search__batch=60)
    taken = acquire_lease(controller.store, "someone-else", 15.0, force=True)
    assert taken is not None
    with pytest.raises(LeaseLost):
        controller.tick()
    assert supply.calls["write"] == 0
    assert runtime.load_snapshot(controller.store, 0).published is None


def test_one_cloud_failing_does_not_stop_the_other(
    store: Store, lease: Lease, clock: FakeClock
) -> None:
    topology = topo(
        [dest("search", ["gpu"], lane("batch", 64)), dest("ingest", ["cpu"], lane("all", 64))],
        [
            pool("gpu", "gpu", ["search"], scale_targets=[target("asg", 1, 10, 8, 1)]),
            pool(
                "cpu",
                "cpu",
                ["ingest"],
                scale_targets=[
                    {
                        **target("mig", 1, 10, 8, 1, kind="gcp_mig"),
                        "project": "p",
                        "zone": "z",
                    }
                ],
            ),
        ],
    )
    put_topology(store, topology)
    groups = groups_for(topology)
    aws = InMemorySupply([g for g in groups.groups.values() if g.ref.kind == "aws_asg"])
    gcp = InMemorySupply([g for g in groups.groups.values() if g.ref.kind == "gcp_mig"])
    gcp.fail_next.append(TemporarySupplyError("503 from the Compute API"))
    observer = RecordingObserver()
    controller = make_controller(
        store, SupplyRouter({"aws_asg": aws, "gcp_mig": gcp}), lease, clock
    )
    controller.observer = observer
    report(controller, search__batch=30, ingest__all=30)
    outcome = controller.tick()
    assert [c.target.name for c in outcome.changes] == ["asg"]  # the MIG was not described
    assert aws.calls["write"] == 1 and gcp.calls["write"] == 0
    assert observer.errors == [("gcp_mig", "TemporarySupplyError")]
    assert not controller.ready()
    clock.advance(10)
    controller.tick()
    assert gcp.calls["write"] == 1 and controller.ready()


def test_a_topology_change_in_the_store_is_seen_by_the_next_tick(setup: Setup) -> None:
    controller, supply = setup
    report(controller, search__batch=60)
    first = controller.tick()
    assert first.decision.targets[GPU].desired == 9  # the pool holds work: its need at once
    unchanged = controller.observe().topology
    assert controller.observe().topology is unchanged  # no row changed: the same value
    put_topology(controller.store, shared_gpu(max_replicas=3))  # a `pulumi up` lowers the max
    outcome = controller.tick()
    assert outcome.published.pools["shared-gpu"].targets["gpu-workers"].max == 3
    assert supply.groups[REF].desired == 3  # bounds win over the step limits


def test_a_failed_tick_is_logged_and_the_loop_goes_on_until_the_lease_is_lost(
    setup: Setup, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    controller, _supply = setup
    controller.tick()
    assert controller.ready()
    real_load = runtime.load_demand_split
    calls = {"n": 0}

    def flaky(store: Store, now: float, ttl_s: float) -> tuple[dict[str, float], dict[str, float]]:
        calls["n"] += 1
        if calls["n"] == 1:
            raise StoreError("store sqlite:///x: database is locked")
        return real_load(store, now, ttl_s)

    monkeypatch.setattr("arklow_pulumi.controller.tick.ticking.load_demand_split", flaky)
    delays: list[float] = []

    def wait(delay: float) -> bool:
        delays.append(delay)
        ready.append(controller.ready())
        clock.advance(delay)
        if len(delays) == 2:
            acquire_lease(controller.store, "usurper", 15.0, force=True)
        return False

    ready: list[bool] = []
    with pytest.raises(LeaseLost):
        run_loop(controller, wait)
    # failed tick: not ready, a full interval; then a good tick; then the lease was taken over
    assert delays == [10.0, 10.0] and ready == [False, True]


def test_dry_run_shows_a_group_with_policies_of_its_own_as_refused(setup: Setup) -> None:
    controller, supply = setup
    supply.groups[REF] = replace(supply.groups[REF], policies=("target-tracking",))
    controller.settings = TickSettings(dry_run=True)
    report(controller, search__batch=40)
    outcome = controller.tick()
    assert len(outcome.plan) == 1 and outcome.plan[0].startswith("would refuse")
    assert "scaling policies" in outcome.plan[0]
    assert supply.calls["write"] == 0


def test_the_process_settles_its_heap_once_per_topology_loaded(
    store: Store, lease: Lease, clock: FakeClock
) -> None:
    """``arklow controller run`` freezes the long-lived heap after a tick that loaded the topology
    (controller/tick/heap.py); an embedded controller leaves the collector alone."""
    import gc

    put_topology(store, shared_gpu())
    gc.unfreeze()
    try:
        embedded = make_controller(store, groups_for(shared_gpu()), lease, clock)
        embedded.tick()
        assert gc.get_freeze_count() == 0
        process = make_controller(store, groups_for(shared_gpu()), lease, clock, settle_heap=True)
        process.tick()  # restore loaded the topology: settled after this tick
        frozen = gc.get_freeze_count()
        assert frozen > 0
        gc.unfreeze()
        clock.advance(10)
        process.tick()  # the same topology: nothing to settle
        assert gc.get_freeze_count() == 0
        put_topology(store, shared_gpu(max_replicas=3))
        clock.advance(10)
        process.tick()  # a new topology value: settled again
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_the_process_collects_once_at_the_end_of_a_tick_not_during_it(
    setup: Setup, store: Store, lease: Lease, clock: FakeClock
) -> None:
    import gc

    embedded, _ = setup
    process = make_controller(store, groups_for(shared_gpu()), lease, clock, settle_heap=True)
    seen: list[bool] = []
    for controller in (embedded, process):
        real = controller.decide

        def decide(obs: Observation, _real: Callable[[Observation], Decision] = real) -> Decision:
            seen.append(gc.isenabled())
            return _real(obs)

        controller.decide = decide  # type: ignore[method-assign]
        controller.tick()
        assert gc.isenabled()
        clock.advance(10)
    gc.unfreeze()
    assert seen == [True, False]


class _CyclicDemand(dict[str, float]):
    """Fresh demand that refers to itself: garbage only the cyclic collector can free."""

    def __init__(self, values: dict[str, float]) -> None:
        super().__init__(values)
        self.me = self


def test_garbage_cycles_a_tick_made_are_collected_by_its_end(
    store: Store, lease: Lease, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process's one collection per tick runs once the tick's observation is released: a
    cycle the observation held (here its demand) is gone when ``tick`` returns (controller/tick/heap.py:
    garbage is bounded by one tick)."""
    import gc
    import weakref

    from arklow_pulumi.controller.tick import observing

    put_topology(store, shared_gpu())
    process = make_controller(store, groups_for(shared_gpu()), lease, clock, settle_heap=True)
    made: list[weakref.ref[_CyclicDemand]] = []
    real = observing.fresh_demand

    def fresh_demand(*args: object, **kw: object) -> object:
        lanes = real(*args, **kw)  # type: ignore[arg-type]
        cyclic = _CyclicDemand(lanes.demand)
        made.append(weakref.ref(cyclic))
        return observing.LaneDemand(lanes.reports, cyclic, lanes.stale)

    monkeypatch.setattr("arklow_pulumi.controller.tick.ticking.fresh_demand", fresh_demand)
    try:
        for _ in range(3):
            report(process, search__batch=40.0)
            process.tick()
            assert made[-1]() is None
            clock.advance(10)
    finally:
        gc.unfreeze()
    assert len(made) == 3


def three_pools() -> Topology:
    return topo(
        [dest(f"d{k}", [f"r{k}"], lane("work", 64)) for k in range(3)],
        [
            pool(f"p{k}", f"r{k}", [f"d{k}"], scale_targets=[target(f"g{k}", 1, 10, 8, 1)])
            for k in range(3)
        ],
    )


@pytest.mark.parametrize(("reuse_s", "renewals"), [(1.0, 1), (0.0, 3)])
def test_the_resizes_of_a_tick_share_one_lease_renewal_within_the_reuse_window(
    store: Store,
    lease: Lease,
    clock: FakeClock,
    monkeypatch: pytest.MonkeyPatch,
    reuse_s: float,
    renewals: int,
) -> None:
    topology = three_pools()
    put_topology(store, topology)
    supply = groups_for(topology)
    controller = make_controller(store, supply, lease, clock, fence_reuse_s=reuse_s)
    seen: list[Lease] = []
    real = runtime.renew_lease

    def counted(store: Store, lease: Lease) -> None:
        seen.append(lease)
        real(store, lease)

    monkeypatch.setattr(fencing, "renew_lease", counted)
    report(controller, d0__work=40, d1__work=40, d2__work=40)
    controller.tick()
    assert supply.calls["write"] == 3
    assert seen == [lease] * renewals


def test_a_renewal_older_than_the_window_is_made_again_and_a_lost_lease_sends_nothing(
    store: Store, lease: Lease, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    topology = three_pools()
    put_topology(store, topology)
    supply = groups_for(topology)
    controller = make_controller(store, supply, lease, clock)
    real_set = supply.apply
    taken: list[Lease] = []

    def slow_set(*args: Any, **kw: Any) -> Any:
        # each resize takes 0.6 s; after the first, another replica takes the lease over
        clock.mono += 0.6
        if not taken:
            taken.append(acquire_lease(store, "other", 15.0, force=True) or lease)
        return real_set(*args, **kw)

    monkeypatch.setattr(supply, "apply", slow_set)
    monkeypatch.setattr(acting, "MAX_PARALLEL", 1)
    report(controller, d0__work=40, d1__work=40, d2__work=40)
    with pytest.raises(LeaseLost):
        controller.tick()
    # The first resize renewed and went out; the second started 0.6 s later, inside the window
    # (sent under the renewal before the take-over: the lease holds for 15 s after it); the
    # third, 1.2 s after the renewal, renewed again, found the lease taken and sent nothing.
    assert supply.calls["write"] == 2


def test_the_loop_checkpoints_the_store_between_ticks_in_the_time_it_waits(
    setup: Setup, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    controller, _supply = setup
    real = engine.checkpoint
    done: list[tuple[int, int]] = []

    def timed(store: Store) -> tuple[int, int]:
        clock.mono += 2.0  # the checkpoint takes 2 s of the interval
        if len(done) == 1:
            done.append((0, 0))
            raise StoreError("store sqlite:///x: disk I/O error")  # logged; the loop goes on
        done.append(real(store))
        return done[-1]

    monkeypatch.setattr(ticking, "checkpoint", timed)
    delays: list[float] = []

    def wait(delay: float) -> bool:
        delays.append(delay)
        clock.advance(delay)
        return len(delays) == 3

    run_loop(controller, wait)
    assert delays == [8.0, 8.0, 8.0]
    frames, copied = done[0]
    assert frames > 0 and copied == frames  # the first tick's log, all of it back in the file
    assert len(done) == 3
