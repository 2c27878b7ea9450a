"""The JSON bodies of the controller's HTTP API (docs/api.md), each declared once as a shape.

:mod:`.intake` checks a demand batch with :data:`REPORT` and :func:`batch` (the messages and the
passes are its own); the handlers of :mod:`.app` build their answers with these records'
:meth:`~.shapes.Record.document`; :mod:`.openapi` publishes the same objects' schemas. A published
lane, pool and target are shaped after the views the tick publishes
(:class:`~..ports.LaneView`, :class:`~..ports.PoolView`, :class:`~..ports.TargetView`) and the
fields :mod:`..tick.documents` renders of them. Ranges and the name rule come from
:mod:`arklow_pulumi.core.limits`.
"""

from __future__ import annotations

import json
import re

from arklow_pulumi.controller.api.shapes import (
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
from arklow_pulumi.controller.ports import LaneView, LeaderView, PoolView, TargetView
from arklow_pulumi.controller.tick.documents import POOL_VIEW_FIELDS, TARGET_VIEW_FIELDS
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

ECHO_LENGTH = 100  # characters of a caller's text echoed in a message
MESSAGE_LENGTH = 1000
_SURROGATE = re.compile("[\ud800-\udfff]")


def echo(text: str) -> str:
    """A caller's text quoted for a message: at most :data:`ECHO_LENGTH` characters, with every
    character that is not printable (control characters, NUL, direction marks, lone surrogates)
    written as an escape, so a message stays one readable, encodable line."""
    shown = repr(text[:ECHO_LENGTH])
    return shown if len(text) <= ECHO_LENGTH else f"{shown}... ({len(text)} characters)"


def encodable(text: str, limit: int = MESSAGE_LENGTH) -> str:
    """``text`` as valid UTF-8 can carry it: each lone surrogate (which a JSON decoder may hand
    over from ``"\\ud800"``) replaced by U+FFFD, cut to ``limit`` characters."""
    text = _SURROGATE.sub("\ufffd", text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def error_body(error: str, **fields: object) -> bytes:
    """The bytes of an error answer ``{"error", "item"?, "lane"?}``: the one encoder of every
    4xx and 5xx body the API writes (its handlers, the request checks, the connection layer),
    so none can fail to encode whatever the request held."""
    doc = REFUSAL.document(
        error=encodable(error),
        **{k: encodable(v) if isinstance(v, str) else v for k, v in fields.items()},
    )
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


NAMED = (DEMAND_REPORT, ERROR, LANE, POOL, TARGET)
