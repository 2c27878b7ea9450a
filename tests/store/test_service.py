"""The service layer applies the topology rules T1–T7 to what is stored, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import insert, text
from sqlalchemy.exc import IntegrityError

from arklow_pulumi.core.errors import TopologyRuleViolation
from arklow_pulumi.core.topology import Destination, GroupRef, Lane, Pool, ScaleTarget
from arklow_pulumi.store import Store, open_store
from arklow_pulumi.store import service as svc
from arklow_pulumi.store.engine import writing
from arklow_pulumi.store.snapshots import MEMBERSHIPS
from tests.store.invariants import violations


def dest(name: str, *resources: str, **capacity: float) -> Destination:
    lanes = (Lane(name, "default", limit=4.0),)
    return Destination(name, tuple(resources), lanes, standalone_capacity=capacity)


def target(name: str, lo: int = 1, hi: int = 4) -> ScaleTarget:
    group = GroupRef("aws_asg", name, region="us-east-1")
    return ScaleTarget(name, group, lo, hi, units_per_replica=2.0, replicas=lo)


def test_new_destination_gets_a_standalone_pool_per_resource(store: Store) -> None:
    svc.create_destination(store, dest("search", "gpu", "cpu", gpu=8.0))
    view = svc.get_destination(store, "search")
    assert view is not None
    assert view.pools == {"gpu": "search/gpu", "cpu": "search/cpu"}
    pool = svc.get_pool(store, "search/gpu")
    assert pool is not None and pool.standalone and pool.pool.capacity == 8.0
    assert pool.members == ("search",)


def test_joining_moves_one_resource_and_keeps_the_others(store: Store) -> None:
    svc.create_destination(store, dest("a", "gpu", "cpu"))
    svc.create_pool(store, Pool("shared-gpu", "gpu", capacity=16.0))
    assert svc.join(store, "a", "shared-gpu") == "gpu"
    topo = svc.stored_topology(store)
    assert dict(topo.pools_of("a")) == {"gpu": "shared-gpu", "cpu": "a/cpu"}
    assert "a/gpu" not in topo.pools  # the empty standalone pool is collected
    assert violations(topo) == []


def test_joining_a_pool_of_another_resource_is_refused_and_changes_nothing(store: Store) -> None:
    svc.create_destination(store, dest("a", "cpu"))
    svc.create_pool(store, Pool("gpus", "gpu"))
    with pytest.raises(TopologyRuleViolation, match="does not draw from resource 'gpu'"):
        svc.join(store, "a", "gpus")
    assert svc.membership_view(store, "a", "gpus") is None
    view = svc.membership_view(store, "a", "a/cpu")
    assert view is not None and view.resource == "cpu"


def test_leaving_the_last_pool_gives_a_new_standalone_pool(store: Store) -> None:
    svc.create_destination(store, dest("a", "gpu", gpu=3.0))
    svc.create_pool(store, Pool("shared", "gpu"))
    svc.join(store, "a", "shared")
    svc.leave(store, "a", "shared")
    view = svc.get_destination(store, "a")
    assert view is not None and view.pools == {"gpu": "a/gpu"}
    standalone = svc.get_pool(store, "a/gpu")
    assert standalone is not None and standalone.pool.capacity == 3.0
    assert violations(svc.stored_topology(store)) == []


def test_leaving_twice_is_harmless(store: Store) -> None:
    svc.create_destination(store, dest("a", "gpu"))
    svc.create_pool(store, Pool("shared", "gpu"))
    svc.join(store, "a", "shared")
    svc.leave(store, "a", "shared")
    svc.leave(store, "a", "shared")
    svc.leave(store, "gone", "shared")
    assert svc.get_destination(store, "a").pools == {"gpu": "a/gpu"}  # type: ignore[union-attr]


def test_pool_with_targets_keeps_existing_without_members_and_cannot_be_deleted(
    store: Store,
) -> None:
    svc.create_destination(store, dest("a", "gpu"))
    svc.create_pool(store, Pool("shared", "gpu"))
    svc.attach_target(store, "shared", target("asg-1"))
    svc.join(store, "a", "shared")
    svc.leave(store, "a", "shared")  # T5: the pool remains
    view = svc.get_pool(store, "shared")
    assert view is not None and view.members == () and len(view.pool.scale_targets) == 1
    with pytest.raises(TopologyRuleViolation, match=r"scale targets attached \('asg-1'\)"):
        svc.delete_pool(store, "shared")  # T6
    svc.detach_target(store, "shared", "asg-1")
    svc.delete_pool(store, "shared")
    assert svc.get_pool(store, "shared") is None


def test_deleting_a_shared_pool_returns_members_to_standalone_pools(store: Store) -> None:
    for name in ("a", "b", "c"):
        svc.create_destination(store, dest(name, "gpu"))
    svc.create_pool(store, Pool("shared", "gpu"))
    for name in ("a", "b", "c"):
        svc.join(store, name, "shared")
    assert svc.get_pool(store, "shared").members == ("a", "b", "c")  # type: ignore[union-attr]
    svc.delete_pool(store, "shared")
    topo = svc.stored_topology(store)
    assert {d: dict(topo.pools_of(d)) for d in "abc"} == {d: {"gpu": f"{d}/gpu"} for d in "abc"}
    assert violations(topo) == []


def test_a_standalone_pool_can_be_joined_and_becomes_shared(store: Store) -> None:
    svc.create_destination(store, dest("a", "gpu"))
    svc.create_destination(store, dest("b", "gpu"))
    svc.join(store, "b", "a/gpu")  # T7
    view = svc.get_pool(store, "a/gpu")
    assert view is not None and view.members == ("a", "b") and not view.standalone
    svc.join(store, "a", svc.get_destination(store, "b").pools["gpu"])  # type: ignore[union-attr]
    # a left its own standalone pool; b is still in it, so it is not collected
    assert svc.get_pool(store, "a/gpu").members == ("a", "b")  # type: ignore[union-attr]
    svc.leave(store, "a", "a/gpu")
    assert svc.get_destination(store, "a").pools == {"gpu": "a/gpu.2"}  # type: ignore[union-attr]
    assert violations(svc.stored_topology(store)) == []


def test_standalone_pools_name_the_destinations_own_pool_even_when_others_joined(
    store: Store,
) -> None:
    """The T7 idiom ``a.standalone_pools["gpu"]`` must still resolve after refresh."""
    svc.create_destination(store, dest("a", "gpu", "cpu"))
    svc.create_destination(store, dest("b", "gpu"))
    svc.join(store, "b", "a/gpu")  # T7: a's own pool is now shared
    a, b = svc.get_destination(store, "a"), svc.get_destination(store, "b")
    assert a is not None and b is not None
    assert a.standalone_pools == {"gpu": "a/gpu", "cpu": "a/cpu"}
    assert b.pools == {"gpu": "a/gpu"} and b.standalone_pools == {}  # not b's own pool
    svc.create_pool(store, Pool("shared-cpu", "cpu"))
    svc.join(store, "a", "shared-cpu")
    a = svc.get_destination(store, "a")
    assert a is not None and a.standalone_pools == {"gpu": "a/gpu"}


def test_removing_a_destination_drops_its_memberships(store: Store) -> None:
    svc.create_destination(store, dest("a", "gpu", "cpu"))
    svc.create_pool(store, Pool("shared", "gpu"))
    svc.join(store, "a", "shared")
    svc.delete_destination(store, "a")
    svc.delete_destination(store, "a")
    topo = svc.stored_topology(store)
    assert list(topo.destinations) == [] and list(topo.pools) == ["shared"]
    assert dict(topo.memberships) == {}


def test_updating_a_destination_follows_its_resources(store: Store) -> None:
    svc.create_destination(store, dest("a", "gpu"))
    svc.update_destination(store, dest("a", "cpu", cpu=2.0))
    topo = svc.stored_topology(store)
    assert dict(topo.pools_of("a")) == {"cpu": "a/cpu"} and "a/gpu" not in topo.pools
    assert topo.pools["a/cpu"].capacity == 2.0


def test_duplicate_names_and_conflicting_targets_are_refused(store: Store) -> None:
    svc.create_destination(store, dest("a", "gpu"))
    with pytest.raises(TopologyRuleViolation, match="already exists"):
        svc.create_destination(store, dest("a", "cpu"))
    svc.create_pool(store, Pool("p1", "gpu"))
    svc.create_pool(store, Pool("p2", "gpu"))
    svc.attach_target(store, "p1", target("asg-1"))
    clash = ScaleTarget("other", target("asg-1").group, 1, 2, 1.0, 1)
    with pytest.raises(TopologyRuleViolation, match="two targets would fight over one group"):
        svc.attach_target(store, "p2", clash)
    with pytest.raises(TopologyRuleViolation, match="min_replicas"):
        svc.update_target(store, "p1", target("asg-1", lo=5, hi=2))
    assert svc.get_target(store, "asg-1").target.max_replicas == 4  # type: ignore[union-attr]


def test_updating_a_pool_keeps_its_targets_and_refuses_a_new_resource(store: Store) -> None:
    svc.create_pool(store, Pool("p", "gpu", capacity=1.0))
    svc.attach_target(store, "p", target("asg-1"))
    svc.update_pool(store, Pool("p", "gpu", capacity=5.0, headroom=0.3))
    view = svc.get_pool(store, "p")
    assert view is not None and view.pool.capacity == 5.0 and view.pool.headroom == 0.3
    assert [t.name for t in view.pool.scale_targets] == ["asg-1"]
    with pytest.raises(TopologyRuleViolation, match="cannot change from 'gpu' to 'cpu'"):
        svc.update_pool(store, Pool("p", "cpu"))


def test_declaring_a_pool_with_a_standalone_pool_name_adopts_it(store: Store) -> None:
    svc.create_destination(store, dest("a", "gpu"))
    svc.create_pool(store, Pool("a/gpu", "gpu", capacity=9.0))
    view = svc.get_pool(store, "a/gpu")
    assert view is not None and view.pool.capacity == 9.0 and view.members == ("a",)


def test_constraints_back_up_the_rules(store: Store) -> None:
    svc.create_destination(store, dest("a", "gpu"))
    row = {"destination": "a", "resource": "gpu", "pool": "elsewhere"}
    with pytest.raises(IntegrityError), writing(store) as conn:
        conn.execute(insert(MEMBERSHIPS), [row])  # a second pool for (a, gpu)
    row = {"destination": "a", "resource": "cpu", "pool": "missing"}
    with pytest.raises(IntegrityError), writing(store) as conn:
        conn.execute(insert(MEMBERSHIPS), [row])  # a membership to a pool that does not exist
    with pytest.raises(IntegrityError), writing(store) as conn:
        conn.execute(text("DELETE FROM pools WHERE name = 'a/gpu'"))  # ON DELETE RESTRICT


def test_reopening_is_idempotent_and_at_head(store: Store) -> None:
    from arklow_pulumi.store.engine import SCHEMA_REVISION, close_stores

    svc.create_destination(store, dest("a", "gpu"))
    url = store.url
    close_stores()
    again = open_store(url)
    with again.engine.connect() as conn:
        version = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
        assert version == SCHEMA_REVISION
    assert svc.get_destination(again, "a") is not None


def test_declaring_a_standalone_pool_adopts_it_with_its_targets_and_keeps_it_when_empty(
    store: Store,
) -> None:
    svc.create_destination(store, dest("a", "gpu"))
    svc.create_destination(store, dest("b", "gpu"))
    svc.attach_target(store, "a/gpu", target("asg-a"))
    svc.create_pool(store, Pool("a/gpu", "gpu", capacity=5.0))  # T7: taken over as declared
    svc.join(store, "b", "a/gpu")
    topo = svc.stored_topology(store)
    assert topo.pools["a/gpu"].capacity == 5.0
    assert [t.name for t in topo.pools["a/gpu"].scale_targets] == ["asg-a"]
    svc.detach_target(store, "a/gpu", "asg-a")
    svc.leave(store, "a", "a/gpu")
    svc.leave(store, "b", "a/gpu")
    topo = svc.stored_topology(store)
    assert "a/gpu" in topo.pools and topo.members("a/gpu") == ()  # declared pools stay
    assert topo.memberships[("a", "gpu")] == "a/gpu.2"
    assert violations(topo) == []
