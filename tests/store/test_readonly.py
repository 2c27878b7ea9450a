"""Read-only means read-only: read commands never create or migrate a store, and say what to do.

A mistyped SQLite path, an empty database or an old schema is a one-line error naming
``arklow store upgrade``, and leaves the disk and the database exactly as they were; that command
creates or migrates on purpose; the write paths (the providers) still create and migrate.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect, text

from arklow_pulumi.core.topology import Destination, Lane
from arklow_pulumi.store import engine
from arklow_pulumi.store import service as svc
from tests.arklow_cli import Invoke, assert_one_line_error, in_process, run
from tests.store.migrating import migrate


@pytest.fixture
def arklow(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Invoke:
    return in_process(monkeypatch, capsys)


@pytest.fixture(autouse=True)
def fresh_engines() -> Iterator[None]:
    engine.close_stores()
    yield
    engine.close_stores()


def migrate_to(url: str, revision: str) -> None:
    """A store at an older ``revision``, made with the migrations that shipped it."""
    raw = create_engine(engine.normalize_url(url))
    migrate(raw, "upgrade", revision)
    raw.dispose()


def revision_and_tables(url: str) -> tuple[str | None, set[str]]:
    raw = create_engine(engine.normalize_url(url))
    try:
        with raw.connect() as conn:
            tables = set(inspect(conn).get_table_names())
            revision = (
                conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
                if "alembic_version" in tables
                else None
            )
        return revision, tables
    finally:
        raw.dispose()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


OLDEST = min(engine.known_revisions())


# -- SQLite --------------------------------------------------------------------------------------


def test_a_mistyped_path_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "typo" / "deeper" / "arklow.db"
    result = run(["topology", "show", "--store", f"sqlite:///{missing}"])
    line = assert_one_line_error(result, "topology show")
    assert "arklow store upgrade" in line and str(missing) in line
    assert list(tmp_path.iterdir()) == []


def test_the_default_store_missing_creates_nothing(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: x\n")
    result = run(["topology", "show"], cwd=tmp_path)
    assert "arklow store upgrade" in assert_one_line_error(result, "topology show")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Pulumi.yaml"]


def test_an_empty_database_is_left_untouched(tmp_path: Path, arklow: Invoke) -> None:
    path = tmp_path / "empty.db"
    sqlite3.connect(path).close()
    before = digest(path)
    line = assert_one_line_error(arklow(["topology", "show", "--store", f"sqlite:///{path}"]))
    assert "field 'schema'" in line and "arklow store upgrade" in line
    assert digest(path) == before
    assert revision_and_tables(f"sqlite:///{path}") == (None, set())


def test_an_old_schema_is_refused_not_migrated_then_upgraded(
    tmp_path: Path, arklow: Invoke
) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    migrate_to(url, OLDEST)
    before = revision_and_tables(url)
    line = assert_one_line_error(arklow(["topology", "show", "--store", url]))
    assert f"revision {OLDEST} is older" in line and "arklow store upgrade" in line
    assert revision_and_tables(url) == before
    upgraded = arklow(["store", "upgrade", "--store", url])
    assert upgraded.returncode == 0, upgraded.stderr
    assert f'"previous_revision": "{OLDEST}"' in upgraded.stdout
    assert f'"revision": "{engine.SCHEMA_REVISION}"' in upgraded.stdout
    shown = arklow(["topology", "show", "--store", url, "--format", "json"])
    assert shown.returncode == 0 and shown.stderr == "", shown.stderr


def test_a_revision_from_a_newer_arklow_says_so(tmp_path: Path, arklow: Invoke) -> None:
    url = f"sqlite:///{tmp_path / 'new.db'}"
    engine.open_store(url)
    engine.close_stores()
    with sqlite3.connect(tmp_path / "new.db") as conn:
        conn.execute("UPDATE alembic_version SET version_num = '9999'")
    line = assert_one_line_error(arklow(["topology", "show", "--store", url]))
    assert "'9999' is unknown" in line and "upgrade arklow" in line


def test_store_upgrade_creates_a_missing_store(tmp_path: Path, arklow: Invoke) -> None:
    url = f"sqlite:///{tmp_path / 'new' / 'arklow.db'}"
    result = arklow(["store", "upgrade", "--store", url])
    assert result.returncode == 0, result.stderr
    assert '"previous_revision": null' in result.stdout and '"changed": true' in result.stdout
    again = arklow(["store", "upgrade", "--store", url])
    assert '"changed": false' in again.stdout
    assert arklow(["topology", "show", "--store", url]).returncode == 0


def test_a_read_only_store_cannot_write(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'arklow.db'}"
    engine.open_store(url)
    store = engine.open_store(url, read_only=True)
    assert store.read_only
    with pytest.raises(engine.StoreError):
        svc.create_destination(store, Destination("d", ("gpu",), (Lane("d", "a", 1.0),)))
    assert svc.stored_topology(store).destinations == {}


def test_write_paths_still_create_and_migrate(tmp_path: Path) -> None:
    fresh = f"sqlite:///{tmp_path / 'a' / 'b' / 'arklow.db'}"
    assert engine.schema_revision(engine.open_store(fresh)) == engine.SCHEMA_REVISION
    old = f"sqlite:///{tmp_path / 'old.db'}"
    migrate_to(old, OLDEST)
    assert engine.schema_revision(engine.open_store(old)) == engine.SCHEMA_REVISION


def test_create_false_opens_an_existing_store_for_writing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'arklow.db'}"
    with pytest.raises(engine.StoreError, match="arklow store upgrade"):
        engine.open_store(url, create=False)
    assert not (tmp_path / "arklow.db").exists()
    engine.open_store(url)
    engine.close_stores()
    store = engine.open_store(url, create=False)
    assert not store.read_only
    svc.create_destination(store, Destination("d", ("gpu",), (Lane("d", "a", 1.0),)))
    assert set(svc.stored_topology(store).destinations) == {"d"}


# -- PostgreSQL ----------------------------------------------------------------------------------


@pytest.mark.postgres
def test_postgres_read_never_migrates(postgres_url: str, arklow: Invoke) -> None:
    line = assert_one_line_error(arklow(["topology", "show", "--store", postgres_url]))
    assert "field 'schema'" in line and "arklow store upgrade" in line
    assert revision_and_tables(postgres_url) == (None, set())
    migrate_to(postgres_url, OLDEST)
    before = revision_and_tables(postgres_url)
    line = assert_one_line_error(arklow(["topology", "show", "--store", postgres_url]))
    assert f"revision {OLDEST} is older" in line
    assert revision_and_tables(postgres_url) == before
    assert arklow(["store", "upgrade", "--store", postgres_url]).returncode == 0
    assert revision_and_tables(postgres_url)[0] == engine.SCHEMA_REVISION
    assert arklow(["topology", "show", "--store", postgres_url]).returncode == 0


@pytest.mark.postgres
def test_postgres_read_only_connections_cannot_write(postgres_url: str) -> None:
    engine.open_store(postgres_url)
    store = engine.open_store(postgres_url, read_only=True)
    with pytest.raises(engine.StoreError, match="read-only"):
        svc.create_destination(store, Destination("d", ("gpu",), (Lane("d", "a", 1.0),)))
