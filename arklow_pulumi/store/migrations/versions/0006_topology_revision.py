"""The topology revision: one counter row the database raises on every write to a topology table
(destinations, pools, memberships, scale_targets), by triggers, so a reader learns whether the
topology changed from one number (see arklow_pulumi/store/tables.py, TopologyRevisionRow).

SQLite has row triggers only (one per table and event: a bump per row written, a few microseconds
each); PostgreSQL bumps once per statement (TRUNCATE included).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

TABLES = ("destinations", "pools", "memberships", "scale_targets")
EVENTS = ("insert", "update", "delete")
BUMP = "UPDATE topology_revision SET revision = revision + 1 WHERE id = 1"
FUNCTION = "arklow_topology_bump"


def upgrade() -> None:
    op.create_table(
        "topology_revision",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("revision", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_topology_revision"),
    )
    op.execute("INSERT INTO topology_revision (id, revision) VALUES (1, 1)")
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            f"CREATE FUNCTION {FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS "
            f"$$ BEGIN {BUMP}; RETURN NULL; END $$"
        )
        for table in TABLES:
            op.execute(
                f"CREATE TRIGGER {table}_revision AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE "
                f"ON {table} FOR EACH STATEMENT EXECUTE FUNCTION {FUNCTION}()"
            )
        return
    for table in TABLES:
        for event in EVENTS:
            op.execute(
                f"CREATE TRIGGER {table}_revision_{event} AFTER {event.upper()} ON {table} "
                f"BEGIN {BUMP}; END"
            )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for table in TABLES:
            op.execute(f"DROP TRIGGER {table}_revision ON {table}")
        op.execute(f"DROP FUNCTION {FUNCTION}()")
    else:
        for table in TABLES:
            for event in EVENTS:
                op.execute(f"DROP TRIGGER {table}_revision_{event}")
    op.drop_table("topology_revision")
