"""A store already at the newest schema opens without Alembic; the shortcut's revision is true."""

from __future__ import annotations

from pathlib import Path

from alembic.script import ScriptDirectory

from arklow_pulumi.store import engine
from tests.store.migrating import alembic_config


def test_schema_revision_constant_is_the_migrations_head() -> None:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head == engine.SCHEMA_REVISION


def test_fresh_store_is_migrated_to_that_revision(tmp_path: Path) -> None:
    store = engine.open_store(f"sqlite:///{tmp_path / 'a.db'}")
    assert engine.schema_revision(store) == engine.SCHEMA_REVISION
