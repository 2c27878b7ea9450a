"""The store's checkpoint (the controller runs it between ticks): SQLite's log copied back into
the database file, without waiting on anyone; nothing to do on PostgreSQL."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from arklow_pulumi.store.engine import Store, checkpoint, open_store
from tests.builders import dest, lane, pool, topo
from tests.controller_process import put_topology


def _write(store: Store, capacity: float) -> None:
    value = topo([dest("d", ["gpu"], lane("l", 8))], [pool("p", "gpu", ["d"], capacity)])
    put_topology(store, value)


def test_sqlite_log_goes_back_into_the_file_and_is_reused(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'a.db'}")
    _write(store, 4.0)
    frames, copied = checkpoint(store)
    assert frames > 0 and copied == frames
    # A reader that started before does not stop it (PASSIVE copies what it can, never waits).
    reader = sqlite3.connect(tmp_path / "a.db")
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM pools").fetchall()
    _write(store, 5.0)
    frames, copied = checkpoint(store)
    assert 0 <= copied <= frames
    reader.rollback()
    reader.close()
    frames, copied = checkpoint(store)
    assert copied == frames
    assert load_all_capacity(tmp_path / "a.db") == 5.0


def load_all_capacity(path: Path) -> float:
    with sqlite3.connect(path) as db:
        (value,) = db.execute("SELECT capacity FROM pools WHERE name = 'p'").fetchone()
    return float(value)


def test_postgresql_has_nothing_to_do(store: Store) -> None:
    if store.dialect == "sqlite":
        assert checkpoint(store)[0] >= 0
    else:
        assert checkpoint(store) == (0, 0)
