"""The topology revision: every write to a topology table raises it, whoever writes (the store's
own functions, a ``pulumi up``'s snapshot diff, plain SQL); nothing else does."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from sqlalchemy import inspect, text

from arklow_pulumi.core.topology import Topology
from arklow_pulumi.store.engine import Store, StoreError, open_store, reading, writing
from arklow_pulumi.store.revision import topology_revision
from arklow_pulumi.store.runtime import acquire_lease, store_demand_reports
from arklow_pulumi.store.service import stored_topology
from arklow_pulumi.store.snapshots import load_all
from tests.builders import dest, lane, pool, target, topo
from tests.controller_process import put_topology
from tests.store.migrating import migrate


def shared(capacity: float = 4.0, weight: float = 1.0, upr: float = 8.0) -> Topology:
    return topo(
        [dest("search", ["gpu"], lane("batch", 64, weight)), dest("reports", ["gpu"])],
        [
            pool(
                "shared-gpu",
                "gpu",
                ["search", "reports"],
                capacity,
                scale_targets=[target("gpu-workers", 1, 10, upr, 2)],
            )
        ],
    )


def test_every_topology_change_moves_the_revision_and_a_rewrite_of_the_same_rows_does_not(
    store: Store,
) -> None:
    put_topology(store, shared())
    first = topology_revision(store)
    put_topology(store, shared())  # the same rows: the diff writes nothing
    assert topology_revision(store) == first
    seen = [first]
    # a capacity one bit away, a lane's weight in the destination's document, a target's units,
    # a membership gone
    for changed in (
        shared(capacity=math.nextafter(4.0, 5.0)),
        shared(weight=2.0),
        shared(upr=math.nextafter(8.0, 9.0)),
        topo([dest("search", ["gpu"], lane("batch", 64))], [pool("shared-gpu", "gpu", [])]),
    ):
        put_topology(store, changed)
        revision = topology_revision(store)
        assert revision > seen[-1]
        seen.append(revision)


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE pools SET capacity = capacity + 1",
        "UPDATE destinations SET lanes = lanes",  # same value: still a write
        "DELETE FROM scale_targets",
        "UPDATE memberships SET resource = resource",
        "INSERT INTO pools (name, resource, capacity, headroom) VALUES ('extra', 'cpu', 1.0, 0.0)",
    ],
)
def test_plain_sql_on_any_topology_table_moves_it(store: Store, statement: str) -> None:
    put_topology(store, shared())
    before = topology_revision(store)
    with writing(store) as conn:
        conn.execute(text(statement))
    assert topology_revision(store) > before


def test_runtime_writes_reads_and_rolled_back_writes_leave_it(store: Store) -> None:
    put_topology(store, shared())
    before = topology_revision(store)
    lease = acquire_lease(store, "test", 15.0, force=True)
    store_demand_reports(store, lease, [("search/batch", 3.0)], 1.0)
    stored_topology(store)
    with reading(store) as conn:
        load_all(conn)
    with pytest.raises(RuntimeError), writing(store) as conn:
        conn.execute(text("UPDATE pools SET capacity = capacity + 1"))
        raise RuntimeError("rolled back")
    assert topology_revision(store) == before


def test_a_store_without_the_row_is_one_clear_error(store: Store) -> None:
    with writing(store) as conn:
        conn.execute(text("DELETE FROM topology_revision"))
    with pytest.raises(StoreError, match="topology_revision"):
        topology_revision(store)


def test_the_migration_starts_from_the_stored_topology_and_goes_back_down(store_url: str) -> None:
    store = open_store(store_url)
    put_topology(store, shared())
    migrate(store.engine, "downgrade", "0005")
    with store.engine.connect() as conn:
        assert not inspect(conn).has_table("topology_revision")
    with store.engine.begin() as conn:
        conn.execute(text("UPDATE pools SET capacity = 9"))  # no trigger left behind
        migrate(conn, "upgrade", "head")
    first = topology_revision(store)
    put_topology(store, shared())
    assert topology_revision(store) > first


def test_a_fresh_store_starts_at_one(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'a.db'}")
    assert topology_revision(store) == 1
