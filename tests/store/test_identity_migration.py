"""Migration 0002 on a store written at 0001: rows get the create ids their Pulumi resources
already have in state, so an existing stack keeps deleting exactly its own rows."""

from __future__ import annotations

from sqlalchemy import text

from arklow_pulumi.store import open_store, ownership
from arklow_pulumi.store import service as svc
from arklow_pulumi.store.engine import close_stores, normalize_url
from tests.store.migrating import migrate

ROWS_AT_0001 = [
    "INSERT INTO destinations VALUES ('a', '[\"gpu\"]', '[]', '{}')",
    "INSERT INTO destinations VALUES ('b', '[\"gpu\"]', '[]', '{}')",
    "INSERT INTO pools VALUES ('a/gpu', 'gpu', 0, 0.1, 'a')",
    "INSERT INTO pools VALUES ('shared', 'gpu', 0, 0.1, NULL)",
    "INSERT INTO memberships VALUES ('a', 'gpu', 'a/gpu')",
    "INSERT INTO memberships VALUES ('b', 'gpu', 'shared')",
    "INSERT INTO scale_targets VALUES ('t', 'shared', 'aws_asg', 't', 'us-east-1', NULL, NULL, "
    "1, 4, 2.0, 1, false)",
]


def _at_0001(url: str) -> None:
    from sqlalchemy import create_engine

    engine = create_engine(normalize_url(url))
    migrate(engine, "upgrade", "0001")
    with engine.begin() as conn:
        for statement in ROWS_AT_0001:
            conn.execute(text(statement))
    engine.dispose()


def test_rows_written_at_0001_keep_their_pulumi_ids(store_url: str) -> None:
    if store_url.startswith("sqlite:///"):
        from pathlib import Path

        Path(store_url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    _at_0001(store_url)
    store = open_store(store_url)
    try:
        ids = {
            (row.kind, row.name): row.identity.create_id
            for row in ownership.owned_rows(store)  # no owner recorded yet: nothing listed
        }
        assert ids == {}
        assert svc.get_destination(store, "a").identity.create_id == "a"  # type: ignore[union-attr]
        assert svc.get_pool(store, "shared").identity.create_id == "shared"  # type: ignore[union-attr]
        assert svc.get_pool(store, "a/gpu").identity.create_id is None  # type: ignore[union-attr]
        assert svc.membership_view(store, "b", "shared").identity.create_id == "shared:b"  # type: ignore[union-attr]
        assert svc.membership_view(store, "a", "a/gpu").identity.create_id is None  # type: ignore[union-attr]
        assert svc.get_target(store, "t").identity.create_id == "t"  # type: ignore[union-attr]

        # the legacy ids still delete their own rows
        svc.leave(store, "b", "shared", "shared:b")
        svc.detach_target(store, "shared", "t", "t")
        svc.delete_pool(store, "shared", "shared")
        svc.delete_destination(store, "b", "b")
        topo = svc.stored_topology(store)
        assert set(topo.destinations) == {"a"} and set(topo.pools) == {"a/gpu"}
    finally:
        close_stores()
