"""The controller's runtime state in the store: the lease, demand reports, the tick's record.

Every write here is a plain transaction on the runtime tables (never
:func:`arklow_pulumi.store.engine.writing`, the topology's writer lock), made in batches
(``executemany``), and *fenced*: it names the lease it writes under, and the same transaction
compares the lease row's holder and epoch with it before anything else (Kleppmann's fencing token,
client-go's lease without its gap). A replica whose lease was taken over writes nothing.

The lease is judged by the database clock (``renewed_at`` is set by the database, and expiry is
``db_now - renewed_at > ttl`` computed there), never by a replica's wall clock. On SQLite the
controller is one process, serialized by a file lock beside the database, so it takes the lease
unconditionally with epoch 1; on PostgreSQL an acquisition that takes over bumps the epoch.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import (
    Connection,
    Table,
    delete,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.exc import DBAPIError, IntegrityError

from arklow_pulumi.store import demand_history
from arklow_pulumi.store.demand_history import TICK_COLUMNS, TICKS, DemandRows
from arklow_pulumi.store.engine import Store, StoreError, reading
from arklow_pulumi.store.runtime_tables import (
    LEASE_NAME,
    ControllerLeaseRow,
    DemandReportRow,
    PublishedRow,
    RecommendationRow,
    TargetStateRow,
)
from arklow_pulumi.store.tables import table_of

LEASE = table_of(ControllerLeaseRow)
TARGETS = table_of(TargetStateRow)
RECOMMENDATIONS = table_of(RecommendationRow)
REPORTS = table_of(DemandReportRow)
HISTORY: Table = TICKS  # the demand history: one packed row per tick (demand_history.py)
PUBLISHED = table_of(PublishedRow)

PUBLISHED_NAME = "admission"
# Rows pruned at a time: recommendation rows; for the demand history, lane rows (whole tick rows
# until this many lane rows went).
PRUNE_BATCH = 5000
_DB_NOW = {
    "sqlite": "(julianday('now') - 2440587.5) * 86400.0",
    "postgresql": "CAST(EXTRACT(EPOCH FROM clock_timestamp()) AS DOUBLE PRECISION)",
}


class LeaseLost(StoreError):
    """The lease this process wrote under is no longer its own: nothing was written."""

    @classmethod
    def taken_over(cls, lease: Lease, then: str = "") -> LeaseLost:
        """Said one way wherever a take-over is found: the store's fenced writes, the electors."""
        return cls(f"controller lease epoch {lease.epoch} was taken over{then}")


@dataclass(frozen=True, slots=True)
class Lease:
    holder: str
    epoch: int


@dataclass(frozen=True, slots=True)
class LeaseState:
    """The lease row as the database sees it; ``age_s`` by the database clock."""

    holder: str | None
    epoch: int
    age_s: float | None


@dataclass(frozen=True, slots=True)
class TargetRecord:
    target: str
    pool: str
    in_service: int
    pending: int
    desired: int
    moved_at: float | None = None  # its last move (the scale policy's): when, and which way
    moved: int | None = None  # +1 up, -1 down


@dataclass(frozen=True, slots=True)
class TickRecord:
    """Everything one tick writes, in one fenced transaction."""

    tick: int
    at: float
    # The published document, or its JSON text already serialised (the tick's fast path).
    published: Mapping[str, Any] | str
    targets: Sequence[TargetRecord] = ()
    recommendations: Sequence[tuple[str, float, int]] = ()  # (target, at, replicas)
    demand: Sequence[tuple[str, float]] | DemandRows = ()  # history rows at ``at``
    # Rows older than these times are pruned in one batch per table per tick (PRUNE_BATCH, or
    # twice the rows the tick adds when that is more; history: whole tick rows, at least two).
    history_before: float | None = None
    recommendations_before: float | None = None


@dataclass(frozen=True, slots=True)
class RuntimeSnapshot:
    """What a starting controller reloads: the last tick and the scale-down history."""

    published: tuple[int, float, dict[str, Any]] | None
    targets: Mapping[str, TargetRecord] = field(default_factory=dict)
    recommendations: Mapping[str, list[tuple[float, int]]] = field(default_factory=dict)
    last_demand: Mapping[str, tuple[float, float]] = field(default_factory=dict)


# -- the database clock and the lease -------------------------------------------------------


def db_now(conn: Connection) -> float:
    return float(conn.execute(text(f"SELECT {_DB_NOW[conn.dialect.name]}")).scalar_one())


def _db_now_expr(conn: Connection) -> Any:
    return text(_DB_NOW[conn.dialect.name])


def acquire_lease(store: Store, holder: str, ttl_s: float, *, force: bool = False) -> Lease | None:
    """Take the lease for ``holder``; None while another holder renewed it within ``ttl_s``.

    ``force`` (SQLite, under the controller file lock) takes it whoever holds it, at epoch 1.
    Otherwise a take-over from another holder bumps the epoch by compare-and-set.
    """
    try:
        with store.engine.begin() as conn:
            now = db_now(conn)
            query = select(LEASE).where(LEASE.c.name == LEASE_NAME)
            if conn.dialect.name == "postgresql":
                query = query.with_for_update()
            row = conn.execute(query).first()
            if row is None:
                epoch = 1
                conn.execute(
                    insert(LEASE).values(
                        name=LEASE_NAME, holder=holder, epoch=epoch, renewed_at=now
                    )
                )
                return Lease(holder, epoch)
            live = row.holder not in (None, holder) and now - row.renewed_at <= ttl_s
            if live and not force:
                return None
            epoch = 1 if force else (row.epoch if row.holder == holder else row.epoch + 1)
            done = conn.execute(
                update(LEASE)
                .where(LEASE.c.name == LEASE_NAME, LEASE.c.epoch == row.epoch)
                .values(holder=holder, epoch=epoch, renewed_at=now)
            )
            return Lease(holder, epoch) if done.rowcount == 1 else None
    except IntegrityError:
        return None  # another replica inserted the first lease row at the same moment
    except DBAPIError as exc:
        raise StoreError(f"store {store.display_url}: {exc.orig}") from exc


def renew_lease(store: Store, lease: Lease) -> None:
    """Raises :class:`LeaseLost` when the lease is no longer ``lease``."""
    with _transaction(store) as conn:
        _renew(conn, lease)


def release_lease(store: Store, lease: Lease) -> None:
    """Give the lease up (graceful stop): the epoch stays, the holder goes."""
    with _transaction(store) as conn:
        conn.execute(
            update(LEASE)
            .where(LEASE.c.name == LEASE_NAME, _is(lease))
            .values(holder=None, renewed_at=_db_now_expr(conn))
        )


def read_lease(store: Store) -> LeaseState:
    with _transaction(store, readonly=True) as conn:
        now = db_now(conn)
        row = conn.execute(select(LEASE).where(LEASE.c.name == LEASE_NAME)).first()
    if row is None:
        return LeaseState(None, 0, None)
    return LeaseState(row.holder, row.epoch, max(0.0, now - row.renewed_at))


def _is(lease: Lease) -> Any:
    return (LEASE.c.holder == lease.holder) & (LEASE.c.epoch == lease.epoch)


def _renew(conn: Connection, lease: Lease) -> None:
    done = conn.execute(
        update(LEASE)
        .where(LEASE.c.name == LEASE_NAME, _is(lease))
        .values(renewed_at=_db_now_expr(conn))
    )
    if done.rowcount != 1:
        raise LeaseLost.taken_over(lease, "; nothing written")


def _check(conn: Connection, lease: Lease) -> None:
    query = select(LEASE.c.epoch).where(LEASE.c.name == LEASE_NAME, _is(lease))
    if conn.dialect.name == "postgresql":
        query = query.with_for_update(read=True)  # no take-over until this write commits
    if conn.execute(query).first() is None:
        raise LeaseLost.taken_over(lease, "; nothing written")


@contextmanager
def _transaction(store: Store, readonly: bool = False) -> Iterator[Connection]:
    """A runtime transaction; a database error (SQLAlchemy's, or the driver's own from a
    statement sent straight to the driver) becomes one :class:`StoreError` line."""
    driver_error: type[Exception] = store.engine.dialect.loaded_dbapi.Error
    try:
        if readonly:
            with reading(store) as conn:
                yield conn
        else:
            with store.engine.begin() as conn:
                yield conn
    except DBAPIError as exc:
        raise StoreError(f"store {store.display_url}: {exc.orig}") from exc
    except driver_error as exc:
        raise StoreError(f"store {store.display_url}: {exc}") from exc


# -- demand reports ---------------------------------------------------------------------------


def store_demand_reports(
    store: Store, lease: Lease | None, reports: Sequence[tuple[str, float]], at: float
) -> int:
    """Keep each lane's newest report (a batch is stored whole or not at all). ``lease`` None:
    a standby replica storing reports for the leader (client input, not a controller decision,
    so unfenced)."""
    if not reports:
        return 0
    latest = dict(reports)  # a lane twice in one batch: its last value wins
    with _transaction(store) as conn:
        if lease is not None:
            _check(conn, lease)
        _upsert(
            conn,
            REPORTS,
            [{"lane": lane, "demand": d, "reported_at": at} for lane, d in latest.items()],
            ("lane",),
        )
    return len(reports)


@dataclass(frozen=True, slots=True)
class StoredTick:
    """The last published tick as stored: its number, time and document."""

    tick: int
    at: float
    document: dict[str, Any]


def load_published(store: Store) -> StoredTick | None:
    """The last published tick, as a standby replica serves it."""
    with _transaction(store, readonly=True) as conn:
        row = conn.execute(select(PUBLISHED).where(PUBLISHED.c.name == PUBLISHED_NAME)).first()
    return None if row is None else StoredTick(row.tick, row.at, dict(row.document))


def load_demand_split(
    store: Store, now: float, ttl_s: float
) -> tuple[dict[str, float], dict[str, float]]:
    """Every lane's latest report as two maps lane -> demand: the fresh ones (``now -
    reported_at <= ttl_s``, computed by the database in doubles as Python would) and the stale
    ones. Each map is made by the driver's rows straight into ``dict`` (no bytecode per report:
    the tick reads 10,000 and more)."""
    fresh_if = f"{_mark(store)} - reported_at <= {_mark(store)}"
    table = REPORTS.name
    with _transaction(store, readonly=True) as conn:
        fresh = _driver_rows(
            conn, f"SELECT lane, demand FROM {table} WHERE {fresh_if}", (now, ttl_s)
        )
        stale = _driver_rows(
            conn, f"SELECT lane, demand FROM {table} WHERE NOT ({fresh_if})", (now, ttl_s)
        )
    return dict(fresh), dict(stale)


def _mark(store: Store) -> str:
    return "?" if store.engine.dialect.paramstyle == "qmark" else "%s"


def _driver_rows(conn: Connection, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Plain tuples from the driver's cursor, in the connection's transaction (no result
    processing: the columns read this way are numbers and text)."""
    cursor = conn.connection.cursor()
    try:
        if params:
            cursor.execute(sql, params)
        else:
            cursor.execute(sql)
        return list(cursor.fetchall())
    finally:
        cursor.close()


# -- the tick's record ------------------------------------------------------------------------


def write_tick(store: Store, lease: Lease, record: TickRecord) -> None:
    """Write one tick (renewing the lease by compare-and-set first) and prune one batch.

    Rows go straight to the driver, one ``executemany`` per table (no per-row statement
    compilation). The tick's demand history is one packed row (:mod:`demand_history`)."""
    learnt: dict[str, int] = {}
    with _transaction(store) as conn:
        _renew(conn, lease)
        if record.targets:
            _insert_many(
                conn,
                TARGETS,
                (
                    "target",
                    "pool",
                    "in_service",
                    "pending",
                    "desired",
                    "observed_at",
                    "moved_at",
                    "moved",
                ),
                [
                    (
                        t.target,
                        t.pool,
                        t.in_service,
                        t.pending,
                        t.desired,
                        record.at,
                        t.moved_at,
                        t.moved,
                    )
                    for t in record.targets
                ],
                conflict=("target",),
            )
        if record.recommendations:
            _insert_many(
                conn, RECOMMENDATIONS, ("target", "at", "replicas"), record.recommendations
            )
        if record.demand:
            row, learnt = demand_history.packed_tick(
                conn, store, record.tick, record.at, record.demand
            )
            _insert_many(conn, HISTORY, TICK_COLUMNS, [row])
        document = record.published
        text_doc = document if isinstance(document, str) else json.dumps(dict(document))
        _insert_many(
            conn,
            PUBLISHED,
            ("name", "tick", "at", "document"),
            [(PUBLISHED_NAME, record.tick, record.at, text_doc)],
            conflict=("name",),
            json_columns=("document",),
        )
        # At least twice what this tick added, so pruning always keeps up with the inserts.
        if record.history_before is not None:
            batch = max(PRUNE_BATCH, 2 * len(record.demand))
            demand_history.prune(conn, record.history_before, batch, min_ticks=2)
            # One row per lane at most: reports of lanes long gone (or silent) go with the history.
            conn.execute(delete(REPORTS).where(REPORTS.c.reported_at < record.history_before))
        if record.recommendations_before is not None:
            batch = max(PRUNE_BATCH, 2 * len(record.recommendations))
            _prune(conn, RECOMMENDATIONS, record.recommendations_before, batch)
    if learnt:  # committed: the lane ids it read or added are the store's
        demand_history.remember_lanes(store, learnt)


def _insert_many(
    conn: Connection,
    table: Table,
    columns: Sequence[str],
    rows: Sequence[tuple[Any, ...]],
    *,
    conflict: Sequence[str] = (),
    json_columns: Sequence[str] = (),
) -> None:
    """``INSERT`` (or, with ``conflict`` keys, insert-or-update: ``ON CONFLICT DO UPDATE``, the
    same text in both dialects) of positional ``rows`` in one driver ``executemany``. A JSON
    column takes the document's text."""
    mark = "?" if conn.dialect.paramstyle == "qmark" else "%s"
    postgres = conn.dialect.name == "postgresql"
    marks = ", ".join(
        f"CAST({mark} AS JSON)" if postgres and c in json_columns else mark for c in columns
    )
    sql = f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({marks})"
    if conflict:
        updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in conflict)
        sql += f" ON CONFLICT ({', '.join(conflict)}) DO UPDATE SET {updates}"
    conn.exec_driver_sql(sql, rows if isinstance(rows, list) else list(rows))


def _prune(conn: Connection, table: Table, before: float, batch: int | None = None) -> int:
    """Delete up to ``batch`` of the oldest rows older than ``before``. They are found through
    the index on ``at`` (ordered by it, then by id): ordered by id alone, SQLite walks the whole
    table in id order looking for them, every tick, however few there are."""
    limit = PRUNE_BATCH if batch is None else batch
    ids = (
        select(table.c.id).where(table.c.at < before).order_by(table.c.at, table.c.id).limit(limit)
    )
    return conn.execute(delete(table).where(table.c.id.in_(ids.scalar_subquery()))).rowcount


def _upsert(
    conn: Connection, table: Table, rows: Sequence[Mapping[str, Any]], keys: Sequence[str]
) -> None:
    """Insert or update ``rows`` in one executemany (``ON CONFLICT DO UPDATE`` in both dialects)."""
    stmt: Any
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects import postgresql

        stmt = postgresql.insert(table)
    else:
        from sqlalchemy.dialects import sqlite

        stmt = sqlite.insert(table)
    values = {c.name: stmt.excluded[c.name] for c in table.columns if c.name not in keys}
    conn.execute(stmt.on_conflict_do_update(index_elements=list(keys), set_=values), rows)


# -- reading back ---------------------------------------------------------------------------


def load_snapshot(store: Store, recommendations_since: float) -> RuntimeSnapshot:
    """The state a (re)starting controller continues from."""
    with _transaction(store, readonly=True) as conn:
        row = conn.execute(select(PUBLISHED).where(PUBLISHED.c.name == PUBLISHED_NAME)).first()
        published = None if row is None else (row.tick, row.at, dict(row.document))
        targets = {
            r.target: TargetRecord(
                r.target, r.pool, r.in_service, r.pending, r.desired, r.moved_at, r.moved
            )
            for r in conn.execute(select(TARGETS))
        }
        history: dict[str, list[tuple[float, int]]] = {}
        for r in conn.execute(
            select(RECOMMENDATIONS.c.target, RECOMMENDATIONS.c.at, RECOMMENDATIONS.c.replicas)
            .where(RECOMMENDATIONS.c.at >= recommendations_since)
            .order_by(RECOMMENDATIONS.c.at)
        ):
            history.setdefault(r.target, []).append((r.at, r.replicas))
        last = _latest_per_lane(conn, None)
    return RuntimeSnapshot(published, targets, history, last)


def _latest_per_lane(conn: Connection, at_most: float | None) -> dict[str, tuple[float, float]]:
    """lane -> (demand, at) of each lane's newest history row (at or before ``at_most``)."""
    return demand_history.latest_per_lane(conn, at_most)


def demand_trace(store: Store, since: float) -> list[tuple[float, str, float]]:
    """(at, lane, demand) rows from ``since`` on, sorted by time then lane: each lane's value at
    ``since`` first (at ``since``), then every later row."""
    with _transaction(store, readonly=True) as conn:
        start = _latest_per_lane(conn, since)
        later = demand_history.rows_after(conn, since)
    first = sorted((since, lane, demand) for lane, (demand, _at) in start.items())
    return first + later
