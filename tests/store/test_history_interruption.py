"""kill -9 of a writer inside a tick's transaction: the store holds that tick's demand history
whole or not at all (its packed row, the lanes it added to the dictionary and the published tick
go together), and the next writer carries on from the ticks that committed."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import select

from arklow_pulumi.store import open_store
from arklow_pulumi.store.demand_history import LANES, TICKS
from arklow_pulumi.store.engine import close_stores
from arklow_pulumi.store.history_packing import unpack_demands, unpack_lanes
from arklow_pulumi.store.runtime import (
    TickRecord,
    acquire_lease,
    demand_trace,
    load_published,
    write_tick,
)
from tests.store.history_writer import rows_of

ROOT = Path(__file__).resolve().parents[2]
KILL_TICK = 3


def check_whole_ticks(url: str) -> list[int]:
    """Every stored tick is whole; the dictionary holds exactly the lanes stored ticks use."""
    store = open_store(url, read_only=True)
    with store.engine.connect() as conn:
        names = dict(conn.execute(select(LANES.c.id, LANES.c.lane)).all())
        ticks = conn.execute(
            select(TICKS.c.tick, TICKS.c.n, TICKS.c.lanes, TICKS.c.demands).order_by(TICKS.c.id)
        ).all()
    used: set[str] = set()
    for tick, n, lane_blob, demand_blob in ticks:
        lanes, demands = unpack_lanes(lane_blob), unpack_demands(demand_blob)
        assert n == len(lanes) == len(demands)
        rows = [(names[lane], demand) for lane, demand in zip(lanes, demands, strict=True)]
        assert rows == rows_of(tick)
        used.update(lane for lane, _demand in rows)
    assert set(names.values()) == used
    return [tick for tick, *_rest in ticks]


@pytest.mark.parametrize(
    "statement",
    ["INSERT INTO runtime_demand_lanes", "INSERT INTO runtime_demand_ticks", "DELETE"],
    ids=["after-new-lanes", "after-tick-row", "after-prune"],
)
def test_kill_9_inside_a_tick_leaves_it_whole_or_absent(store_url: str, statement: str) -> None:
    if statement == "DELETE":  # the tick's last statements: the prune (nothing due) of reports
        statement = "DELETE FROM runtime_demand_reports"
    open_store(store_url)  # migrated before the writer starts
    close_stores()
    done = subprocess.run(
        [sys.executable, "-m", "tests.store.history_writer", store_url, statement, str(KILL_TICK)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert done.stdout.split() == [str(t) for t in range(1, KILL_TICK)]
    try:
        assert check_whole_ticks(store_url) == list(range(1, KILL_TICK))
        store = open_store(store_url)
        published = load_published(store)
        assert published is not None and published.tick == KILL_TICK - 1
        # The next writer (its own lane cache, read from the store) writes the lost tick again.
        lease = acquire_lease(store, "next", 60.0, force=True)
        assert lease is not None
        rows = rows_of(KILL_TICK)
        write_tick(store, lease, TickRecord(KILL_TICK, float(KILL_TICK), {}, demand=rows))
        assert check_whole_ticks(store_url) == list(range(1, KILL_TICK + 1))
        trace = demand_trace(store, KILL_TICK - 0.5)
        assert sorted((lane, d) for _at, lane, d in trace if _at == KILL_TICK) == sorted(rows)
    finally:
        close_stores()
