"""An index for the standalone-name prefixes: a change that may give a destination a new
standalone pool reads the pools named ``<d>/<r>.…`` (the names a new standalone pool could take,
see arklow_pulumi/store/snapshots.py). They are read as a range of names in byte order
(``[<d>/<r>., <d>/<r>/)``), which an index in byte order answers.

SQLite compares text byte by byte (BINARY) unless told otherwise: the primary key's index serves.
PostgreSQL's ``pools.name`` key follows the database collation, whose order is not the bytes'
(it may skip punctuation), so the range is compared as ``name COLLATE "C"`` and this index on that
expression answers it; without it every such change scanned the whole pools table.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-30
"""

from __future__ import annotations

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

INDEX = "ix_pools_name_bytes"


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f'CREATE INDEX {INDEX} ON pools ((name COLLATE "C"))')


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"DROP INDEX {INDEX}")
