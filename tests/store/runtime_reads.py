"""Reads and writes of the runtime store that only the tests make (the controller never asks for
them), each through the store's own tables and functions."""

from __future__ import annotations

from sqlalchemy import func, select

from arklow_pulumi.store import demand_history, runtime
from arklow_pulumi.store.engine import Store, reading
from arklow_pulumi.store.runtime import Lease


def history_rows(store: Store) -> int:
    """How many (lane, demand) history rows the store holds (lane rows, not tick rows)."""
    with reading(store) as conn:
        total = select(func.coalesce(func.sum(runtime.HISTORY.c.n), 0))
        return int(conn.execute(total).scalar_one())


def prune_history(store: Store, lease: Lease, before: float) -> int:
    """Delete one batch of demand-history rows older than ``before`` under ``lease`` (whole tick
    rows, oldest first, until ``runtime.PRUNE_BATCH`` lane rows went); how many lane rows went."""
    with store.engine.begin() as conn:
        runtime._check(conn, lease)
        return demand_history.prune(conn, before, runtime.PRUNE_BATCH)


def load_demand_reports(store: Store) -> dict[str, tuple[float, float]]:
    """lane -> (demand, reported_at), from every lane's latest report (one row per lane)."""
    reports = runtime.REPORTS
    with reading(store) as conn:
        rows = conn.execute(select(reports.c.lane, reports.c.demand, reports.c.reported_at))
        return {lane: (demand, at) for lane, demand, at in rows}


def forget_lanes(store: Store) -> None:
    """Drop the store's cached lane ids (the next write reads them again)."""
    demand_history._LANE_IDS.pop(store, None)
