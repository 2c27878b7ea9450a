"""Each scale target's last move (when its desired count last differed from its current count,
and which way): the scale policy keeps a target from turning around within the scale-down
window, and a controller that starts or takes over continues from it. NULL for a target that has
not moved since the column came.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("runtime_targets", sa.Column("moved_at", sa.Float(), nullable=True))
    op.add_column("runtime_targets", sa.Column("moved", sa.SmallInteger(), nullable=True))


def downgrade() -> None:
    # Plain ALTER TABLE ... DROP COLUMN (SQLite >= 3.35), as 0004 does.
    op.drop_column("runtime_targets", "moved")
    op.drop_column("runtime_targets", "moved_at")
