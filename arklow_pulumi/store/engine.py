"""Open a topology store: one SQLAlchemy engine per URL and mode per process.

The same code serves SQLite (the embedded default, ``.arklow/arklow.db`` beside ``Pulumi.yaml``)
and PostgreSQL. Writers are serialized so the topology rules are always applied to the latest
state: SQLite takes the database write lock at ``BEGIN IMMEDIATE``; PostgreSQL takes a
transaction-level advisory lock (``pg_advisory_xact_lock``) as the first statement of every write
transaction, so two ``pulumi up`` runs against one database apply their changes one after the other.

Opening has three modes (:func:`open_store`): the default creates a missing store and migrates an
old one (the Pulumi providers, ``arklow store upgrade``); ``create=False`` opens an existing store
at the current schema and refuses anything else; ``read_only=True`` does the same on connections
the database itself keeps from writing (SQLite ``PRAGMA query_only``, PostgreSQL
``default_transaction_read_only``), so a read command cannot create, migrate or change anything,
even by mistake. A refused open names ``arklow store upgrade``.

A SQLite store is private to its owner: the database file is created 0600 before SQLite opens
it (SQLite creates its ``-wal``, ``-shm`` and ``-journal`` files with the database's own mode),
and a missing directory above it is created 0700, one level at a time, only by the commands
that may create a store where none was (``directories=True``, the default: the Pulumi
providers, ``arklow store upgrade``, ``arklow dev run``). ``arklow controller run`` passes
``directories=False``: a missing directory is refused, named, and nothing is created.

Every message shows the URL with its password hidden, and a database driver's own message is
scrubbed of it too (:mod:`arklow_pulumi.redaction`): :class:`StoreError` scrubs whatever it is
given, and flattens it to one line.

Engines are cached per process, not stored on any object: Pulumi pickles provider instances, and a
provider keeps only the URL.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from sqlalchemy import Connection, Engine, create_engine, event, inspect, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from arklow_pulumi.core.errors import ArklowError
from arklow_pulumi.extras import require
from arklow_pulumi.redaction import redact_url, remember_url, scrub
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
    "WAL_FILES",
    "Store",
    "StoreError",
    "default_store_url",
    "find_project_dir",
    "open_store",
    "resolve_store_url",
]
# The newest Alembic revision shipped in migrations/versions (a test keeps them equal): a store
# already there is opened without loading Alembic at all.
SCHEMA_REVISION = "0008"
MIGRATIONS = Path(__file__).with_name("migrations")
# Keys of the PostgreSQL advisory locks ("arklow" in ASCII, and one more for migrations).
WRITE_LOCK = 0x61726B6C6F77
MIGRATION_LOCK = WRITE_LOCK + 1
_READONLY = "arklow_readonly"
UPGRADE_HINT = "run `arklow store upgrade --store URL`"
# The files SQLite keeps beside a database file, by the suffix of their names.
WAL_FILES = ("-wal", "-shm", "-journal")
FILE_MODE = 0o600
DIRECTORY_MODE = 0o700


class StoreError(ArklowError):
    """The store cannot be opened or reached, or it refused a write.

    The message is scrubbed of passwords and flattened to one line, whoever built it.
    """

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(scrub(message).split()))


@dataclass(frozen=True)
class Store:
    """An open topology store. ``url`` keeps the password; ``display_url`` hides it."""

    url: str
    engine: Engine
    read_only: bool = False

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    @property
    def display_url(self) -> str:
        return redact(self.url)

    @property
    def database_file(self) -> Path | None:
        """A SQLite store's database file (``None`` for PostgreSQL)."""
        database = make_url(self.url).database
        return Path(database) if self.dialect == "sqlite" and database else None


_STORES: dict[tuple[str, bool], Store] = {}
# Stores known to be at SCHEMA_REVISION in this process (checked or migrated once).
_CURRENT: set[str] = set()
_LOCK = threading.Lock()


def open_store(
    url: str, *, create: bool = True, read_only: bool = False, directories: bool = True
) -> Store:
    """The process's store for ``url``.

    ``create=True`` (the default, for writers): a missing store is created and an old schema
    migrated on first use. ``create=False``: the store must exist at the current schema, or a
    :class:`StoreError` names ``arklow store upgrade``. ``read_only=True`` implies
    ``create=False`` and opens connections that cannot write. ``directories=False``: a SQLite
    file whose directory is missing is refused, naming the directory, instead of creating it.
    """
    url = _NORMALIZED.get(url) or _normalize_once(url)
    create = create and not read_only
    key = (url, read_only)
    store = _STORES.get(key)
    if store is None or url not in _CURRENT:
        with _LOCK:
            store = _STORES.get(key)
            if store is None:
                if not create:
                    _require_file(url)
                engine = _create_engine(url, read_only, directories)
                store = Store(url=url, engine=engine, read_only=read_only)
                _STORES[key] = store
            if url not in _CURRENT:
                if create:
                    migrate(store)
                else:
                    require_current(store)
                _CURRENT.add(url)
    return store


# The URLs this process has already normalized (every provider call opens its store by URL: the
# parse, checks and redaction bookkeeping ran once per call, ~0.3 ms).
_NORMALIZED: dict[str, str] = {}


def _normalize_once(url: str) -> str:
    normalized = normalize_url(url)
    _NORMALIZED[url] = normalized
    return normalized


def close_stores() -> None:
    """Dispose every cached engine (tests, and processes about to fork)."""
    with _LOCK:
        for store in _STORES.values():
            store.engine.dispose()
        _STORES.clear()
        _CURRENT.clear()


def normalize_url(url: str) -> str:
    """Accept ``postgres://`` and ``postgresql://`` for psycopg 3, and a raw ``@`` in a password
    (percent-encoded here, as SQLAlchemy would end the password at the first ``@``); check the
    URL parses and names a supported database."""
    remember_url(url)
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            url = "postgresql+psycopg://" + url[len(prefix) :]
    url = _encode_userinfo(url)
    remember_url(url)
    shown = redact(url)
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise StoreError(
            f"store URL {shown!r} is not a database URL (sqlite:///PATH or "
            "postgresql://USER:PASSWORD@HOST/DB)"
        ) from None
    except ValueError:  # SQLAlchemy converts the port with int() and lets it raise
        port = _port_text(url)
        raise StoreError(f"store URL {shown!r}: field 'port': {port!r} must be a number") from None
    if parsed.get_backend_name() not in ("sqlite", "postgresql"):
        raise StoreError(f"store URL {shown!r}: only sqlite and postgresql are supported")
    if parsed.get_backend_name() == "sqlite":
        _check_sqlite(parsed, shown)
    return url


def redact(url: str) -> str:
    """``url`` with its password shown as ``***``, in every form (see
    :mod:`arklow_pulumi.redaction`)."""
    return redact_url(url)


def _encode_userinfo(url: str) -> str:
    """``scheme://user:pass@word@host/…`` → the userinfo percent-encoded (idempotent)."""
    scheme_end = url.find("://")
    if scheme_end < 0:
        return url
    rest = url[scheme_end + 3 :]
    netloc_end = next((i for i, c in enumerate(rest) if c in "/?#"), len(rest))
    userinfo, at, hostport = rest[:netloc_end].rpartition("@")
    if not at or "@" not in userinfo:
        return url
    user, colon, password = userinfo.partition(":")
    encoded = quote(unquote(user), safe="")
    if colon:
        encoded += ":" + quote(unquote(password), safe="")
    return f"{url[: scheme_end + 3]}{encoded}@{hostport}{rest[netloc_end:]}"


def _port_text(url: str) -> str:
    match = re.search(r"@[^/?#:]*:([^/?#]*)", url) or re.search(r"://[^/?#:@]*:([^/?#@]*)", url)
    return match.group(1) if match else ""


def _check_sqlite(parsed: URL, shown: str) -> None:
    for field in ("username", "password", "host", "port"):
        if getattr(parsed, field):
            raise StoreError(
                f"store URL {shown!r}: field '{'host' if field == 'port' else field}': a SQLite "
                "store is a file (sqlite:///relative/path.db or sqlite:////absolute/path.db), "
                "with no user, password or host"
            )
    if not parsed.database or parsed.database == ":memory:":
        raise StoreError(
            f"store URL {shown!r}: field 'path': an in-memory SQLite store is not shared between "
            "processes; give a file"
        )


def _require_file(url: str) -> None:
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return
    path = Path(parsed.database or "")
    if not path.is_file():
        raise StoreError(
            f"store {redact(url)}: field 'path': no store at {str(path)!r}; check the path, or "
            f"{UPGRADE_HINT} to create one"
        )


# Built once: the writer lock is taken by every write transaction.
_TAKE_LOCK = text("SELECT pg_advisory_xact_lock(:key)")


@contextmanager
def writing(store: Store) -> Iterator[Connection]:
    """A write transaction that holds the store's writer lock until commit or rollback."""
    with store.engine.begin() as conn:
        if store.dialect == "postgresql":
            conn.execute(_TAKE_LOCK, {"key": WRITE_LOCK})
        yield conn


@contextmanager
def reading(store: Store) -> Iterator[Connection]:
    """A read transaction: one consistent snapshot, no writer lock."""
    with store.engine.connect() as conn:
        conn = conn.execution_options(**{_READONLY: True})
        with conn.begin():
            yield conn


def checkpoint(store: Store) -> tuple[int, int]:
    """Copy SQLite's write-ahead log back into the database file now (``PRAGMA
    wal_checkpoint(PASSIVE)``: it never waits on a reader or a writer, and copies what it can).
    SQLite otherwise does it inside the commit that grows the log past 1,000 pages, that is
    inside every few controller ticks. Returns (frames in the log, frames copied); PostgreSQL
    checkpoints by itself: (0, 0)."""
    if store.dialect != "sqlite":
        return 0, 0
    try:
        raw = store.engine.raw_connection()  # outside any transaction: a checkpoint needs that
        try:
            cursor = raw.cursor()
            cursor.execute("PRAGMA wal_checkpoint(PASSIVE)")
            row = cursor.fetchone() or (0, 0, 0)
            cursor.close()
        finally:
            raw.close()
    except Exception as exc:
        raise StoreError(f"store {store.display_url}: {driver_message(exc)}") from exc
    _busy, frames, copied = row
    return int(frames), int(copied)


def schema_revision(store: Store) -> str | None:
    """The store's Alembic revision, or None for an empty database."""
    with store.engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return None
        return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()


def peek_revision(url: str) -> str | None:
    """The schema revision of the store at ``url`` (None: no store, or an empty database), read on
    a read-only connection of its own: creates, migrates and caches nothing."""
    url = normalize_url(url)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and not Path(parsed.database or "").is_file():
        return None
    store = Store(url=url, engine=_create_engine(url, read_only=True), read_only=True)
    try:
        return schema_revision(store)
    except Exception as exc:
        raise StoreError(f"cannot open store {store.display_url}: {driver_message(exc)}") from exc
    finally:
        store.engine.dispose()


def driver_message(exc: BaseException) -> str:
    """A database error as one line: the driver's own message (SQLAlchemy's wrapper adds SQL
    and a link), scrubbed of passwords."""
    orig = getattr(exc, "orig", None)
    shown = orig if isinstance(orig, BaseException) else exc
    return " ".join(scrub(str(shown) or type(shown).__name__).split())


def require_current(store: Store) -> None:
    """Refuse a store that is empty or not at :data:`SCHEMA_REVISION` (read paths never migrate)."""
    try:
        revision = schema_revision(store)
    except Exception as exc:
        raise StoreError(f"cannot open store {store.display_url}: {driver_message(exc)}") from exc
    if revision == SCHEMA_REVISION:
        return
    if revision is None:
        raise StoreError(
            f"store {store.display_url}: field 'schema': no Arklow store there (an empty "
            f"database); {UPGRADE_HINT} to create one"
        )
    if revision in known_revisions():
        raise StoreError(
            f"store {store.display_url}: field 'schema': revision {revision} is older than this "
            f"arklow's {SCHEMA_REVISION}; {UPGRADE_HINT} to migrate it"
        )
    raise StoreError(
        f"store {store.display_url}: field 'schema': revision {revision!r} is unknown to this "
        f"arklow (newest known {SCHEMA_REVISION}); a newer arklow wrote it: upgrade arklow"
    )


def known_revisions() -> frozenset[str]:
    """The revisions shipped with the package (file names ``NNNN_title.py``)."""
    return frozenset(p.name.split("_", 1)[0] for p in (MIGRATIONS / "versions").glob("[0-9]*.py"))


def migrate(store: Store) -> None:
    """Upgrade the schema to the newest Alembic revision shipped with the package."""
    try:
        if schema_revision(store) == SCHEMA_REVISION:
            return
    except Exception as exc:
        raise StoreError(f"cannot open store {store.display_url}: {driver_message(exc)}") from exc
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    try:
        with store.engine.begin() as conn:
            if store.dialect == "postgresql":
                conn.execute(_TAKE_LOCK, {"key": MIGRATION_LOCK})
            config.attributes["connection"] = conn
            command.upgrade(config, "head")
    except Exception as exc:
        raise StoreError(
            f"cannot migrate store {store.display_url}: {driver_message(exc)}"
        ) from exc


# How long the server lets a PostgreSQL session sit idle inside a transaction before aborting it.
IDLE_IN_TRANSACTION_MS = 10_000


def _create_engine(url: str, read_only: bool, directories: bool = True) -> Engine:
    parsed = make_url(url)
    try:
        if parsed.get_backend_name() == "postgresql":
            require("postgres", f"store {redact(url)}")
            # A session whose client vanished mid-transaction (a cut connection, a killed
            # process) would keep holding the writer lock until TCP noticed; the server aborts it
            # instead. Arklow's own transactions never wait on anything outside the database.
            settings = f"-c idle_in_transaction_session_timeout={IDLE_IN_TRANSACTION_MS}"
            if read_only:
                settings += " -c default_transaction_read_only=on"
            return create_engine(
                url,
                pool_pre_ping=True,
                pool_size=5,
                max_overflow=5,
                connect_args={"options": settings},
            )
        if not read_only:
            _private_file(Path(parsed.database or ""), url, directories)
        engine = create_engine(url, connect_args={"timeout": 60, "check_same_thread": False})
    except (OSError, ArgumentError, ImportError) as exc:
        raise StoreError(f"cannot open store {redact(url)}: {driver_message(exc)}") from exc
    event.listen(engine, "connect", _sqlite_read_only if read_only else _sqlite_connect)
    event.listen(engine, "begin", _sqlite_begin_read if read_only else _sqlite_begin)
    return engine


def _private_file(database: Path, url: str, directories: bool) -> None:
    """The database file, created 0600 if missing (an empty file is an empty database), in a
    directory that exists or, with ``directories``, is created 0700 level by level."""
    parent = database.parent
    if not parent.is_dir():
        if not directories:
            raise StoreError(
                f"store {redact(url)}: field 'path': the directory {str(parent)!r} does not "
                f"exist; create it (or {UPGRADE_HINT}, which creates it) and start again"
            )
        missing = [parent, *(p for p in parent.parents if not p.exists())]
        for directory in sorted(set(missing), key=lambda p: len(p.parts)):
            directory.mkdir(mode=DIRECTORY_MODE, exist_ok=True)
    with suppress(FileExistsError):
        os.close(os.open(database, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))


def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
    # Let SQLAlchemy's "begin" event issue BEGIN itself (pysqlite's own BEGIN is deferred).
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys = ON")
    cursor.execute("PRAGMA journal_mode = WAL")
    cursor.execute("PRAGMA synchronous = NORMAL")
    cursor.execute("PRAGMA busy_timeout = 60000")
    cursor.close()


def _sqlite_read_only(dbapi_connection: Any, _record: Any) -> None:
    # No journal_mode change (that writes the file); query_only makes every write fail.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA busy_timeout = 60000")
    cursor.execute("PRAGMA query_only = ON")
    cursor.close()


def _sqlite_begin(conn: Connection) -> None:
    readonly = conn.get_execution_options().get(_READONLY, False)
    conn.exec_driver_sql("BEGIN" if readonly else "BEGIN IMMEDIATE")


def _sqlite_begin_read(conn: Connection) -> None:
    conn.exec_driver_sql("BEGIN")
