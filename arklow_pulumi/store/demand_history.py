"""The controller's demand history in the store: a lane dictionary and one packed row per tick.

A tick's history (the ``(lane, demand)`` rows it used: every lane whose demand changed, and each
lane at least once per keyframe interval) is one ``runtime_demand_ticks`` row: ``n`` lane ids and
``n`` demands as two blobs (:mod:`arklow_pulumi.store.history_packing`). Lane names live once in
``runtime_demand_lanes``; a lane gets its id in the transaction of the first tick that records it,
and keeps it (dictionary rows are never changed or deleted, so an id once read stays right).

Writing: each store keeps the dictionary in a per-process cache (loaded whole on first use), so a
tick with no new lane reads nothing back. New lanes are added with ``INSERT ... ON CONFLICT DO
NOTHING`` and their ids then selected, so a lane another process added meanwhile is found, not
duplicated. What a transaction learnt joins the cache only after it commits
(:func:`remember_lanes`), so a rolled-back tick leaves no id in the cache that the store lacks.

Reading keeps the meaning of one row per lane per tick:

- a tick row's rows are ``(lane, demand)`` in the order the tick gave; rows are ordered by the
  tick row's ``at``, then by its id (the order ticks were written), then by position;
- the newest row of a lane is the last in that order. :func:`latest_per_lane` reads tick rows
  newest first, only their lane blob unless a row holds a lane not yet seen, and stops once every
  lane of the dictionary is seen (a lane in the topology is written at least once per keyframe
  interval, so about an hour of ticks) or the oldest row is read (a lane that left the topology,
  or first appeared after ``at_most``, is looked for until then: once 16 or fewer lanes are
  left, by searching each row's lane bytes, about 0.25 ms a row of 10,000 lanes on SQLite);
- pruning deletes whole tick rows, oldest first; a batch is counted in lane rows (``n``), rounded
  up to whole tick rows, and takes at least ``min_ticks`` of them.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import itemgetter
from typing import Any
from weakref import WeakKeyDictionary

from sqlalchemy import Connection, delete, select

from arklow_pulumi.store.engine import Store
from arklow_pulumi.store.history_packing import (
    lanes_in,
    pack_demands,
    pack_lanes,
    unpack_demands,
    unpack_lanes,
)
from arklow_pulumi.store.runtime_tables import DemandLaneRow, DemandTickRow
from arklow_pulumi.store.tables import table_of

LANES = table_of(DemandLaneRow)
TICKS = table_of(DemandTickRow)
TICK_COLUMNS = ("tick", "at", "n", "lanes", "demands")

_LANE_IDS: WeakKeyDictionary[Store, dict[str, int]] = WeakKeyDictionary()
_SELECT_CHUNK = 500  # lanes named in one ``IN (...)`` when new lanes' ids are read back
_PAGE = 32  # tick rows read at a time, newest first
_LANE = itemgetter(0)
_FEW = 16  # unseen lanes looked for by searching the lane blob's bytes


# -- writing ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DemandRows:
    """A tick's demand-history rows as two columns of the same length: the lanes and their
    demands (what the controller makes; :class:`TickRecord` also takes ``(lane, demand)`` rows)."""

    lanes: Sequence[str]
    demands: Sequence[float]

    def __len__(self) -> int:
        return len(self.lanes)

    def __iter__(self) -> Iterator[tuple[str, float]]:
        return zip(self.lanes, self.demands, strict=True)


def packed_tick(
    conn: Connection,
    store: Store,
    tick: int,
    at: float,
    rows: Sequence[tuple[str, float]] | DemandRows,
) -> tuple[tuple[int, float, int, bytes, bytes], dict[str, int]]:
    """The tick row of ``rows`` (columns :data:`TICK_COLUMNS`), adding the lanes it is the first
    to record to the dictionary; and the lane ids this transaction learnt (give them to
    :func:`remember_lanes` once it has committed)."""
    if isinstance(rows, DemandRows):
        names, demands = rows.lanes, rows.demands
    else:
        names, demands = list(map(_LANE, rows)), [demand for _lane, demand in rows]
    cached = _LANE_IDS.get(store)
    learnt = _all_lane_ids(conn) if cached is None else {}
    known = learnt if cached is None else cached
    try:  # every lane known: one lookup per row
        ids = pack_lanes(map(known.__getitem__, names))
    except KeyError:
        learnt.update(
            _add_lanes(conn, [lane for lane in dict.fromkeys(names) if lane not in known])
        )
        known = learnt if cached is None else {**cached, **learnt}
        ids = pack_lanes(map(known.__getitem__, names))
    return (tick, at, len(names), ids, pack_demands(demands)), learnt


def remember_lanes(store: Store, learnt: Mapping[str, int]) -> None:
    """Cache lane ids a committed transaction read or added."""
    cached = _LANE_IDS.get(store)
    if cached is None:
        _LANE_IDS[store] = dict(learnt)
    else:
        cached.update(learnt)


def _all_lane_ids(conn: Connection) -> dict[str, int]:
    return {lane: id_ for id_, lane in conn.execute(select(LANES.c.id, LANES.c.lane))}


def _add_lanes(conn: Connection, lanes: Sequence[str]) -> dict[str, int]:
    """Add ``lanes`` (none of them known here) and return their ids, whoever added them."""
    mark = "?" if conn.dialect.paramstyle == "qmark" else "%s"
    conn.exec_driver_sql(
        f"INSERT INTO {LANES.name} (lane) VALUES ({mark}) ON CONFLICT (lane) DO NOTHING",
        [(lane,) for lane in lanes],
    )
    if len(lanes) > 4 * _SELECT_CHUNK:
        everything = _all_lane_ids(conn)
        return {lane: everything[lane] for lane in lanes}
    found: dict[str, int] = {}
    for start in range(0, len(lanes), _SELECT_CHUNK):
        chunk = lanes[start : start + _SELECT_CHUNK]
        query = select(LANES.c.lane, LANES.c.id).where(LANES.c.lane.in_(chunk))
        found.update({lane: id_ for lane, id_ in conn.execute(query)})
    return found


def prune(conn: Connection, before: float, batch: int, min_ticks: int = 1) -> int:
    """Delete the oldest tick rows older than ``before``: whole rows until ``batch`` lane rows
    went, and at least ``min_ticks`` rows (when that many are due). How many lane rows went.

    The rows are found through the index on ``at`` (ordered by it, then by id): ordered by id
    alone, SQLite walks the whole table in id order looking for them, every tick."""
    due = conn.execute(
        select(TICKS.c.id, TICKS.c.n)
        .where(TICKS.c.at < before)
        .order_by(TICKS.c.at, TICKS.c.id)
        .limit(max(batch, min_ticks))
    )
    chosen: list[int] = []
    removed = 0
    for id_, n in due:
        if removed >= batch and len(chosen) >= min_ticks:
            break
        chosen.append(id_)
        removed += n
    if chosen:
        conn.execute(delete(TICKS).where(TICKS.c.id.in_(chosen)))
    return removed


# -- reading ----------------------------------------------------------------------------------


def lane_names(conn: Connection) -> dict[int, str]:
    return {id_: lane for id_, lane in conn.execute(select(LANES.c.id, LANES.c.lane))}


def latest_per_lane(conn: Connection, at_most: float | None) -> dict[str, tuple[float, float]]:
    """lane -> (demand, at) of each lane's newest row (at or before ``at_most``)."""
    names: dict[int, str] | None = None
    unseen: set[int] = set()
    newest: dict[str, tuple[float, float]] = {}
    for id_, at, lane_blob in _newest_first(conn, at_most):
        if names is None:  # read after the newest row: it knows every lane that row holds
            names = lane_names(conn)
            unseen = set(names)
        if not unseen:
            break
        if len(unseen) <= _FEW:  # the last few (lanes gone from the topology): a byte search
            hit = lanes_in(bytes(lane_blob), unseen)
            if not hit:
                continue
            lanes = unpack_lanes(lane_blob)
        else:
            lanes = unpack_lanes(lane_blob)
            hit = unseen.intersection(lanes)
            if not hit:
                continue
        unseen -= hit
        position = dict(zip(lanes, range(len(lanes)), strict=True))  # a lane's last position
        demands = _demands_of(conn, id_)
        for lane in hit:
            newest[names[lane]] = (demands[position[lane]], at)
    return newest


def rows_after(conn: Connection, since: float) -> list[tuple[float, str, float]]:
    """Every (at, lane, demand) row later than ``since``, sorted by time, then lane, then the
    order they were written in."""
    query = (
        select(TICKS.c.at, TICKS.c.lanes, TICKS.c.demands)
        .where(TICKS.c.at > since)
        .order_by(TICKS.c.at, TICKS.c.id)
    )
    names: dict[int, str] = {}
    rows: list[tuple[float, str, float]] = []
    for at, lane_blob, demand_blob in conn.execute(query):
        lanes = unpack_lanes(lane_blob)
        demands = unpack_demands(demand_blob)
        if len(lanes) != len(demands):
            raise ValueError(f"packed demand history row at {at}: lane and demand counts differ")
        try:
            named = list(map(names.__getitem__, lanes))
        except KeyError:  # a lane added after the names were read (or none read yet)
            names = lane_names(conn)
            named = list(map(names.__getitem__, lanes))
        rows.extend(zip(repeat(at, len(lanes)), named, demands, strict=False))
    rows.sort(key=itemgetter(0, 1))  # stable: rows of one lane at one time keep their order
    return rows


def _newest_first(conn: Connection, at_most: float | None) -> Iterator[tuple[int, float, Any]]:
    """(id, at, lane blob) of tick rows at or before ``at_most``, newest first, a page at a time
    (keyset on the index on ``(at, id)``: no page reads past what the reader stops at)."""
    last: tuple[float, int] | None = None
    while True:
        query = select(TICKS.c.id, TICKS.c.at, TICKS.c.lanes)
        if last is not None:
            query = query.where(
                TICKS.c.at <= last[0], ~((TICKS.c.at == last[0]) & (TICKS.c.id >= last[1]))
            )
        elif at_most is not None:
            query = query.where(TICKS.c.at <= at_most)
        query = query.order_by(TICKS.c.at.desc(), TICKS.c.id.desc()).limit(_PAGE)
        page: list[tuple[int, float, Any]] = [tuple(row) for row in conn.execute(query)]
        yield from page
        if len(page) < _PAGE:
            return
        last = (page[-1][1], page[-1][0])


def _demands_of(conn: Connection, tick_row: int) -> array[float]:
    blob = conn.execute(select(TICKS.c.demands).where(TICKS.c.id == tick_row)).scalar_one()
    return unpack_demands(blob)
