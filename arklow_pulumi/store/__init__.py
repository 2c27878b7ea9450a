"""The topology store: SQLAlchemy tables, Alembic migrations and the one service layer that
applies the topology rules inside a transaction. SQLite by default, PostgreSQL at scale.

Names load on first use, so importing a submodule does not import SQLAlchemy by itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from arklow_pulumi.store.engine import Store, StoreError, open_store
    from arklow_pulumi.store_location import default_store_url, resolve_store_url

__all__ = ["Store", "StoreError", "default_store_url", "open_store", "resolve_store_url"]


def __getattr__(name: str) -> Any:
    if name in ("default_store_url", "resolve_store_url"):
        from arklow_pulumi import store_location

        return getattr(store_location, name)
    if name in ("Store", "StoreError", "open_store"):
        from arklow_pulumi.store import engine

        return getattr(engine, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
