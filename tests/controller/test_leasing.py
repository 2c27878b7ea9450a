"""Who may run the controller: the SQLite file lock (released by the kernel, even after kill -9)
and the lease row with its epoch, judged by the database clock, on SQLite and PostgreSQL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from arklow_pulumi.controller.leasing import AlreadyRunning, lock_path, take_leadership
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


@pytest.fixture(scope="module")
def postgres() -> Iterator[postgres_server.Cluster]:
    yield postgres_server.cluster()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'arklow.db'}"
    else:
        url = request.getfixturevalue("postgres").create_database()
    yield open_store(url)
    close_stores()


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
                from arklow_pulumi.controller.leasing import take_leadership
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
    second = acquire_lease(any_store, "b", ttl_s=0.0)  # expired (renewed more than 0 s ago)
    assert second is not None and second.epoch == 2
    state = read_lease(any_store)
    assert (state.holder, state.epoch) == ("b", 2)
    assert state.age_s is not None and 0 <= state.age_s < 3600


def test_every_runtime_write_is_fenced_by_the_epoch(any_store: Store) -> None:
    old = acquire_lease(any_store, "a", ttl_s=3600)
    assert old is not None
    store_demand_reports(any_store, old, [("d/l", 1.0)], at=1.0)
    new = acquire_lease(any_store, "b", ttl_s=0.0)
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


@pytest.mark.postgres
def test_on_postgresql_a_restart_waits_out_a_dead_holder_and_refuses_a_live_one(
    postgres: postgres_server.Cluster,
) -> None:
    store = open_store(postgres.create_database())
    try:
        dead = acquire_lease(store, "crashed-controller", ttl_s=3600)
        assert dead is not None
        waited: list[float] = []

        def live_holder_renews(seconds: float) -> None:
            waited.append(seconds)
            renew_lease(store, dead)  # the holder is alive: it renewed while we waited

        with pytest.raises(AlreadyRunning, match="crashed-controller"):
            take_leadership(store, ttl_s=3600, sleep=live_holder_renews)
        assert len(waited) == 1 and 0 < waited[0] <= 3600.5  # one wait, at most the TTL

        def time_passes(seconds: float) -> None:
            waited.append(seconds)
            # As if the TTL had elapsed by the database clock with no renewal: age it.
            with store.engine.begin() as conn:
                conn.exec_driver_sql("UPDATE controller_lease SET renewed_at = renewed_at - 7200")

        taken = take_leadership(store, ttl_s=3600, sleep=time_passes)
        assert taken.lease.epoch == dead.epoch + 1 and taken.lock is None
        with pytest.raises(LeaseLost):
            renew_lease(store, dead)  # the crashed holder, back, is fenced off
        taken.release()
    finally:
        close_stores()
