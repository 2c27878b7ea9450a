"""The seams inside the controller process: what the tick publishes, what the HTTP API reads and
writes, what the loop reports to metrics, the clock it reads, and who leads.

The tick (observe → decide → act → publish) produces a :class:`Published` value; the HTTP app only
reads the latest one and hands demand reports to a :class:`DemandSink`. Neither side imports the
other: :mod:`arklow_pulumi.controller.running` wires a concrete loop and a concrete app together.
All values here are immutable; everything crossing a port is plain data.

Leadership is one interface, :class:`Elector`, with two implementations: the SQLite lock file
(:mod:`.leadership.leasing`, epoch 1 for the life of the process) and the PostgreSQL lease row
(:mod:`.leadership.electing`). Its news arrives as :class:`LeaderCallbacks` (client-go's
``OnStartedLeading`` / ``OnStoppedLeading`` / ``OnNewLeader``), which start and cancel the tick
loop (:mod:`.leadership.looping`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Literal, NamedTuple, Protocol

if TYPE_CHECKING:
    from arklow_pulumi.store.runtime import Lease

PoolState = Literal["idle", "steady", "constrained"]


class LaneView(NamedTuple):
    """One lane as published: ``demand`` is the last reported value (raw, not capped). A named
    tuple rather than a frozen dataclass: a tick makes one per lane, and a tuple is made in a
    quarter of the time."""

    demand: float
    allocation: float
    held: float
    admission: float
    # True when the lane had no report fresher than the TTL (its last admission is kept).
    stale: bool = False


class LaneColumns(Mapping[str, LaneView]):
    """A tick's published lanes kept as columns (a tick publishes one per lane: 10,000 and more);
    a :class:`LaneView` is made when a lane is looked up. ``stale``: the keys of the stale lanes.
    Never changed once made (the columns are not handed out)."""

    __slots__ = ("_admission", "_allocation", "_demand", "_held", "_index", "_keys", "_stale")

    def __init__(
        self,
        keys: Sequence[str],
        demand: Sequence[float],
        allocation: Sequence[float],
        held: Sequence[float],
        admission: Sequence[float],
        stale: Collection[str] = frozenset(),
    ) -> None:
        self._keys = tuple(keys)
        self._index = _index_of(self._keys)
        self._demand, self._allocation = demand, allocation
        self._held, self._admission = held, admission
        self._stale = frozenset(stale)

    def __getitem__(self, key: str) -> LaneView:
        i = self._index[key]
        return LaneView(
            self._demand[i],
            self._allocation[i],
            self._held[i],
            self._admission[i],
            key in self._stale,
        )

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._index

    def columns(self) -> tuple[Sequence[float], Sequence[float], Sequence[float], Sequence[float]]:
        """(demand, allocation, held, admission), in key order."""
        return self._demand, self._allocation, self._held, self._admission

    @property
    def stale(self) -> frozenset[str]:
        return self._stale

    @property
    def keys_in_order(self) -> tuple[str, ...]:
        return self._keys

    @property
    def index(self) -> Mapping[str, int]:
        """Key -> position in the columns."""
        return self._index


@lru_cache(maxsize=4)
def _index_of(keys: tuple[str, ...]) -> Mapping[str, int]:
    """Key -> position; every tick of one topology publishes the same keys in the same order."""
    return {key: i for i, key in enumerate(keys)}


@dataclass(frozen=True, slots=True)
class TargetView:
    desired: int
    in_service: int
    pending: int
    min: int
    max: int
    # why desired is what it is (core.policy.REASONS): shown by `controller plan` and the
    # metrics, not part of the published document (GET /v1/pools keeps its contract's fields)
    reason: str = field(default="on-target", compare=False)


@dataclass(frozen=True, slots=True)
class PoolView:
    resource: str
    capacity: float
    demand: float
    pressure: float | None
    state: PoolState
    desired_replicas: int
    targets: Mapping[str, TargetView] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Published:
    """One published tick. ``time`` is timezone-aware UTC (the tick's clock time)."""

    tick: int
    time: datetime
    lanes: Mapping[str, LaneView]
    pools: Mapping[str, PoolView]


@dataclass(frozen=True, slots=True)
class DemandReport:
    lane: str  # "<destination>/<lane>"
    demand: float


@dataclass(frozen=True, slots=True)
class LeaderView:
    leader: bool
    holder: str | None
    epoch: int


class DemandSink(Protocol):
    """Where the API hands demand reports. ``accept`` stores a whole, already validated batch
    atomically (all or nothing) and returns how many reports it stored."""

    def known_lanes(self) -> Collection[str]: ...

    def accept(self, reports: Sequence[DemandReport]) -> int: ...


class ControllerPort(Protocol):
    """Everything the HTTP app needs from the running controller."""

    @property
    def interval_s(self) -> float: ...

    def latest(self) -> Published | None: ...

    def demand_sink(self) -> DemandSink: ...

    def leader(self) -> LeaderView: ...

    def ready(self) -> bool:
        """True when the store and the supply were read on the last tick."""
        ...


class TickObserver(Protocol):
    """What the loop reports each tick (implemented by the Prometheus metrics)."""

    def tick_done(self, published: Published, duration_s: float, overran: bool) -> None: ...

    def scale_action(self, pool: str, target: str, direction: Literal["up", "down"]) -> None:
        """A write changed a target's group (``target``: its name within ``pool``)."""
        ...

    def supply_error(self, pool: str, target: str, kind: str, error: str) -> None:
        """A describe or a write of a target's group failed (``error``: the error's class)."""
        ...

    def demand_reports(self, result: str, count: int) -> None: ...

    def leadership(self, leader: bool, epoch: int, renew_age_s: float | None) -> None: ...


class Clock(Protocol):
    def time(self) -> float:
        """Wall-clock seconds since the Unix epoch (tick times, report ages)."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never jumps (durations)."""
        ...


class SystemClock:
    def time(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()


def _ignore(_news: object) -> None:
    return None


@dataclass(frozen=True, slots=True)
class LeaderCallbacks:
    """What an :class:`Elector` tells as leadership changes (from its own threads; each returns
    at once). ``started``: this process now leads under the lease; ``stopped``: it no longer
    does (nothing may be written or resized under that lease from then on); ``new_leader``:
    another process leads, or none is seen (this one stands by)."""

    started: Callable[[Lease], None] = _ignore
    stopped: Callable[[Lease], None] = _ignore
    new_leader: Callable[[LeaderView], None] = _ignore


class Elector(Protocol):
    """Who leads on one store: the lease keeper of a controller process."""

    @property
    def holder(self) -> str:
        """This process, as the lease names it."""
        ...

    def run(self, stop: threading.Event, callbacks: LeaderCallbacks) -> None:
        """Keep (or try to take) the lease until ``stop``, telling ``callbacks`` as leadership
        changes; give the lease up at the end. Raises when this process can no longer lead at
        all (SQLite: its lease was taken)."""
        ...

    def leading(self) -> Lease | None:
        """The lease while it is this process's and still good by the elector's own deadline."""
        ...

    def view(self) -> LeaderView: ...

    def lost(self, lease: Lease) -> None:
        """A fenced write found ``lease`` taken over: stop leading under it now."""
        ...

    @property
    def fence_window_s(self) -> float:
        """How long one compare-and-set renewal may fence the resizes that follow it."""
        ...

    def release(self) -> None:
        """Give up whatever is still held (the lease, the lock file); idempotent."""
        ...
