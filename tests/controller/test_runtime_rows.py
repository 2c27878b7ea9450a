"""The tick's store reads and writes on both dialects: the topology digest the database computes,
the packed published document, rows sent straight to the driver, and a driver's own error."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import text

from arklow_pulumi.controller.ports import (
    LaneColumns,
    LaneView,
    PoolView,
    Published,
    TargetView,
)
from arklow_pulumi.controller.tick.documents import (
    published_from_document,
    published_json,
)
from arklow_pulumi.store.engine import Store, StoreError, close_stores, open_store
from arklow_pulumi.store.runtime import (
    TargetRecord,
    TickRecord,
    acquire_lease,
    load_demand_split,
    load_published,
    load_snapshot,
    store_demand_reports,
    write_tick,
)
from tests.controller.published_reference import published_document
from tests.store.runtime_reads import load_demand_reports


def published(tick: int = 7) -> Published:
    return Published(
        tick=tick,
        time=datetime.fromtimestamp(1_800_000_000.25, UTC),
        lanes={
            "search/batch": LaneView(64.5, 0.1 + 0.2, 1e-300, 12.0),
            "reports/nightly": LaneView(3.0, -0.0, 0.0, 5.5, stale=True),
            "é/ünicode": LaneView(math.nextafter(1.0, 2.0), 2.0, 0.0, 2.0),
        },
        pools={
            "shared-gpu": PoolView(
                "gpu",
                24.0,
                30.5,
                1.2708333333333333,
                "constrained",
                4,
                {"gpu-workers": TargetView(4, 2, 1, 1, 10)},
            ),
            "empty": PoolView("cpu", 0.0, 1.0, None, "constrained", 0, {}),
        },
    )


def test_a_published_tick_round_trips_bit_for_bit_through_the_store(any_store: Store) -> None:
    lease = acquire_lease(any_store, "test", 15.0, force=True)
    assert lease is not None
    value = published()
    record = TickRecord(
        tick=value.tick,
        at=1_800_000_000.25,
        published=published_json(value),
        targets=[TargetRecord("gpu-workers", "shared-gpu", 2, 1, 4)],
        recommendations=[("gpu-workers", 1_800_000_000.25, 4)],
        demand=[("search/batch", 64.5), ("reports/nightly", 0.0)],
    )
    write_tick(any_store, lease, record)
    stored = load_published(any_store)
    assert stored is not None and stored.tick == 7
    back = published_from_document(stored.document)
    assert back == value
    assert [math.copysign(1.0, v.allocation) for v in back.lanes.values()] == [1.0, -1.0, 1.0]
    assert list(back.lanes) == list(value.lanes)  # lane order kept
    snapshot = load_snapshot(any_store, 0.0)
    assert snapshot.targets == {"gpu-workers": TargetRecord("gpu-workers", "shared-gpu", 2, 1, 4)}
    assert snapshot.recommendations == {"gpu-workers": [(1_800_000_000.25, 4)]}
    assert snapshot.last_demand == {
        "search/batch": (64.5, 1_800_000_000.25),
        "reports/nightly": (0.0, 1_800_000_000.25),
    }
    # the next tick updates the target row in place
    moved = [TargetRecord("gpu-workers", "shared-gpu", 4, 0, 4)]
    write_tick(
        any_store, lease, TickRecord(8, 1_800_000_010.0, published_json(published(8)), moved)
    )
    assert load_snapshot(any_store, 0.0).targets["gpu-workers"].in_service == 4


def test_the_document_text_is_the_json_of_the_document() -> None:
    value = published()
    assert json.loads(published_json(value)) == published_document(value)


def test_a_document_with_one_object_per_lane_is_still_read() -> None:
    """The form stores held before lanes were packed."""
    value = published()
    earlier = {
        "tick": value.tick,
        "time": value.time.isoformat(),
        "lanes": {
            key: {
                "demand": v.demand,
                "allocation": v.allocation,
                "held": v.held,
                "admission": v.admission,
                "stale": v.stale,
            }
            for key, v in value.lanes.items()
        },
        "pools": published_document(value)["pools"],
    }
    assert published_from_document(json.loads(json.dumps(earlier))) == value


def test_demand_reports_read_through_the_driver(any_store: Store) -> None:
    store_demand_reports(any_store, None, [("a/x", 1.5), ("b/y", 0.0), ("a/x", 2.5)], at=10.0)
    assert load_demand_reports(any_store) == {"a/x": (2.5, 10.0), "b/y": (0.0, 10.0)}


def test_a_driver_error_is_one_store_error_line(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'arklow.db'}")
    try:
        with store.engine.begin() as conn:
            conn.execute(text("DROP TABLE runtime_demand_reports"))
        with pytest.raises(StoreError, match="no such table: runtime_demand_reports"):
            load_demand_split(store, now=0.0, ttl_s=30.0)  # the tick's read of the reports
    finally:
        close_stores()


def test_lanes_kept_as_columns_read_and_store_as_lane_views_do() -> None:
    views = published().lanes
    keys = list(views)
    columns = LaneColumns(
        keys,
        [views[k].demand for k in keys],
        [views[k].allocation for k in keys],
        [views[k].held for k in keys],
        [views[k].admission for k in keys],
        {k for k in keys if views[k].stale},
    )
    assert columns == views and dict(columns.items()) == views
    assert columns["reports/nightly"] == LaneView(3.0, -0.0, 0.0, 5.5, stale=True)
    assert "nobody/none" not in columns and columns.get("nobody/none") is None
    as_columns = replace(published(), lanes=columns)
    assert published_json(as_columns) == published_json(published())
    assert published_from_document(json.loads(published_json(as_columns))) == published()


def test_reports_split_into_fresh_and_stale_as_python_would_compare_their_age(
    any_store: Store,
) -> None:
    lease = acquire_lease(any_store, "test", 15.0, force=True)
    now, ttl = 1_800_000_030.1, 30.0
    edge = now - ttl  # its age, computed as ``now - at``, is ttl or a hair either side
    ages = {
        "a/at-edge": edge,
        "a/older": math.nextafter(edge, 0.0),
        "a/newer": math.nextafter(edge, math.inf),
        "a/now": now,
        "b/future": now + 5.0,
    }
    for key, at in ages.items():
        store_demand_reports(any_store, lease, [(key, 2.5)], at)
    fresh, stale = load_demand_split(any_store, now, ttl)
    assert set(fresh) == {key for key, at in ages.items() if now - at <= ttl}
    assert set(stale) == {key for key, at in ages.items() if not now - at <= ttl}
    assert fresh["a/now"] == 2.5 and set(fresh) | set(stale) == set(ages)
