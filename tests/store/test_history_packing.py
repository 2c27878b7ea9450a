"""The packed demand history against a plain reference: one row per lane per tick, as the store
held it before (``runtime_demand_history``), built from the same ticks.

The reference's meaning: rows ordered by the tick's time, then by the order ticks were written,
then by their order in the tick; a lane's newest row is its last in that order; the trace from
``since`` is each lane's newest row at or before it (moved to ``since``), then every later row by
time, lane and write order; a prune batch removes the oldest ticks, whole, until it has removed
its batch of lane rows.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import delete, func, select, text

from arklow_pulumi.store import Store, open_store, runtime
from arklow_pulumi.store.demand_history import LANES as HISTORY_LANES
from arklow_pulumi.store.engine import close_stores
from arklow_pulumi.store.history_packing import (
    lanes_in,
    pack_demands,
    pack_lanes,
    unpack_demands,
    unpack_lanes,
)
from arklow_pulumi.store.runtime import (
    HISTORY,
    Lease,
    TickRecord,
    acquire_lease,
    demand_trace,
    load_snapshot,
    write_tick,
)
from tests.hypothesis_profiles import examples
from tests.store.runtime_reads import forget_lanes, history_rows, prune_history

Tick = tuple[int, float, list[tuple[str, float]]]  # (tick, at, rows)

# Exact floats: zero of both signs, subnormals, large and small magnitudes, ordinary values.
DEMANDS = st.one_of(
    st.sampled_from([0.0, -0.0, 5e-324, 2.2250738585072014e-308, 1e12, 1e308, 0.1, 1 / 3]),
    st.floats(min_value=0.0, allow_nan=False, allow_infinity=False),
)
# More lanes than a reader looks for by byte search (16): both of its ways are taken.
LANES = st.sampled_from([f"d{i}/l{j}" for i in range(5) for j in range(4)] + ["é/ünï"])
TICKS = st.lists(
    st.tuples(
        st.sampled_from([0.0, 10.0, 20.0, 30.0, 40.0, 55.5]),  # equal times, any order
        st.lists(st.tuples(LANES, DEMANDS), min_size=1, max_size=8),  # a lane may repeat
    ),
    max_size=8,
)


def bits(value: float) -> bytes:
    return struct.pack("<d", value)


def exact(rows: list[tuple[float, str, float]]) -> list[tuple[bytes, str, bytes]]:
    """Rows compared bit for bit (0.0 and -0.0 differ)."""
    return [(bits(at), lane, bits(demand)) for at, lane, demand in rows]


def reference_rows(ticks: list[Tick]) -> list[tuple[float, str, float]]:
    """(at, lane, demand) in the history's order: time, then write order, then position."""
    ordered = sorted(enumerate(ticks), key=lambda item: (item[1][1], item[0]))
    return [(at, lane, demand) for _seq, (_tick, at, rows) in ordered for lane, demand in rows]


def reference_latest(ticks: list[Tick], at_most: float | None) -> dict[str, tuple[float, float]]:
    latest: dict[str, tuple[float, float]] = {}
    for at, lane, demand in reference_rows(ticks):
        if at_most is None or at <= at_most:
            latest[lane] = (demand, at)
    return latest


def reference_trace(ticks: list[Tick], since: float) -> list[tuple[float, str, float]]:
    start = reference_latest(ticks, since)
    first = sorted((since, lane, demand) for lane, (demand, _at) in start.items())
    later = [row for row in reference_rows(ticks) if row[0] > since]
    return first + sorted(later, key=lambda row: (row[0], row[1]))  # stable: write order


@pytest.fixture(scope="module")
def history_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Store, Lease]]:
    """One store for every example (the lane dictionary carries over between them)."""
    path = tmp_path_factory.mktemp("history") / "arklow.db"
    store = open_store(f"sqlite:///{path}")
    lease = acquire_lease(store, "test", 60.0, force=True)
    assert lease is not None
    yield store, lease
    close_stores()


def fresh(store: Store) -> None:
    with store.engine.begin() as conn:
        conn.execute(delete(HISTORY))


def write(store: Store, lease: Lease, ticks: list[Tick]) -> None:
    for tick, at, rows in ticks:
        write_tick(store, lease, TickRecord(tick=tick, at=at, published={}, demand=rows))


def numbered(ticks: list[tuple[float, list[tuple[str, float]]]]) -> list[Tick]:
    return [(k, at, rows) for k, (at, rows) in enumerate(ticks, start=1)]


@given(ids=st.lists(st.integers(0, 2**31 - 1)), demands=st.lists(DEMANDS))
def test_the_blobs_round_trip_exactly(ids: list[int], demands: list[float]) -> None:
    lane_blob, demand_blob = pack_lanes(ids), pack_demands(demands)
    assert lane_blob == struct.pack(f"<{len(ids)}i", *ids)  # int32 little-endian
    assert demand_blob == struct.pack(f"<{len(demands)}d", *demands)  # float64 little-endian
    assert list(unpack_lanes(lane_blob)) == ids
    assert [bits(d) for d in unpack_demands(demand_blob)] == [bits(d) for d in demands]


@given(
    ids=st.lists(st.integers(0, 2**31 - 1), max_size=6), probes=st.lists(st.integers(0, 2**31 - 1))
)
def test_the_lanes_a_blob_holds_are_found_in_its_bytes(ids: list[int], probes: list[int]) -> None:
    blob = pack_lanes(ids)
    # values that appear in the bytes across two items, which the blob does not hold
    across = [struct.unpack("<i", blob[k : k + 4])[0] for k in range(1, len(blob) - 3, 2)]
    wanted = [p for p in [*probes, *across, *ids[:2]] if p >= 0]
    assert lanes_in(blob, wanted) == set(wanted) & set(ids)


def test_a_torn_blob_is_refused() -> None:
    with pytest.raises(ValueError, match="not whole 8-byte items"):
        unpack_demands(b"\x00" * 12)


@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(ticks=TICKS, since=st.sampled_from([-1.0, 0.0, 15.0, 20.0, 55.5, 99.0]))
def test_trace_latest_and_count_equal_the_reference(
    history_store: tuple[Store, Lease],
    ticks: list[tuple[float, list[tuple[str, float]]]],
    since: float,
) -> None:
    store, lease = history_store
    fresh(store)
    history = numbered(ticks)
    write(store, lease, history)
    assert history_rows(store) == sum(len(rows) for _tick, _at, rows in history)
    assert exact(demand_trace(store, since)) == exact(reference_trace(history, since))
    last = load_snapshot(store, 0.0).last_demand
    expected = reference_latest(history, None)
    assert {lane: (bits(d), bits(at)) for lane, (d, at) in last.items()} == {
        lane: (bits(d), bits(at)) for lane, (d, at) in expected.items()
    }


@settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(ticks=TICKS, before=st.sampled_from([0.0, 10.0, 25.0, 60.0]), batch=st.integers(1, 12))
def test_prune_batches_equal_the_reference(
    history_store: tuple[Store, Lease],
    ticks: list[tuple[float, list[tuple[str, float]]]],
    before: float,
    batch: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store, lease = history_store
    fresh(store)
    history = numbered(ticks)
    write(store, lease, history)
    monkeypatch.setattr(runtime, "PRUNE_BATCH", batch)
    # The reference: the due ticks, oldest first (time, then write order).
    due = sorted(
        (seq for seq, (_k, at, _rows) in enumerate(history) if at < before),
        key=lambda seq: (history[seq][1], seq),
    )
    left = list(range(len(history)))
    while True:
        removed, went = 0, []
        for seq in due:
            if removed >= batch and went:
                break
            went.append(seq)
            removed += len(history[seq][2])
        assert prune_history(store, lease, before) == removed
        due = [seq for seq in due if seq not in went]
        left = [seq for seq in left if seq not in went]
        kept = [history[seq] for seq in left]
        assert exact(demand_trace(store, -1.0)) == exact(reference_trace(kept, -1.0))
        if removed == 0:
            break
    assert all(at >= before for _k, at, _rows in kept)


def test_a_tick_prunes_whole_ticks_at_least_two(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tick adding one row still removes two old ticks: pruning keeps up with one row a tick."""
    store = open_store(f"sqlite:///{tmp_path / 'arklow.db'}")
    lease = acquire_lease(store, "test", 60.0, force=True)
    assert lease is not None
    big = [(f"d/l{i}", float(i)) for i in range(5)]
    write(store, lease, [(k, float(k), big) for k in range(4)])
    record = TickRecord(tick=9, at=100.0, published={}, demand=[("d/l0", 1.0)], history_before=50.0)
    monkeypatch.setattr(runtime, "PRUNE_BATCH", 1)
    write_tick(store, lease, record)  # budget: 2 lane rows, but two whole ticks of 5 go
    assert [at for at, _lane, _d in demand_trace(store, -1.0)] == [2.0] * 5 + [3.0] * 5 + [100.0]
    assert history_rows(store) == 11


def test_lanes_another_process_added_are_found_not_duplicated(tmp_path: Path) -> None:
    """The in-process lane cache is a shortcut only: a lane another writer added since the cache
    was read gets the id that writer gave it."""
    store = open_store(f"sqlite:///{tmp_path / 'arklow.db'}")
    lease = acquire_lease(store, "test", 60.0, force=True)
    assert lease is not None
    write(store, lease, [(1, 1.0, [("d/a", 1.0)])])  # the cache now holds d/a
    with store.engine.begin() as conn:  # "another process" adds two lanes
        conn.execute(text(f"INSERT INTO {HISTORY_LANES.name} (lane) VALUES ('d/b'), ('d/c')"))
    write(store, lease, [(2, 2.0, [("d/c", 3.0), ("d/a", 2.0), ("d/d", 4.0)])])
    with store.engine.begin() as conn:
        lanes = dict(conn.execute(select(HISTORY_LANES.c.lane, HISTORY_LANES.c.id)).all())
        count = conn.execute(select(func.count()).select_from(HISTORY_LANES)).scalar_one()
    assert count == 4 and set(lanes) == {"d/a", "d/b", "d/c", "d/d"}
    assert demand_trace(store, 1.5) == [
        (1.5, "d/a", 1.0),
        (2.0, "d/a", 2.0),
        (2.0, "d/c", 3.0),
        (2.0, "d/d", 4.0),
    ]
    forget_lanes(store)  # read back from the store alone: the same ids
    write(store, lease, [(3, 3.0, [("d/b", 5.0)])])
    assert demand_trace(store, 2.5)[-1] == (3.0, "d/b", 5.0)


def test_a_rolled_back_tick_leaves_no_lane_id_behind(tmp_path: Path) -> None:
    """A tick that fails after adding a lane rolls the lane back, and the cache does not keep
    the id it was given (the next tick would pack an id the dictionary lacks)."""
    store = open_store(f"sqlite:///{tmp_path / 'arklow.db'}")
    lease = acquire_lease(store, "test", 60.0, force=True)
    assert lease is not None
    write(store, lease, [(1, 1.0, [("d/a", 1.0)])])
    unserialisable = {"not json": object()}
    with pytest.raises(TypeError):
        write_tick(
            store, lease, TickRecord(2, 2.0, published=unserialisable, demand=[("d/new", 7.0)])
        )
    with store.engine.begin() as conn:  # another lane takes the id the rolled-back one had
        conn.execute(text(f"INSERT INTO {HISTORY_LANES.name} (lane) VALUES ('d/other')"))
    write(store, lease, [(3, 3.0, [("d/new", 8.0)])])
    assert demand_trace(store, 2.5) == [(2.5, "d/a", 1.0), (3.0, "d/new", 8.0)]
    assert history_rows(store) == 2
