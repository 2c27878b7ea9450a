"""Demand history packed one row per tick (arklow_pulumi/store/history_packing.py): a lane
dictionary (``runtime_demand_lanes``) and one ``runtime_demand_ticks`` row per tick holding the
tick's lane ids (int32 little-endian) and demands (float64 little-endian) as two blobs, instead of
one ``runtime_demand_history`` row per lane per tick.

Upgrade packs the existing rows, one packed row per (tick, at), rows in id order; downgrade
unpacks them again. The packing is written out here (not imported) so this revision keeps
meaning what it meant when the format changes.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

_BATCH = 10_000  # old rows fetched at a time (upgrade), packed rows inserted at a time


def upgrade() -> None:
    op.create_table(
        "runtime_demand_lanes",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("lane", sa.String(511), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_runtime_demand_lanes"),
        sa.UniqueConstraint("lane", name="uq_runtime_demand_lanes_lane"),
    )
    op.create_table(
        "runtime_demand_ticks",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("tick", sa.BigInteger(), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
        sa.Column("n", sa.Integer(), nullable=False),
        sa.Column("lanes", sa.LargeBinary(), nullable=False),
        sa.Column("demands", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_runtime_demand_ticks"),
    )
    op.create_index("ix_runtime_demand_ticks_at", "runtime_demand_ticks", ["at", "id"])
    conn = op.get_bind()
    # Lanes numbered in the order they first appear.
    conn.execute(
        sa.text(
            "INSERT INTO runtime_demand_lanes (lane) SELECT lane FROM runtime_demand_history "
            "GROUP BY lane ORDER BY MIN(id)"
        )
    )
    ids = {
        lane: id_
        for id_, lane in conn.execute(sa.text("SELECT id, lane FROM runtime_demand_lanes"))
    }
    packed: list[dict[str, Any]] = []
    held = 0  # lane rows in ``packed``
    for (tick, at), rows in _ticks(conn):
        lanes = array("i", [ids[lane] for lane, _demand in rows])
        demands = array("d", [demand for _lane, demand in rows])
        packed.append(
            {"tick": tick, "at": at, "n": len(rows), "lanes": _le(lanes), "demands": _le(demands)}
        )
        held += len(rows)
        if held >= _BATCH:  # inserted while the old rows are still being read
            _insert_ticks(conn, packed)
            packed, held = [], 0
    _insert_ticks(conn, packed)
    op.drop_index("ix_runtime_demand_history_at", "runtime_demand_history")
    op.drop_table("runtime_demand_history")


def downgrade() -> None:
    op.create_table(
        "runtime_demand_history",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("tick", sa.BigInteger(), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
        sa.Column("lane", sa.String(511), nullable=False),
        sa.Column("demand", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_runtime_demand_history"),
    )
    op.create_index("ix_runtime_demand_history_at", "runtime_demand_history", ["at"])
    conn = op.get_bind()
    lane_rows = conn.execute(sa.text("SELECT id, lane FROM runtime_demand_lanes"))
    names: dict[int, str] = {id_: lane for id_, lane in lane_rows}
    insert = sa.text(
        "INSERT INTO runtime_demand_history (tick, at, lane, demand) "
        "VALUES (:tick, :at, :lane, :demand)"
    )
    last = None
    while True:  # packed rows a few at a time, in (at, id) order: the order readers use
        query = "SELECT id, tick, at, lanes, demands FROM runtime_demand_ticks"
        if last is not None:
            query += " WHERE at > :at OR (at = :at AND id > :id)"
        page = conn.execute(
            sa.text(query + " ORDER BY at, id LIMIT 16"),
            {} if last is None else {"at": last[0], "id": last[1]},
        ).all()
        if not page:
            break
        for id_, tick, at, lane_blob, demand_blob in page:
            lanes, demands = array("i"), array("d")
            lanes.frombytes(bytes(lane_blob))
            demands.frombytes(bytes(demand_blob))
            if sys.byteorder == "big":  # pragma: no cover
                lanes.byteswap()
                demands.byteswap()
            rows = [
                {"tick": tick, "at": at, "lane": names[lane], "demand": demand}
                for lane, demand in zip(lanes, demands, strict=True)
            ]
            conn.execute(insert, rows)
            last = (at, id_)
    op.drop_index("ix_runtime_demand_ticks_at", "runtime_demand_ticks")
    op.drop_table("runtime_demand_ticks")
    op.drop_table("runtime_demand_lanes")


def _ticks(conn: sa.Connection) -> Iterator[tuple[tuple[int, float], list[tuple[str, float]]]]:
    """The old rows of each (tick, at), in id order within it; ticks in time order."""
    # Streamed (a server-side cursor on PostgreSQL), for this statement only.
    result = conn.execute(
        sa.text("SELECT tick, at, lane, demand FROM runtime_demand_history ORDER BY at, tick, id"),
        execution_options={"yield_per": _BATCH},
    )
    key: tuple[int, float] | None = None
    rows: list[tuple[str, float]] = []
    for tick, at, lane, demand in result:
        if (tick, at) != key:
            if key is not None:
                yield key, rows
            key, rows = (tick, at), []
        rows.append((lane, demand))
    if key is not None:
        yield key, rows


def _insert_ticks(conn: sa.Connection, packed: list[dict[str, Any]]) -> None:
    if not packed:
        return
    table = sa.table(
        "runtime_demand_ticks",
        sa.column("tick"),
        sa.column("at"),
        sa.column("n"),
        sa.column("lanes", sa.LargeBinary()),
        sa.column("demands", sa.LargeBinary()),
    )
    conn.execute(sa.insert(table), packed)


def _le(values: array[int] | array[float]) -> bytes:
    if sys.byteorder == "big":  # pragma: no cover
        values.byteswap()
    return values.tobytes()
