"""Alembic environment: run by :func:`arklow_pulumi.store.engine.migrate` on an open connection."""

from __future__ import annotations

from alembic import context

from arklow_pulumi.store.tables import Base

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("arklow migrations run through arklow_pulumi.store.engine.migrate()")

context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
