"""A pool's scale policy (the controller's): the fields that differ from the defaults, as JSON;
NULL for a pool that keeps every default.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("pools", sa.Column("scale_policy", sa.JSON(), nullable=True))


def downgrade() -> None:
    # Plain ALTER TABLE ... DROP COLUMN (SQLite >= 3.35): a batch copy of the table would trip
    # the foreign keys that point at it.
    op.drop_column("pools", "scale_policy")
