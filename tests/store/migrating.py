"""The package's Alembic migrations run by hand, as store tests set up a store at an older revision
or take one down and up again (the package itself only ever upgrades to the newest)."""

from __future__ import annotations

from typing import Literal

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, Engine

from arklow_pulumi.store.engine import MIGRATIONS


def alembic_config() -> Config:
    """An Alembic configuration over the migrations shipped with the package."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def migrate(
    bind: Engine | Connection, verb: Literal["upgrade", "downgrade"], revision: str
) -> None:
    """Alembic ``verb`` to ``revision`` on ``bind``: a connection, in its own transaction, or an
    engine, in a transaction of its own."""
    if isinstance(bind, Engine):
        with bind.begin() as conn:
            migrate(conn, verb, revision)
        return
    config = alembic_config()
    config.attributes["connection"] = bind
    getattr(command, verb)(config, revision)
