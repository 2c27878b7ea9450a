"""The topology store: SQLAlchemy tables, Alembic migrations and the one service layer that
applies the topology rules inside a transaction. SQLite by default, PostgreSQL at scale."""

from arklow_pulumi.store.engine import (
    Store,
    StoreError,
    default_store_url,
    open_store,
    resolve_store_url,
)

__all__ = ["Store", "StoreError", "default_store_url", "open_store", "resolve_store_url"]
