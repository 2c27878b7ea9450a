"""The controller's runtime tables: lease, observed/desired targets, recommendations, demand
reports, demand history and the published tick (see arklow_pulumi/store/runtime_tables.py).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "controller_lease",
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("holder", sa.String(255), nullable=True),
        sa.Column("epoch", sa.BigInteger(), nullable=False),
        sa.Column("renewed_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_controller_lease"),
    )
    op.create_table(
        "runtime_targets",
        sa.Column("target", sa.String(255), nullable=False),
        sa.Column("pool", sa.String(255), nullable=False),
        sa.Column("in_service", sa.Integer(), nullable=False),
        sa.Column("pending", sa.Integer(), nullable=False),
        sa.Column("desired", sa.Integer(), nullable=False),
        sa.Column("observed_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("target", name="pk_runtime_targets"),
    )
    op.create_table(
        "runtime_recommendations",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("target", sa.String(255), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
        sa.Column("replicas", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_runtime_recommendations"),
    )
    op.create_index("ix_runtime_recommendations_target", "runtime_recommendations", ["target"])
    op.create_index("ix_runtime_recommendations_at", "runtime_recommendations", ["at"])
    op.create_table(
        "runtime_demand_reports",
        sa.Column("lane", sa.String(511), nullable=False),
        sa.Column("demand", sa.Float(), nullable=False),
        sa.Column("reported_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("lane", name="pk_runtime_demand_reports"),
    )
    op.create_table(
        "runtime_demand_history",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("tick", sa.BigInteger(), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
        sa.Column("lane", sa.String(511), nullable=False),
        sa.Column("demand", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_runtime_demand_history"),
    )
    op.create_index("ix_runtime_demand_history_at", "runtime_demand_history", ["at"])
    op.create_table(
        "runtime_published",
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("tick", sa.BigInteger(), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
        sa.Column("document", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_runtime_published"),
    )


def downgrade() -> None:
    op.drop_table("runtime_published")
    op.drop_index("ix_runtime_demand_history_at", "runtime_demand_history")
    op.drop_table("runtime_demand_history")
    op.drop_table("runtime_demand_reports")
    op.drop_index("ix_runtime_recommendations_at", "runtime_recommendations")
    op.drop_index("ix_runtime_recommendations_target", "runtime_recommendations")
    op.drop_table("runtime_recommendations")
    op.drop_table("runtime_targets")
    op.drop_table("controller_lease")
