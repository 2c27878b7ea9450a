"""A change's snapshot holds every pool whose name a new standalone pool could take
(``<d>/<r>``, ``<d>/<r>.N``): read as a byte-order range of names (migration 0007's index on
PostgreSQL), it must find exactly the names that start with ``<d>/<r>.``, whatever the collation
would make of the punctuation, case and characters around them."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from arklow_pulumi.core.topology import Destination, Lane, Pool
from arklow_pulumi.store import Store
from arklow_pulumi.store import service as svc
from arklow_pulumi.store.engine import SCHEMA_REVISION, reading, schema_revision
from arklow_pulumi.store.snapshots import Scope, _pools_query, load_all, load_scope
from tests.store.invariants import violations
from tests.store.migrating import migrate

# Declared pools around the standalone names of destination "a" (resources gpu, cpu): some start
# with "a/gpu." or "a/cpu." (and must be read), the others sort near them in one collation or
# another (and need not be).
NEAR = (
    "a/gpu.2",
    "a/gpu.10",
    "a/gpu.",
    "a/gpu.x",
    "a/gpu.%",
    "a/gpu._",
    "a/gpu.é",
    "a/gpu.\U0001f600",
    "a/gpu..2",
    "a/gpu-2",
    "a/gpu/2",
    "a/gpu2",
    "a/gpu",
    "a/gpu_2",
    "a/gpu%2",
    "a/gpuz",
    "a/gp",
    "A/GPU.2",
    "a/Gpu.2",
    "a /gpu.2",
    "a/cpu.3",
    "a/cpu,3",
    "b/gpu.2",
    "ab/gpu.2",
    "a/gpu.2 x",  # a space inside (the name rule refuses one at either end)
    "zzz",
)


def dest(name: str, *resources: str) -> Destination:
    return Destination(name, tuple(resources), (Lane(name, "default", limit=4.0),))


def expected_pools(store: Store, destination: str, pools: frozenset[str]) -> set[str]:
    """The scope's pools by the Python definition: named, owned by the destination, its current
    pools, its standalone names and every name that starts with one of them and a dot."""
    with reading(store) as conn:
        whole = load_all(conn)
    bases = [f"{destination}/{r}" for r in whole.destinations[destination].resources]
    current = {p for (d, _r), p in whole.memberships.items() if d == destination}
    return {
        name
        for name, found in whole.pools.items()
        if name in pools | current
        or name in bases
        or found.owner == destination
        or any(name.startswith(base + ".") for base in bases)
    }


def test_the_scope_of_a_destination_reads_exactly_the_names_its_pools_could_take(
    store: Store,
) -> None:
    for name in NEAR:
        svc.create_pool(store, Pool(name, "cpu" if "cpu" in name else "gpu"))
    svc.create_destination(store, dest("a", "gpu", "cpu"))
    svc.create_destination(store, dest("b", "gpu"))
    for pools in (frozenset(), frozenset({"zzz"})):
        with reading(store) as conn:
            scope = load_scope(conn, Scope(destinations=frozenset({"a"}), pools=pools))
        assert set(scope.pools) == expected_pools(store, "a", pools)
        assert {"a/gpu.2", "a/gpu.\U0001f600", "a/gpu.%", "a/cpu.3"} <= set(scope.pools)
        assert not {"a/gpu-2", "a/gpu/2", "A/GPU.2", "a/gpu_2", "b/gpu.2"} & set(scope.pools)


def test_a_new_standalone_pool_takes_the_first_free_name_among_the_stored_ones(
    store: Store,
) -> None:
    for name in ("c/gpu", "c/gpu.2", "c/gpu.4", "C/GPU.3", "c/gpu-3", "c/gpu/3", "c/gpu_3"):
        svc.create_pool(store, Pool(name, "gpu"))
    svc.create_destination(store, dest("c", "gpu"))
    assert svc.get_destination(store, "c").standalone_pools == {"gpu": "c/gpu.3"}  # type: ignore[union-attr]
    svc.join(store, "c", "c/gpu.2")  # c's standalone pool is collected
    svc.leave(store, "c", "c/gpu.2")
    assert svc.get_destination(store, "c").standalone_pools == {"gpu": "c/gpu.3"}  # type: ignore[union-attr]
    assert violations(svc.stored_topology(store)) == []


def _has_index(store: Store) -> bool:
    with store.engine.connect() as conn:
        if store.dialect != "postgresql":
            return False
        found = conn.execute(
            text("SELECT 1 FROM pg_indexes WHERE indexname = 'ix_pools_name_bytes'")
        ).first()
        return found is not None


def test_migration_0007_goes_down_and_up_again(store: Store) -> None:
    svc.create_destination(store, dest("a", "gpu"))
    assert _has_index(store) == (store.dialect == "postgresql")
    migrate(store.engine, "downgrade", "0006")
    assert schema_revision(store) == "0006"
    assert not _has_index(store)
    migrate(store.engine, "upgrade", "head")
    assert schema_revision(store) == SCHEMA_REVISION
    assert _has_index(store) == (store.dialect == "postgresql")
    assert set(svc.stored_topology(store).pools) == {"a/gpu"}


@pytest.mark.postgres
def test_the_prefix_range_is_answered_by_the_index_on_postgresql(postgres_url: str) -> None:
    """The statement's ``name COLLATE "C"`` is the index's expression: with sequential scans
    off, the planner reads the prefixes from the index (it could not if they differed)."""
    from arklow_pulumi.store import open_store
    from arklow_pulumi.store.engine import close_stores

    store = open_store(postgres_url)
    try:
        query = _pools_query(1, True).params(
            names=["x"], owners=["y"], from_0="a/gpu", below_0="a/gpu/"
        )
        with store.engine.connect() as conn:
            sql = str(query.compile(conn, compile_kwargs={"literal_binds": True}))
            conn.execute(text("SET enable_seqscan = off"))
            plan = "\n".join(row[0] for row in conn.execute(text("EXPLAIN " + sql)))
        assert "ix_pools_name_bytes" in plan, plan
    finally:
        close_stores()


def test_a_destination_created_or_given_a_resource_skips_the_names_declared_pools_hold(
    store: Store,
) -> None:
    """Its standalone names were not read while the destination (or the resource) was not
    stored: the new pool took the held name and the store's key refused the change."""
    for name in ("d/gpu", "d/gpu.2", "e/cpu"):
        svc.create_pool(store, Pool(name, name.rpartition("/")[2].split(".")[0]))
    svc.create_destination(store, dest("d", "gpu"))
    assert svc.get_destination(store, "d").standalone_pools == {"gpu": "d/gpu.3"}  # type: ignore[union-attr]
    svc.create_destination(store, dest("e", "gpu"))
    svc.update_destination(store, dest("e", "gpu", "cpu"))
    view = svc.get_destination(store, "e")
    assert view is not None and view.standalone_pools == {"gpu": "e/gpu", "cpu": "e/cpu.2"}
    assert violations(svc.stored_topology(store)) == []
