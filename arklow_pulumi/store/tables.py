"""The topology store's tables (SQLAlchemy 2 declarative models).

One row per destination, pool, membership and scale target. Lanes and per-resource numbers are
small documents owned by their destination, kept as JSON. The topology rules live in
:mod:`arklow_pulumi.core.rules`; the constraints here are a second line of defence:

- ``memberships`` has the primary key ``(destination, resource)``: one pool per resource (T2);
- ``memberships.pool`` and ``scale_targets.pool`` reference ``pools`` with ``ON DELETE RESTRICT``:
  no membership or scale target can point at a deleted pool (T6).

Every row a Pulumi resource creates also records who created it (:class:`Identity`): the id of
that one create (``create_id``, the resource's Pulumi id) and its owner, the Pulumi stack and the
resource's URN. Rows the rules make on their own (standalone pools and the memberships in them)
have none. See :mod:`arklow_pulumi.store.identity`.
"""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


def table_of(row: type[Base]) -> Table:
    """The Core table of a row class, for ``select``/``insert``/``update`` and their columns
    (SQLAlchemy types ``__table__`` as a ``FromClause``; a declarative class's is a ``Table``)."""
    return cast(Table, row.__table__)


class Identity:
    """Who created a row: the create's own id and the owning stack and URN (all None for rows
    the rules make on their own, and for rows written outside Pulumi)."""

    create_id: Mapped[str | None] = mapped_column(
        String(64), nullable=True, unique=True, index=True
    )
    owner_stack: Mapped[str | None] = mapped_column(String(255), nullable=True, index=True)
    owner_urn: Mapped[str | None] = mapped_column(Text, nullable=True)


class DestinationRow(Identity, Base):
    __tablename__ = "destinations"

    name: Mapped[str] = mapped_column(String(255), primary_key=True)
    resources: Mapped[list[str]] = mapped_column(JSON, nullable=False)
    lanes: Mapped[list[dict[str, Any]]] = mapped_column(JSON, nullable=False)
    standalone_capacity: Mapped[dict[str, float]] = mapped_column(JSON, nullable=False)


class PoolRow(Identity, Base):
    __tablename__ = "pools"

    name: Mapped[str] = mapped_column(String(255), primary_key=True)
    resource: Mapped[str] = mapped_column(String(255), nullable=False)
    capacity: Mapped[float] = mapped_column(Float, nullable=False)
    headroom: Mapped[float] = mapped_column(Float, nullable=False)
    # The controller's scale policy: only the fields that differ from the defaults; NULL: none.
    scale_policy: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # Set on a destination's standalone pool (created by the rules, collected when empty).
    owner: Mapped[str | None] = mapped_column(String(255), nullable=True, index=True)


class MembershipRow(Identity, Base):
    __tablename__ = "memberships"

    destination: Mapped[str] = mapped_column(
        String(255), ForeignKey("destinations.name", ondelete="RESTRICT"), primary_key=True
    )
    resource: Mapped[str] = mapped_column(String(255), primary_key=True)
    pool: Mapped[str] = mapped_column(
        String(255), ForeignKey("pools.name", ondelete="RESTRICT"), nullable=False, index=True
    )


class ScaleTargetRow(Identity, Base):
    __tablename__ = "scale_targets"

    name: Mapped[str] = mapped_column(String(255), primary_key=True)
    pool: Mapped[str] = mapped_column(
        String(255), ForeignKey("pools.name", ondelete="RESTRICT"), nullable=False, index=True
    )
    kind: Mapped[str] = mapped_column(String(32), nullable=False)
    group_name: Mapped[str] = mapped_column(String(255), nullable=False)
    region: Mapped[str | None] = mapped_column(String(255), nullable=True)
    zone: Mapped[str | None] = mapped_column(String(255), nullable=True)
    project: Mapped[str | None] = mapped_column(String(255), nullable=True)
    min_replicas: Mapped[int] = mapped_column(Integer, nullable=False)
    max_replicas: Mapped[int] = mapped_column(Integer, nullable=False)
    units_per_replica: Mapped[float] = mapped_column(Float, nullable=False)
    replicas: Mapped[int] = mapped_column(Integer, nullable=False)
    override_policies: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)


class TopologyRevisionRow(Base):
    """One row: a counter the database itself raises (triggers, migration 0006) in every
    transaction that inserts, updates or deletes a row of the four tables whose rows make the
    topology (destinations, pools, memberships, scale_targets). A reader that saw the same number
    saw the same topology, whoever wrote it (``pulumi up``, the CLI, plain SQL): the controller
    reads this one number per tick instead of the topology."""

    __tablename__ = "topology_revision"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    revision: Mapped[int] = mapped_column(BigInteger, nullable=False)
