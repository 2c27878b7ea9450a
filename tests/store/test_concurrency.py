"""Concurrent writers in separate processes never break an invariant.

Every writer applies random joins, leaves, pool and destination deletions and creations to the
same destinations and pools. The rules alone would race (two writers each reading "d1 is in its
standalone pool" and moving it); the writer lock makes each change see the one before it, so no
write is ever refused by a constraint and the final topology holds every invariant.
"""

from __future__ import annotations

import multiprocessing

import pytest

from arklow_pulumi.core.topology import Destination, Pool
from arklow_pulumi.store import open_store
from arklow_pulumi.store import service as svc
from arklow_pulumi.store.engine import close_stores
from tests.store import writers
from tests.store.invariants import violations

WRITERS = 4
OPERATIONS = 120


def _seed(url: str) -> None:
    store = open_store(url)
    for name in writers.DESTINATIONS:
        svc.create_destination(store, Destination(name, ("gpu", "cpu")))
    for name in writers.SHARED:
        svc.create_pool(store, Pool(name, "gpu"))
    close_stores()


def _race(url: str) -> list[tuple[int, int, list[str]]]:
    _seed(url)
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Event()
    results = ctx.Queue()
    procs = [
        ctx.Process(target=writers.run, args=(url, seed, OPERATIONS, start, results))
        for seed in range(WRITERS)
    ]
    for proc in procs:
        proc.start()
    start.set()
    outcome = [results.get(timeout=120) for _ in procs]
    for proc in procs:
        proc.join(timeout=30)
        assert proc.exitcode == 0
    return outcome


def _check(url: str, outcome: list[tuple[int, int, list[str]]]) -> None:
    assert [u for _, _, unexpected in outcome for u in unexpected] == []
    assert sum(done for done, _, _ in outcome) > WRITERS * OPERATIONS // 3  # real work happened
    topo = svc.stored_topology(open_store(url))
    assert violations(topo) == []
    close_stores()


@pytest.mark.postgres
def test_concurrent_writers_on_postgresql(postgres_url: str) -> None:
    _check(postgres_url, _race(postgres_url))


def test_concurrent_writers_on_sqlite(sqlite_url: str) -> None:
    _check(sqlite_url, _race(sqlite_url))
