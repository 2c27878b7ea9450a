"""The controller's runtime tables, apart from the topology (docs/store.md, "Store identity").

Nothing here references the topology tables: a scale target or lane that ``pulumi up`` removes
leaves runtime rows behind that the controller ignores (and overwrites or prunes), so the runtime
writes never need the topology write lock and never block a ``pulumi up``.

Times are seconds since the Unix epoch (floats). ``controller_lease.renewed_at`` is always set by
the *database* clock (see :mod:`arklow_pulumi.store.runtime`); the other times are the
controller's clock at the tick or report they describe.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Float, Index, Integer, LargeBinary, SmallInteger, String
from sqlalchemy.orm import Mapped, mapped_column

from arklow_pulumi.store.tables import Base

LEASE_NAME = "controller"


class ControllerLeaseRow(Base):
    """One row per lease (today only ``controller``). ``epoch`` only grows: it is the fencing
    token every runtime write compares in its own transaction."""

    __tablename__ = "controller_lease"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    holder: Mapped[str | None] = mapped_column(String(255), nullable=True)
    epoch: Mapped[int] = mapped_column(BigInteger, nullable=False)
    renewed_at: Mapped[float] = mapped_column(Float, nullable=False)


class TargetStateRow(Base):
    """Observed and desired replicas of one scale target, as of the last tick that saw it."""

    __tablename__ = "runtime_targets"

    target: Mapped[str] = mapped_column(String(255), primary_key=True)
    pool: Mapped[str] = mapped_column(String(255), nullable=False)
    in_service: Mapped[int] = mapped_column(Integer, nullable=False)
    pending: Mapped[int] = mapped_column(Integer, nullable=False)
    desired: Mapped[int] = mapped_column(Integer, nullable=False)
    observed_at: Mapped[float] = mapped_column(Float, nullable=False)
    # its last move (the scale policy's reversal guard): when, and +1 up / -1 down; NULL: none
    moved_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    moved: Mapped[int | None] = mapped_column(SmallInteger, nullable=True)


class RecommendationRow(Base):
    """One tick's single-tick recommendation for one target (the scale-down window reads these)."""

    __tablename__ = "runtime_recommendations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    target: Mapped[str] = mapped_column(String(255), nullable=False, index=True)
    at: Mapped[float] = mapped_column(Float, nullable=False, index=True)
    replicas: Mapped[int] = mapped_column(Integer, nullable=False)


class DemandReportRow(Base):
    """The latest demand report of one lane (``<destination>/<lane>``) and when it arrived."""

    __tablename__ = "runtime_demand_reports"

    lane: Mapped[str] = mapped_column(String(511), primary_key=True)
    demand: Mapped[float] = mapped_column(Float, nullable=False)
    reported_at: Mapped[float] = mapped_column(Float, nullable=False)


class DemandLaneRow(Base):
    """The lane dictionary of the packed demand history: a lane gets an id the first time a
    tick records it, and keeps it (rows are only ever added, never changed or deleted)."""

    __tablename__ = "runtime_demand_lanes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    lane: Mapped[str] = mapped_column(String(511), nullable=False, unique=True)


class DemandTickRow(Base):
    """One tick's demand history, packed (:mod:`arklow_pulumi.store.history_packing`): ``n``
    rows (lane id, demand), a lane's demand as the tick used it, written when it changed (a trace
    row holds until the lane's next row) and at least once per keyframe interval. A tick that
    records no lane writes no row here."""

    __tablename__ = "runtime_demand_ticks"
    __table_args__ = (Index("ix_runtime_demand_ticks_at", "at", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tick: Mapped[int] = mapped_column(BigInteger, nullable=False)
    at: Mapped[float] = mapped_column(Float, nullable=False)
    n: Mapped[int] = mapped_column(Integer, nullable=False)
    # The lane blob comes first: a reader that needs only the lanes never reads past it.
    lanes: Mapped[bytes] = mapped_column(LargeBinary, nullable=False)
    demands: Mapped[bytes] = mapped_column(LargeBinary, nullable=False)


class PublishedRow(Base):
    """The last published tick as one document (what ``GET /v1/admission`` and ``/v1/pools``
    serve), so a restarted controller keeps serving and numbering from where it stopped."""

    __tablename__ = "runtime_published"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    tick: Mapped[int] = mapped_column(BigInteger, nullable=False)
    at: Mapped[float] = mapped_column(Float, nullable=False)
    document: Mapped[dict[str, Any]] = mapped_column(JSON, nullable=False)
