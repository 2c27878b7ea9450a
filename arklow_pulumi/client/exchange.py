"""The client's side of the controller protocol, without I/O: which demand reports are due, what
an answer means for each lane's admission. The thread and the asyncio drivers only move bytes.

Reports: a lane's latest value is sent once after it changes, and again every ``heartbeat_s`` so
the controller's TTL (3 intervals) never expires a lane that is still working. A report the
controller refuses for one lane (422 unknown lane, 403 out of scope) stops that lane's reports,
logged once; the other lanes of the batch are sent again at once.

Admission: one ``GET /v1/admission`` for every lane of the client, with ``If-None-Match``. A 304
renews what the last 200 said. An answer marked ``stale`` (the controller has not ticked for two
intervals), any error, or a lane missing from the answer counts as unanswered for that lane: its
last admission is kept for the grace period, then the floor applies.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from arklow_pulumi.client.admission import LaneAdmission, Mode

log = logging.getLogger("arklow_pulumi.client")

ADMISSION_PATH = "/v1/admission"
DEMAND_PATH = "/v1/demand"
MAX_BATCH = 1000


class ClientError(Exception):
    """A lane was misconfigured on the client side (bad name, limit, floor or demand)."""


@dataclass
class LaneState:
    name: str
    admission: LaneAdmission
    demand: float | None = None  # the last value given to report()
    sent: float | None = None  # the last value the controller stored
    sent_at: float | None = None
    refused: str | None = None  # why the controller refuses this lane's reports
    listed: bool = False  # in the last full admission answer
    missing_logged: bool = False


def check_lane_name(name: str) -> str:
    parts = name.split("/") if isinstance(name, str) else []
    if len(parts) != 2 or not all(parts):
        raise ClientError(f"lane {name!r}: must be '<destination>/<lane>'")
    return name


def check_demand(lane: str, demand: float) -> float:
    if isinstance(demand, bool) or not isinstance(demand, (int, float)):
        raise ClientError(f"lane {lane!r}: demand must be a number (got {demand!r})")
    if not (math.isfinite(demand) and demand >= 0):
        raise ClientError(f"lane {lane!r}: demand must be a finite number >= 0 (got {demand})")
    return float(demand)


def auth_headers(token: str | None) -> dict[str, str]:
    """The headers that carry the client's token (none without one)."""
    return {"Authorization": f"Bearer {token}"} if token else {}


def response_json(response: Any) -> object:
    """An HTTP answer's JSON body, or None when it has none."""
    try:
        return response.json()
    except ValueError:
        return None


class Gate(Protocol):
    """A lane's local limiter (the thread or the asyncio one of ``slots.py``)."""

    in_use: float


G = TypeVar("G", bound=Gate)


class LaneFace(Generic[G]):
    """What both lane classes (thread and asyncio) show of a lane: name, limit, admission now,
    mode, units held and why its reports are refused. ``clock`` is the client's; ``gate`` makes
    the lane's limiter from its admission now and its limit."""

    def __init__(
        self,
        state: LaneState,
        clock: Callable[[], float],
        gate: Callable[[Callable[[], float], float], G],
    ) -> None:
        self._state = state
        self._clock = clock
        self._gate = gate(self._capacity, state.admission.limit)

    @property
    def in_use(self) -> float:
        """Units held now in this lane's slots."""
        return self._gate.in_use

    @property
    def name(self) -> str:
        return self._state.name

    @property
    def limit(self) -> float:
        return self._state.admission.limit

    @property
    def admission(self) -> float:
        """Units this lane may hold now (the controller's, kept in grace, or the floor)."""
        return self._capacity()

    @property
    def mode(self) -> Mode:
        return self._state.admission.mode(self._clock())

    @property
    def refused(self) -> str | None:
        """Why the controller refuses this lane's reports (None while it takes them)."""
        return self._state.refused

    def _capacity(self) -> float:
        return self._state.admission.current(self._clock())


@dataclass
class Exchange:
    grace_s: float
    heartbeat_s: float
    clock: Callable[[], float]
    lanes: dict[str, LaneState] = field(default_factory=dict)
    etag: str | None = None
    last_stale: bool = False
    reachable: bool | None = None  # None before the first attempt

    def add_lane(self, name: str, limit: float, floor: float) -> LaneState:
        check_lane_name(name)
        existing = self.lanes.get(name)
        if existing is not None:
            if (existing.admission.limit, existing.admission.floor) != (limit, min(floor, limit)):
                raise ClientError(f"lane {name!r}: already opened with another limit or floor")
            return existing
        try:
            admission = LaneAdmission(limit, floor, self.grace_s)
        except ValueError as exc:
            raise ClientError(f"lane {name!r}: {exc}") from None
        state = self.lanes[name] = LaneState(name, admission)
        self.etag = None  # the next poll brings a full answer, with this lane in it
        return state

    def report(self, name: str, demand: float) -> None:
        self.lanes[name].demand = check_demand(name, demand)

    # -- demand ---------------------------------------------------------------------------------

    def due_reports(self) -> list[tuple[str, float]]:
        now = self.clock()
        due = []
        for lane in self.lanes.values():
            if lane.demand is None or lane.refused is not None:
                continue
            stale = lane.sent_at is None or now - lane.sent_at >= self.heartbeat_s
            if lane.demand != lane.sent or stale:
                due.append((lane.name, lane.demand))
        return due

    @staticmethod
    def batches(reports: list[tuple[str, float]]) -> list[list[tuple[str, float]]]:
        return [reports[i : i + MAX_BATCH] for i in range(0, len(reports), MAX_BATCH)]

    @staticmethod
    def sends(batch: list[tuple[str, float]]) -> int:
        """How many times a batch may be sent: each refused answer sets one lane aside, so once
        per lane and once more."""
        return len(batch) + 1

    @staticmethod
    def body(batch: list[tuple[str, float]]) -> dict[str, Any]:
        return {"reports": [{"lane": lane, "demand": demand} for lane, demand in batch]}

    def stored(self, batch: list[tuple[str, float]]) -> None:
        now = self.clock()
        for name, demand in batch:
            lane = self.lanes[name]
            lane.sent, lane.sent_at = demand, now

    def answered(
        self, batch: list[tuple[str, float]], status: int, doc: object
    ) -> list[tuple[str, float]]:
        """What a ``POST /v1/demand`` answer means: the batch is stored (200), or one lane is set
        aside and the rest is to be sent again (the list returned; empty when nothing is)."""
        if status == 200:
            self.stored(batch)
            return []
        if not self.refused(batch, status, doc):
            return []
        return [(name, demand) for name, demand in batch if self.lanes[name].refused is None]

    def refused(self, batch: list[tuple[str, float]], status: int, doc: object) -> bool:
        """Handle a refused batch; True when one lane was set aside and the rest can be resent."""
        name = doc.get("lane") if isinstance(doc, dict) else None
        message = doc.get("error") if isinstance(doc, dict) else None
        lane = self.lanes.get(name) if isinstance(name, str) else None
        if status in (403, 422) and lane is not None and lane.refused is None:
            lane.refused = f"{status}: {message}"
            log.error("arklow: the controller refuses reports for lane %s (%s)", name, message)
            return True
        log.warning("arklow: demand batch refused with HTTP %s: %s", status, message)
        return False

    # -- admission ------------------------------------------------------------------------------

    def admission_headers(self) -> dict[str, str]:
        return {"If-None-Match": self.etag} if self.etag else {}

    def admission_answered(self, status: int, etag: str | None, doc: object) -> None:
        now = self.clock()
        if status == 304:
            self._renew(None, now)
            return
        lanes = doc.get("lanes") if isinstance(doc, dict) else None
        if status != 200 or not isinstance(lanes, Mapping):
            self.admission_failed(f"HTTP {status}")
            return
        self.etag = etag
        self.last_stale = bool(doc.get("stale")) if isinstance(doc, dict) else False
        self._renew(lanes, now)

    def admission_failed(self, why: str) -> None:
        if self.reachable is not False:
            log.warning("arklow: no admission from the controller (%s); keeping the last one", why)
        self.reachable = False
        self.etag = None
        for lane in self.lanes.values():
            lane.admission.unanswered()

    def _renew(self, lanes: Mapping[str, Any] | None, now: float) -> None:
        if self.reachable is False:
            log.info("arklow: admission from the controller again")
        self.reachable = True
        for lane in self.lanes.values():
            if self.last_stale:
                lane.admission.unanswered()
                continue
            if lanes is None:  # 304: what the last 200 said still holds
                if lane.listed and lane.admission.value is not None:
                    lane.admission.answered(lane.admission.value, now)
                continue
            entry = lanes.get(lane.name)
            value = entry.get("admission") if isinstance(entry, Mapping) else None
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                lane.listed = True
                lane.admission.answered(float(value), now)
            else:
                lane.listed = False
                lane.admission.unanswered()
                if not lane.missing_logged:
                    lane.missing_logged = True
                    log.warning("arklow: lane %s is not in the controller's admission", lane.name)
