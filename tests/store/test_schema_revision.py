"""A store already at the newest schema opens without Alembic; the shortcut's revision is true."""

from __future__ import annotations

from pathlib import Path

from alembic.config import Config
from alembic.script import ScriptDirectory

from arklow_pulumi.store import engine


def test_schema_revision_constant_is_the_migrations_head() -> None:
    config = Config()
    config.set_main_option("script_location", str(engine.MIGRATIONS))
    assert ScriptDirectory.from_config(config).get_current_head() == engine.SCHEMA_REVISION


def test_fresh_store_is_migrated_to_that_revision(tmp_path: Path) -> None:
    store = engine.open_store(f"sqlite:///{tmp_path / 'a.db'}")
    assert engine.schema_revision(store) == engine.SCHEMA_REVISION
