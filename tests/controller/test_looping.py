"""Leadership owns the loop: the elector's ``started`` starts the one tick loop under the lease,
``stopped`` cancels it at once and the process stands by; a lease lost in a tick goes back to the
elector. A real SQLite store, the in-memory supply, a fake clock for the ticks (the loop's waits are
real, but every one of them is cut short by the news the test sends)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import pytest

from arklow_pulumi.controller.leadership.looping import Loop
from arklow_pulumi.controller.ports import DemandReport
from arklow_pulumi.controller.tick.ticking import Controller
from arklow_pulumi.store.engine import Store
from arklow_pulumi.store.runtime import Lease, acquire_lease
from arklow_pulumi.supply.memory import InMemorySupply
from tests.builders import dest, lane, pool, target, topo
from tests.controller.conftest import FakeClock, groups_for, make_controller, put_topology
from tests.controller_process import eventually


def until(probe: Callable[[], object], what: str) -> None:
    """:func:`tests.controller_process.eventually`, asked every 0.01 s for 30 s: the loop acts on
    news at once."""
    eventually(probe, what, deadline_s=30, every=0.01)


@pytest.fixture
def setup(store: Store, clock: FakeClock) -> tuple[Controller, InMemorySupply]:
    topology = topo(
        [dest("search", ["gpu"], lane("batch", 64))],
        [pool("gpu", "gpu", ["search"], scale_targets=[target("workers", 1, 10, 8, 1)])],
    )
    put_topology(store, topology)
    supply = groups_for(topology)
    return make_controller(store, supply, None, clock), supply


@pytest.fixture
def running() -> Iterator[Callable[[Loop], threading.Thread]]:
    started: list[tuple[Loop, threading.Thread]] = []

    def start(loop: Loop) -> threading.Thread:
        thread = threading.Thread(target=loop.run, name="loop")
        thread.start()
        started.append((loop, thread))
        return thread

    yield start
    for loop, thread in started:
        loop.stop()
        thread.join(timeout=30)
        assert not thread.is_alive()


def follows(controller: Controller) -> threading.Event:
    """An event set when ``controller`` is next told to follow (stands by: its loop cancelled)."""
    followed = threading.Event()
    follow = controller.follow

    def following() -> None:
        followed.set()
        follow()

    controller.follow = following  # type: ignore[method-assign]
    return followed


def waits_for_news(loop: Loop) -> threading.Event:
    """An event set when ``loop``, not yet running, first waits for news with none come: it found
    nothing to do (its lock swapped for one that says so; counted, not timed)."""
    waiting = threading.Event()

    class Watched(threading.Condition):
        def wait(self, timeout: float | None = None) -> bool:
            waiting.set()
            return super().wait(timeout)

    loop._changed = Watched()
    return waiting


def published_tick(controller: Controller) -> int:
    latest = controller.latest()
    return 0 if latest is None else latest.tick


def test_started_starts_the_tick_loop_and_stopped_cancels_it(
    setup: tuple[Controller, InMemorySupply],
    store: Store,
    running: Callable[[Loop], threading.Thread],
) -> None:
    controller, _supply = setup
    lease = acquire_lease(store, "me", 15.0, force=True)
    assert lease is not None
    loop = Loop(controller, lost=lambda lease: pytest.fail("nothing was lost"))
    waiting = waits_for_news(loop)
    running(loop)
    assert waiting.wait(30), "the loop never waited for news"
    assert published_tick(controller) == 0  # no news yet: it waits, no tick
    loop.callbacks.started(lease)
    until(lambda: published_tick(controller) == 1, "the first tick under the lease")
    assert controller.lease == lease and controller.leader().epoch == lease.epoch
    followed = follows(controller)
    loop.callbacks.stopped(lease)
    assert controller.lease is None  # at once: nothing more is written under it
    # The tick loop's wait (a 10 s interval) is cut short: the process stands by at once.
    assert followed.wait(5), "the tick loop was not cancelled"
    assert published_tick(controller) == 1 and controller.ready()


def test_a_process_behind_another_leader_stands_by_until_it_leads(
    setup: tuple[Controller, InMemorySupply],
    store: Store,
    clock: FakeClock,
    running: Callable[[Loop], threading.Thread],
) -> None:
    controller, supply = setup
    other = make_controller(store, supply, acquire_lease(store, "other", 15.0, force=True), clock)
    other.tick()
    loop = Loop(controller, lost=lambda lease: pytest.fail("nothing was lost"))
    running(loop)
    loop.callbacks.new_leader(other.leader())
    until(lambda: published_tick(controller) == 1, "the leader's tick, read from the store")
    assert controller.lease is None and controller.ready()
    mine = acquire_lease(store, "me", 15.0, force=True)
    assert mine is not None
    loop.callbacks.started(mine)
    until(lambda: published_tick(controller) == 2, "its own tick, numbered on from the store")


def test_a_lease_lost_in_a_tick_goes_back_to_the_elector(
    setup: tuple[Controller, InMemorySupply],
    store: Store,
    running: Callable[[Loop], threading.Thread],
) -> None:
    controller, supply = setup
    controller.demand_sink().accept([DemandReport("search/batch", 60)])  # a resize is due
    lease = acquire_lease(store, "me", 15.0, force=True)
    assert lease is not None
    assert acquire_lease(store, "usurper", 15.0, force=True) is not None
    lost: list[Lease] = []
    loop = Loop(controller, lost=lost.append)
    running(loop)
    loop.callbacks.started(lease)
    until(lambda: lost, "the lost lease handed back")
    assert lost == [lease] and controller.lease is None
    assert published_tick(controller) == 0 and supply.calls["write"] == 0


def test_a_late_stop_of_an_older_lease_does_not_cancel_the_new_one(
    setup: tuple[Controller, InMemorySupply],
    store: Store,
    running: Callable[[Loop], threading.Thread],
) -> None:
    controller, _supply = setup
    old = Lease("me-before", 1)  # the lease this process held before it stepped down
    new = acquire_lease(store, "me-again", 15.0, force=True)
    assert new is not None and new != old
    loop = Loop(controller, lost=lambda lease: pytest.fail("nothing was lost"))
    running(loop)
    loop.callbacks.started(new)
    until(lambda: published_tick(controller) == 1, "the first tick under the new lease")
    followed = follows(controller)
    turn = loop._turn  # raised by every piece of news that stops the running job
    loop.callbacks.stopped(old)  # news of the lease before, told late (handled in this call)
    assert loop._turn == turn, "a late stop of the older lease cancelled the new one's loop"
    assert controller.lease == new and not followed.is_set()
    loop.callbacks.stopped(new)
    assert followed.wait(5) and controller.lease is None  # its own stop does
