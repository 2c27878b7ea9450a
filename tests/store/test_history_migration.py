"""Migration 0005 on a store holding one-row-per-lane demand history (revision 0004): upgrade
packs it into one row per tick with the same meaning for every reader, downgrade gives the same
rows back (SQLite and PostgreSQL)."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, text

from arklow_pulumi.store import open_store
from arklow_pulumi.store.engine import SCHEMA_REVISION, close_stores, normalize_url
from arklow_pulumi.store.runtime import demand_trace, load_snapshot
from tests.store.migrating import migrate
from tests.store.runtime_reads import history_rows

# (tick, at, lane, demand) in id order, as ticks wrote them at 0004: a tick's rows together, a
# lane twice in one tick (its later row is its newer), exact floats, a tick with one lane only.
OLD_ROWS = [
    (1, 100.0, "search/batch", 0.1),
    (1, 100.0, "search/interactive", 5e-324),
    (1, 100.0, "reports/nightly", 1e12),
    (2, 110.0, "search/batch", 1 / 3),
    (3, 120.0, "search/batch", 0.0),  # SQLite REAL keeps no -0.0
    (3, 120.0, "search/interactive", 2.0),
    (3, 120.0, "search/interactive", 3.0),
    (4, 130.0, "é/ünï", 2.2250738585072014e-308),
]


def _store_at_0004(store_url: str, rows: list[dict[str, Any]]) -> Engine:
    """An engine on the store at ``store_url`` (its SQLite file's folder made) migrated to 0004 and
    holding ``rows`` (tick, at, lane, demand) of one-row-per-lane history."""
    if store_url.startswith("sqlite:///"):
        Path(store_url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(normalize_url(store_url))
    try:
        migrate(engine, "upgrade", "0004")
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO runtime_demand_history (tick, at, lane, demand) "
                    "VALUES (:tick, :at, :lane, :demand)"
                ),
                rows,
            )
    except BaseException:
        engine.dispose()
        raise
    return engine


def _bits(rows: list[tuple[float, str, float]]) -> list[tuple[bytes, str, bytes]]:
    return [(struct.pack("<d", a), lane, struct.pack("<d", d)) for a, lane, d in rows]


def test_history_is_packed_on_upgrade_and_unpacked_on_downgrade(store_url: str) -> None:
    old = [dict(zip(("tick", "at", "lane", "demand"), row, strict=True)) for row in OLD_ROWS]
    engine = _store_at_0004(store_url, old)
    try:
        store = open_store(store_url)  # a writer: migrates to the newest revision
        with engine.connect() as conn:
            version = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
            assert version == SCHEMA_REVISION
            packed = conn.execute(text("SELECT tick, at, n FROM runtime_demand_ticks ORDER BY id"))
            assert packed.all() == [(1, 100.0, 3), (2, 110.0, 1), (3, 120.0, 3), (4, 130.0, 1)]
        assert history_rows(store) == len(OLD_ROWS)
        assert _bits(demand_trace(store, 105.0)) == _bits(
            [
                (105.0, "reports/nightly", 1e12),
                (105.0, "search/batch", 0.1),
                (105.0, "search/interactive", 5e-324),
                (110.0, "search/batch", 1 / 3),
                (120.0, "search/batch", 0.0),
                (120.0, "search/interactive", 2.0),
                (120.0, "search/interactive", 3.0),
                (130.0, "é/ünï", 2.2250738585072014e-308),
            ]
        )
        assert load_snapshot(store, 0.0).last_demand == {
            "search/batch": (0.0, 120.0),
            "search/interactive": (3.0, 120.0),
            "reports/nightly": (1e12, 100.0),
            "é/ünï": (2.2250738585072014e-308, 130.0),
        }
        close_stores()

        migrate(engine, "downgrade", "0004")
        with engine.connect() as conn:
            back = conn.execute(
                text("SELECT tick, at, lane, demand FROM runtime_demand_history ORDER BY id")
            ).all()
            tables = set(
                conn.execute(
                    text(
                        "SELECT name FROM sqlite_master WHERE type = 'table'"
                        if engine.dialect.name == "sqlite"
                        else "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
                    )
                ).scalars()
            )
        assert [(t, a, lane, struct.pack("<d", d)) for t, a, lane, d in back] == [
            (t, a, lane, struct.pack("<d", d)) for t, a, lane, d in OLD_ROWS
        ]
        assert not {"runtime_demand_ticks", "runtime_demand_lanes"} & tables

        migrate(engine, "upgrade", "head")  # and up again: the same packed history
        store = open_store(store_url)
        assert _bits(demand_trace(store, 0.0)) == _bits(
            [(a, lane, d) for _t, a, lane, d in sorted(OLD_ROWS, key=lambda r: (r[1], r[2]))]
        )
    finally:
        close_stores()
        engine.dispose()


def test_a_history_larger_than_a_batch_is_packed_whole(store_url: str) -> None:
    """More old rows than the migration reads at a time: packed rows are inserted while the old
    ones are still streamed (a server-side cursor on PostgreSQL)."""
    old = [
        {"tick": tick, "at": 10.0 * tick, "lane": f"d{lane % 9}/l{lane}", "demand": tick + lane / 7}
        for tick in range(1, 15)
        for lane in range(1_500 + tick)
    ]
    engine = _store_at_0004(store_url, old)
    try:
        store = open_store(store_url)
        assert history_rows(store) == len(old)
        expected = sorted(((r["at"], r["lane"], r["demand"]) for r in old), key=lambda r: r[:2])
        assert _bits(demand_trace(store, 0.0)) == _bits(expected)
    finally:
        close_stores()
        engine.dispose()
