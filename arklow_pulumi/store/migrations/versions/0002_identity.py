"""Store identity: every row a Pulumi resource creates records that create's id and its owner.

``create_id`` (unique) is the resource's Pulumi id; ``owner_stack`` and ``owner_urn`` name the
stack and the resource that created the row. Rows written before this revision get the id their
Pulumi resource already has in state (the Arklow name; ``<pool>:<destination>`` for a membership),
so existing stacks keep deleting and updating their own rows; their owner is recorded by the next
``pulumi up`` (the new owner inputs are a change, applied as an update). Rows the rules make on
their own (standalone pools and the memberships in them) have no identity.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

TABLES = ("destinations", "pools", "memberships", "scale_targets")


def upgrade() -> None:
    for table in TABLES:
        op.add_column(table, sa.Column("create_id", sa.String(64), nullable=True))
        op.add_column(table, sa.Column("owner_stack", sa.String(255), nullable=True))
        op.add_column(table, sa.Column("owner_urn", sa.Text(), nullable=True))
        op.create_index(f"ix_{table}_create_id", table, ["create_id"], unique=True)
        op.create_index(f"ix_{table}_owner_stack", table, ["owner_stack"])
    op.execute("UPDATE destinations SET create_id = name")
    op.execute("UPDATE scale_targets SET create_id = name")
    op.execute("UPDATE pools SET create_id = name WHERE owner IS NULL")
    # A destination's membership in its own standalone pool is the rules' doing, not a resource's.
    op.execute(
        "UPDATE memberships SET create_id = pool || ':' || destination WHERE NOT EXISTS ("
        "SELECT 1 FROM pools WHERE pools.name = memberships.pool "
        "AND pools.owner = memberships.destination)"
    )


def downgrade() -> None:
    for table in TABLES:
        op.drop_index(f"ix_{table}_owner_stack", table)
        op.drop_index(f"ix_{table}_create_id", table)
        # Plain ALTER TABLE ... DROP COLUMN (SQLite >= 3.35): a batch copy of the table would
        # trip the foreign keys that point at it.
        for column in ("owner_urn", "owner_stack", "create_id"):
            op.drop_column(table, column)
