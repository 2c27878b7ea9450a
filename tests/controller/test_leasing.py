"""Who may run the controller: the SQLite elector (its file lock released by the kernel, even after
kill -9) and the lease row with its epoch, judged by the database clock, on SQLite and PostgreSQL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from arklow_pulumi.controller.leadership.electing import LeaseElector, LeaseTiming
from arklow_pulumi.controller.leadership.leasing import (
    AlreadyRunning,
    holder_id,
    lock_path,
    take_leadership,
)
from arklow_pulumi.controller.ports import LeaderCallbacks, LeaderView
from arklow_pulumi.store.engine import Store, close_stores, open_store
from arklow_pulumi.store.runtime import (
    LeaseLost,
    TickRecord,
    acquire_lease,
    read_lease,
    renew_lease,
    store_demand_reports,
    write_tick,
)
from tests.store import postgres_server


def test_a_second_controller_on_one_sqlite_file_refuses(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'arklow.db'}")
    first = take_leadership(store)
    try:
        assert first.lease.epoch == 1
        with pytest.raises(AlreadyRunning, match="already running") as refused:
            take_leadership(store)
        assert f"pid {os.getpid()}" in str(refused.value)
        assert "\n" not in str(refused.value)
    finally:
        first.release()
    again = take_leadership(store)  # released: the next one starts
    again.release()
    close_stores()


def test_the_file_lock_does_not_outlive_a_killed_holder(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'arklow.db'}"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import sys, time
                from arklow_pulumi.controller.leadership.leasing import take_leadership
                from arklow_pulumi.store.engine import open_store
                held = take_leadership(open_store({url!r}))
                print("held", flush=True)
                time.sleep(600)
                """
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        store = open_store(url)
        with pytest.raises(AlreadyRunning):
            take_leadership(store)
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
        taken = take_leadership(store)  # no stale lock: the kernel dropped it with the process
        assert taken.lease.epoch == 1
        assert read_lease(store).holder == taken.lease.holder
        taken.release()
        path = lock_path(store)
        assert path is not None and path.name == "arklow.db.controller.lock"
    finally:
        holder.kill()
        holder.wait(timeout=30)
        close_stores()


def test_a_live_lease_is_not_taken_and_an_expired_one_is_with_a_new_epoch(
    any_store: Store,
) -> None:
    first = acquire_lease(any_store, "a", ttl_s=3600)
    assert first is not None and first.epoch == 1
    assert acquire_lease(any_store, "b", ttl_s=3600) is None  # live, by the database clock
    assert acquire_lease(any_store, "a", ttl_s=3600) == first  # its holder keeps its epoch
    # Expired: a negative TTL, so that it does not depend on the database clock moving between
    # two statements (SQLite's 'now' has millisecond steps: a 0 s TTL once found it unmoved).
    second = acquire_lease(any_store, "b", ttl_s=-1.0)
    assert second is not None and second.epoch == 2
    state = read_lease(any_store)
    assert (state.holder, state.epoch) == ("b", 2)
    assert state.age_s is not None and 0 <= state.age_s < 3600


def test_every_runtime_write_is_fenced_by_the_epoch(any_store: Store) -> None:
    old = acquire_lease(any_store, "a", ttl_s=3600)
    assert old is not None
    store_demand_reports(any_store, old, [("d/l", 1.0)], at=1.0)
    new = acquire_lease(any_store, "b", ttl_s=-1.0)  # expired, whatever the clock did
    assert new is not None and new.epoch == old.epoch + 1
    record = TickRecord(tick=1, at=2.0, published={"tick": 1}, demand=[("d/l", 5.0)])
    with pytest.raises(LeaseLost):
        write_tick(any_store, old, record)
    with pytest.raises(LeaseLost):
        store_demand_reports(any_store, old, [("d/l", 2.0)], at=2.0)
    with pytest.raises(LeaseLost):
        renew_lease(any_store, old)
    write_tick(any_store, new, record)  # the holder of the current epoch writes
    renew_lease(any_store, new)


def test_the_sqlite_elector_leads_from_start_to_stop_and_gives_everything_up(
    tmp_path: Path,
) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'arklow.db'}")
    events: list[tuple[str, int]] = []
    callbacks = LeaderCallbacks(
        started=lambda lease: events.append(("started", lease.epoch)),
        stopped=lambda lease: events.append(("stopped", lease.epoch)),
    )
    elector = take_leadership(store)
    try:
        assert elector.leading() == elector.lease and elector.lease.epoch == 1
        assert elector.view() == LeaderView(True, elector.lease.holder, 1)
        stop = threading.Event()
        keeper = threading.Thread(target=elector.run, args=(stop, callbacks))
        keeper.start()
        stop.set()
        keeper.join(timeout=30)
        assert events == [("started", 1), ("stopped", 1)]
        assert read_lease(store).holder is None  # given up
        take_leadership(store).release()  # and the lock file with it
    finally:
        elector.release()
        close_stores()


def test_the_sqlite_elector_whose_lease_was_taken_stops_leading_for_good(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'arklow.db'}")
    events: list[str] = []
    elector = take_leadership(store)
    try:
        stop = threading.Event()
        errors: list[BaseException] = []

        def keep() -> None:
            try:
                elector.run(stop, LeaderCallbacks(stopped=lambda lease: events.append("stopped")))
            except LeaseLost as exc:
                errors.append(exc)

        keeper = threading.Thread(target=keep)
        keeper.start()
        elector.lost(elector.lease)  # a fenced write found it taken
        keeper.join(timeout=30)
        assert not keeper.is_alive() and events == ["stopped"] and len(errors) == 1
        assert elector.leading() is None and not elector.view().leader
    finally:
        stop.set()
        elector.release()
        close_stores()


@pytest.mark.postgres
def test_on_postgresql_a_starting_replica_stands_by_behind_a_live_holder_and_takes_a_dead_ones(
    postgres: postgres_server.Cluster,
) -> None:
    store = open_store(postgres.create_database())
    try:
        dead = acquire_lease(store, "crashed-controller", ttl_s=3600)
        assert dead is not None
        events: list[tuple[str, str | None, int]] = []
        replica = LeaseElector(store, holder_id(), LeaseTiming(3600.0, 3000.0, 1.0))
        replica.callbacks = LeaderCallbacks(
            started=lambda lease: events.append(("started", lease.holder, lease.epoch)),
            stopped=lambda lease: events.append(("stopped", lease.holder, lease.epoch)),
            new_leader=lambda view: events.append(("new leader", view.holder, view.epoch)),
        )
        replica._round()
        assert replica.leading() is None
        assert events == [("new leader", "crashed-controller", 1)]
        renew_lease(store, dead)  # the holder is alive: it renews
        replica._round()
        assert replica.leading() is None and len(events) == 1  # told once
        # As if the TTL had elapsed by the database clock with no renewal: age it.
        with store.engine.begin() as conn:
            conn.exec_driver_sql("UPDATE controller_lease SET renewed_at = renewed_at - 7200")
        replica._round()
        taken = replica.leading()
        assert taken is not None and taken.epoch == dead.epoch + 1
        assert events[-1] == ("started", taken.holder, taken.epoch)
        with pytest.raises(LeaseLost):
            renew_lease(store, dead)  # the crashed holder, back, is fenced off
        replica.release()
        assert events[-1] == ("stopped", taken.holder, taken.epoch)
        assert read_lease(store).holder is None
    finally:
        close_stores()
