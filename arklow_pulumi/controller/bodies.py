"""The JSON bodies of the controller's HTTP API (docs/api.md), each declared once as a shape.

:mod:`.intake` checks a demand batch with :data:`REPORT` and :func:`batch` (the messages and the
passes are its own); the handlers of :mod:`.api` build their answers with these records'
:meth:`~.shapes.Record.document`; :mod:`.openapi` publishes the same objects' schemas. A published
lane, pool and target are shaped after the views the tick publishes
(:class:`~.ports.LaneView`, :class:`~.ports.PoolView`, :class:`~.ports.TargetView`) and the fields
:mod:`.documents` renders of them. Ranges and the name rule come from
:mod:`arklow_pulumi.core.limits`.
"""

from __future__ import annotations

from arklow_pulumi.controller.documents import POOL_VIEW_FIELDS, TARGET_VIEW_FIELDS
from arklow_pulumi.controller.ports import LaneView, LeaderView, PoolView, TargetView
from arklow_pulumi.controller.shapes import (
    Choice,
    Flag,
    Items,
    Named,
    Number,
    Record,
    Table,
    Text,
    record_of,
)
from arklow_pulumi.core.limits import MAX_NAME_LENGTH, UNITS_RANGE

_PART = f"[^/]{{1,{MAX_NAME_LENGTH}}}"

NAME = Text(
    min_length=1,
    max_length=MAX_NAME_LENGTH,
    description=f"a name: 1 to {MAX_NAME_LENGTH} printable characters",
)
SEGMENT = Text(
    pattern=f"^{_PART}$",
    what=f"a name of 1 to {MAX_NAME_LENGTH} characters without '/'",
    description=f"a destination or lane name: 1 to {MAX_NAME_LENGTH} characters, no '/'",
)
LANE_KEY = Text(
    pattern=f"^{_PART}/{_PART}$",
    what="'<destination>/<lane>'",
    description=f"'<destination>/<lane>': two names of 1 to {MAX_NAME_LENGTH} characters",
)
DEMAND = Number(
    *UNITS_RANGE,
    description="units in flight and queued: a finite number; JSON true and false are not numbers",
)

# -- requests -------------------------------------------------------------------------------------

REPORT = Record({"lane": LANE_KEY, "demand": DEMAND})
DEMAND_REPORT = Named("DemandReport", REPORT)


def batch(max_reports: int) -> Record:
    """A ``POST /v1/demand`` body of at most ``max_reports`` reports."""
    return Record({"reports": Items(DEMAND_REPORT, max_items=max_reports)})


# -- answers --------------------------------------------------------------------------------------

TICK = Number(integer=True, description="the published tick's number")
TIME = Text(format="date-time", description="the published tick's time (ISO 8601, UTC)")
STALE = "the published tick is older than two intervals"
LANE_STALE = "the lane had no report fresher than the TTL (its last admission is kept)"

LANE_VIEW = record_of(LaneView, LaneView._fields, descriptions={"stale": LANE_STALE})
LANE = Named("Lane", LANE_VIEW)
TARGET = Named("Target", record_of(TargetView, TARGET_VIEW_FIELDS))
POOL = Named(
    "Pool",
    record_of(
        PoolView,
        (*POOL_VIEW_FIELDS, "targets"),
        known={TargetView: TARGET},
        descriptions={"pressure": "demand / capacity; null when capacity is 0 and demand is not"},
    ),
)

ADMISSION = Record(
    {
        "tick": TICK,
        "time": TIME,
        "stale": Flag(STALE),
        "lanes": Table(LANE, keys=LANE_KEY),
    }
)
LANE_ANSWER = Record(
    {
        "lane": LANE_KEY,
        "tick": TICK,
        "time": TIME,
        **LANE_VIEW.fields,
        "stale": Flag(f"{STALE}, or the lane had no report fresher than the TTL"),
    }
)
POOLS = Record({"tick": TICK, "pools": Table(POOL, keys=NAME)})
LEADER = record_of(
    LeaderView,
    descriptions={
        "leader": "this replica leads",
        "holder": "the lease's holder, null when none",
        "epoch": "the lease's epoch",
    },
)
ACCEPTED = Record({"accepted": Number(low=0, integer=True, description="distinct lanes stored")})
HEALTH = Record({"status": Choice(("ok",))})
READINESS = Record({"ready": Flag("the store and the supply were read on the last tick")})
REFUSAL = Record(
    {
        "error": Text(description="one line"),
        "item": Number(low=0, integer=True, description="index of the first refused report"),
        "lane": Text(description="the refused report's lane, when known"),
    },
    optional=frozenset({"item", "lane"}),
)
ERROR = Named("Error", REFUSAL)

NAMED = (DEMAND_REPORT, ERROR, LANE, POOL, TARGET)
