"""A controller-like writer for the interruption test: ticks of demand history, each adding one
lane, that kills itself (SIGKILL: no cleanup, no rollback sent) right after a chosen statement of
a chosen tick, inside that tick's transaction.

``python -m tests.store.history_writer URL STATEMENT TICK`` prints each committed tick.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from sqlalchemy import event

from arklow_pulumi.store import open_store
from arklow_pulumi.store.runtime import TickRecord, acquire_lease, write_tick

BASE_LANES = 2_000


def rows_of(tick: int) -> list[tuple[str, float]]:
    """Tick ``tick``'s history: lanes 0 .. BASE_LANES + tick - 1 (one new lane a tick)."""
    return [(f"d{i % 7}/l{i}", float(tick) + i / 8) for i in range(BASE_LANES + tick)]


def main(url: str, statement: str, kill_tick: int) -> None:
    store = open_store(url)
    lease = acquire_lease(store, "writer", 60.0, force=True)
    assert lease is not None
    current = [0]

    def die_after(_conn: Any, _cursor: Any, sql: str, *_rest: Any) -> None:
        if current[0] == kill_tick and sql.lstrip().startswith(statement):
            os.kill(os.getpid(), signal.SIGKILL)

    event.listen(store.engine, "after_cursor_execute", die_after)
    for tick in range(1, kill_tick + 1):
        current[0] = tick
        record = TickRecord(
            tick, float(tick), {"tick": tick}, demand=rows_of(tick), history_before=0.0
        )
        write_tick(store, lease, record)
        print(tick, flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
