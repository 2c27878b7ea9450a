"""Pruning the runtime history: oldest rows first, found through the index on ``at``.

A tick prunes every time it writes. Ordered by id alone, SQLite found the rows to delete by
walking the whole history table in id order (a week of ticks), every tick, even when nothing was
old enough to go. The plan of the statement that finds them is read back here. The history is one
packed row per tick: the rows go as whole ticks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import event, select

from arklow_pulumi.store import open_store
from arklow_pulumi.store.engine import writing
from arklow_pulumi.store.runtime import HISTORY, TickRecord, acquire_lease, write_tick
from tests.store.runtime_reads import history_rows, prune_history


def test_prune_deletes_the_oldest_rows_through_the_index_on_at(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'arklow.db'}")
    lease = acquire_lease(store, "test", 15.0, force=True)
    assert lease is not None
    # ids and times in different orders: a lane's late row may get a low id after a restore
    for k, at in enumerate([50, 10, 40, 20, 30, 60, 70]):
        demand = [(f"d/l{k}", 1.0), (f"d/m{k}", 2.0)]
        write_tick(store, lease, TickRecord(tick=k, at=float(at), published={}, demand=demand))
    assert history_rows(store) == 14

    statements: list[tuple[str, Any]] = []

    def seen(_conn: Any, _cursor: Any, sql: str, params: Any, *_rest: Any) -> None:
        if sql.lstrip().upper().startswith("SELECT") and HISTORY.name in sql:
            statements.append((sql, params))

    event.listen(store.engine, "before_cursor_execute", seen)
    try:
        removed = prune_history(store, lease, before=45.0)
    finally:
        event.remove(store.engine, "before_cursor_execute", seen)

    with writing(store) as conn:
        left = sorted(conn.execute(select(HISTORY.c.at)).scalars())
    assert removed == 8  # lane rows: four ticks of two lanes
    assert left == [50.0, 60.0, 70.0]

    (sql, params), *_ = statements
    with writing(store) as conn:
        plan = [row[-1] for row in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}", params)]
    assert any("INDEX ix_runtime_demand_ticks_at" in step for step in plan), plan
    assert not any(step.startswith("SCAN runtime_demand_ticks") for step in plan), plan
