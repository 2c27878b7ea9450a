"""Open a topology store: one SQLAlchemy engine per URL per process, migrated on first open.

The same code serves SQLite (the embedded default, ``.arklow/arklow.db`` beside ``Pulumi.yaml``)
and PostgreSQL. Writers are serialized so the topology rules are always applied to the latest
state: SQLite takes the database write lock at ``BEGIN IMMEDIATE``; PostgreSQL takes a
transaction-level advisory lock (``pg_advisory_xact_lock``) as the first statement of every write
transaction, so two ``pulumi up`` runs against one database apply their changes one after the other.

Engines are cached per process, not stored on any object: Pulumi pickles provider instances, and a
provider keeps only the URL.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, inspect, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from arklow_pulumi.core.errors import ArklowError
from arklow_pulumi.store_location import (
    DEFAULT_RELATIVE,
    ENV_VAR,
    default_store_url,
    find_project_dir,
    resolve_store_url,
)

__all__ = [
    "DEFAULT_RELATIVE",
    "ENV_VAR",
    "Store",
    "StoreError",
    "default_store_url",
    "find_project_dir",
    "open_store",
    "resolve_store_url",
]
# The newest Alembic revision shipped in migrations/versions (a test keeps them equal): a store
# already there is opened without loading Alembic at all.
SCHEMA_REVISION = "0003"
MIGRATIONS = Path(__file__).with_name("migrations")
# Keys of the PostgreSQL advisory locks ("arklow" in ASCII, and one more for migrations).
WRITE_LOCK = 0x61726B6C6F77
MIGRATION_LOCK = WRITE_LOCK + 1
_READONLY = "arklow_readonly"


class StoreError(ArklowError):
    """The store cannot be opened or reached, or it refused a write."""


@dataclass(frozen=True)
class Store:
    """An open topology store. ``url`` keeps the password; ``display_url`` hides it."""

    url: str
    engine: Engine

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    @property
    def display_url(self) -> str:
        return redact(self.url)


_STORES: dict[str, Store] = {}
_LOCK = threading.Lock()


def open_store(url: str) -> Store:
    """The process's store for ``url``, created and migrated to the latest schema on first use."""
    url = normalize_url(url)
    store = _STORES.get(url)
    if store is not None:
        return store
    with _LOCK:
        store = _STORES.get(url)
        if store is None:
            store = Store(url=url, engine=_create_engine(url))
            migrate(store)
            _STORES[url] = store
    return store


def close_stores() -> None:
    """Dispose every cached engine (tests, and processes about to fork)."""
    with _LOCK:
        for store in _STORES.values():
            store.engine.dispose()
        _STORES.clear()


def normalize_url(url: str) -> str:
    """Accept ``postgres://`` and ``postgresql://`` for psycopg 3; check the URL parses."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            url = "postgresql+psycopg://" + url[len(prefix) :]
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise StoreError(f"store URL {redact(url)!r} is not a database URL: {exc}") from exc
    except ValueError as exc:  # SQLAlchemy converts the port with int() and lets it raise
        raise StoreError(
            f"store URL {redact(url)!r}: field 'port': must be a number ({exc})"
        ) from None  # the message says it all; the ValueError's frames would only bury it
    if parsed.get_backend_name() not in ("sqlite", "postgresql"):
        raise StoreError(f"store URL {redact(url)!r}: only sqlite and postgresql are supported")
    return url


def has_password(url: str) -> bool:
    try:
        return make_url(url).password is not None
    except (ArgumentError, ValueError):
        return _USERINFO_PASSWORD.search(url) is not None


# ``scheme://user:password@`` in a URL SQLAlchemy cannot parse (a bad port, say).
_USERINFO_PASSWORD = re.compile(r"(?P<head>://[^:/@]*:)[^@]*(?=@)")


def redact(url: str) -> str:
    """``url`` with its password shown as ``***``, also when it does not parse."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):
        if "://" not in url:
            return "<unparsable store URL>"
        return _USERINFO_PASSWORD.sub(r"\g<head>***", url)


@contextmanager
def writing(store: Store) -> Iterator[Connection]:
    """A write transaction that holds the store's writer lock until commit or rollback."""
    with store.engine.begin() as conn:
        if store.dialect == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": WRITE_LOCK})
        yield conn


@contextmanager
def reading(store: Store) -> Iterator[Connection]:
    """A read transaction: one consistent snapshot, no writer lock."""
    with store.engine.connect() as conn:
        conn = conn.execution_options(**{_READONLY: True})
        with conn.begin():
            yield conn


def schema_revision(store: Store) -> str | None:
    """The store's Alembic revision, or None for an empty database."""
    with store.engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return None
        return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()


def migrate(store: Store) -> None:
    """Upgrade the schema to the newest Alembic revision shipped with the package."""
    try:
        if schema_revision(store) == SCHEMA_REVISION:
            return
    except Exception as exc:
        raise StoreError(f"cannot open store {store.display_url}: {exc}") from exc
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    try:
        with store.engine.begin() as conn:
            if store.dialect == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
            config.attributes["connection"] = conn
            command.upgrade(config, "head")
    except Exception as exc:
        raise StoreError(f"cannot open store {store.display_url}: {exc}") from exc


def _create_engine(url: str) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() == "postgresql":
        return create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=5)
    database = parsed.database
    if not database or database == ":memory:":
        raise StoreError("an in-memory SQLite store is not shared between processes; use a file")
    Path(database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, connect_args={"timeout": 60, "check_same_thread": False})
    event.listen(engine, "connect", _sqlite_connect)
    event.listen(engine, "begin", _sqlite_begin)
    return engine


def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
    # Let SQLAlchemy's "begin" event issue BEGIN itself (pysqlite's own BEGIN is deferred).
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys = ON")
    cursor.execute("PRAGMA journal_mode = WAL")
    cursor.execute("PRAGMA synchronous = NORMAL")
    cursor.execute("PRAGMA busy_timeout = 60000")
    cursor.close()


def _sqlite_begin(conn: Connection) -> None:
    readonly = conn.get_execution_options().get(_READONLY, False)
    conn.exec_driver_sql("BEGIN" if readonly else "BEGIN IMMEDIATE")
