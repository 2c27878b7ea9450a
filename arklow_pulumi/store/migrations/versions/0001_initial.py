"""The first topology schema: destinations, pools, memberships, scale targets.

Revision ID: 0001
Revises:
Create Date: 2025-01-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "destinations",
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("resources", sa.JSON(), nullable=False),
        sa.Column("lanes", sa.JSON(), nullable=False),
        sa.Column("standalone_capacity", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_destinations"),
    )
    op.create_table(
        "pools",
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("resource", sa.String(255), nullable=False),
        sa.Column("capacity", sa.Float(), nullable=False),
        sa.Column("headroom", sa.Float(), nullable=False),
        sa.Column("owner", sa.String(255), nullable=True),
        sa.PrimaryKeyConstraint("name", name="pk_pools"),
    )
    op.create_index("ix_pools_owner", "pools", ["owner"])
    op.create_table(
        "memberships",
        sa.Column("destination", sa.String(255), nullable=False),
        sa.Column("resource", sa.String(255), nullable=False),
        sa.Column("pool", sa.String(255), nullable=False),
        sa.ForeignKeyConstraint(
            ["destination"],
            ["destinations.name"],
            name="fk_memberships_destination_destinations",
            ondelete="RESTRICT",
        ),
        sa.ForeignKeyConstraint(
            ["pool"], ["pools.name"], name="fk_memberships_pool_pools", ondelete="RESTRICT"
        ),
        sa.PrimaryKeyConstraint("destination", "resource", name="pk_memberships"),
    )
    op.create_index("ix_memberships_pool", "memberships", ["pool"])
    op.create_table(
        "scale_targets",
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("pool", sa.String(255), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("group_name", sa.String(255), nullable=False),
        sa.Column("region", sa.String(255), nullable=True),
        sa.Column("zone", sa.String(255), nullable=True),
        sa.Column("project", sa.String(255), nullable=True),
        sa.Column("min_replicas", sa.Integer(), nullable=False),
        sa.Column("max_replicas", sa.Integer(), nullable=False),
        sa.Column("units_per_replica", sa.Float(), nullable=False),
        sa.Column("replicas", sa.Integer(), nullable=False),
        sa.Column("override_policies", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["pool"], ["pools.name"], name="fk_scale_targets_pool_pools", ondelete="RESTRICT"
        ),
        sa.PrimaryKeyConstraint("name", name="pk_scale_targets"),
    )
    op.create_index("ix_scale_targets_pool", "scale_targets", ["pool"])


def downgrade() -> None:
    op.drop_index("ix_scale_targets_pool", "scale_targets")
    op.drop_table("scale_targets")
    op.drop_index("ix_memberships_pool", "memberships")
    op.drop_table("memberships")
    op.drop_index("ix_pools_owner", "pools")
    op.drop_table("pools")
    op.drop_table("destinations")
