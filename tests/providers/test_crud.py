"""create/read/update/delete called directly on the providers, against SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest
from pulumi.dynamic import ConfigureRequest
from pulumi.dynamic.config import Config

from arklow_pulumi.core.errors import TopologyRuleViolation
from arklow_pulumi.core.topology import Pool as CorePool
from arklow_pulumi.providers.destinations import DestinationProvider
from arklow_pulumi.providers.memberships import PoolMembershipProvider
from arklow_pulumi.providers.pools import PoolProvider
from arklow_pulumi.store import open_store
from arklow_pulumi.store import service as svc

LANES = [{"name": "interactive", "limit": 8.0, "weight": 2.0, "cost": None}]


def destination(props: Any, name: str, *resources: str, **capacity: float) -> dict[str, Any]:
    news = props(
        arklow_name=name, resources=list(resources), lanes=LANES, standalone_capacity=capacity
    )
    checked = DestinationProvider().check({}, news)
    assert checked.failures == []
    return checked.inputs


def pool(props: Any, name: str, resource: str, capacity: float = 0.0) -> dict[str, Any]:
    checked = PoolProvider().check(
        {}, props(arklow_name=name, resource=resource, capacity=capacity)
    )
    assert checked.failures == []
    return checked.inputs


def test_destination_lifecycle(props: Any) -> None:
    provider = DestinationProvider()
    inputs = destination(props, "search", "gpu", "cpu", gpu=4.0)
    created = provider.create(inputs)
    assert created.id and created.id != "search"  # a create id, not the name
    id_ = created.id
    assert created.outs["pools"] == {"gpu": "search/gpu", "cpu": "search/cpu"}
    assert created.outs["standalone_pools"] == {"gpu": "search/gpu", "cpu": "search/cpu"}
    assert created.outs["lanes"] == LANES

    changed = {**inputs, "resources": ["gpu"], "standalone_capacity": {"gpu": 6.0}}
    assert provider.diff(id_, created.outs, changed).changes is True
    updated = provider.update(id_, created.outs, changed)
    assert updated.outs["pools"] == {"gpu": "search/gpu"}
    assert provider.diff(id_, updated.outs, changed).changes is False

    provider.delete(id_, updated.outs)
    assert provider.read(id_, updated.outs).id == ""  # refresh drops it
    provider.delete(id_, updated.outs)  # idempotent


def test_membership_joins_and_its_deletion_restores_the_standalone_pool(props: Any) -> None:
    a = DestinationProvider().create(destination(props, "a", "gpu", "cpu", gpu=2.0)).id
    DestinationProvider().create(destination(props, "b", "gpu"))
    shared = PoolProvider().create(pool(props, "shared", "gpu", 16.0)).id
    memberships = PoolMembershipProvider()
    ids = {}
    for dest in ("a", "b"):
        created = memberships.create(props(destination=dest, pool="shared"))
        assert created.outs["resource"] == "gpu"
        ids[dest] = created.id

    read = PoolProvider().read(shared, props(arklow_name="shared"))
    assert read.outs["members"] == ["a", "b"] and read.outs["standalone"] is False
    dest = DestinationProvider().read(a, props(arklow_name="a"))
    assert dest.outs["pools"] == {"gpu": "shared", "cpu": "a/cpu"}
    assert dest.outs["standalone_pools"] == {"cpu": "a/cpu"}

    memberships.delete(ids["a"], props(destination="a", pool="shared"))
    dest = DestinationProvider().read(a, props(arklow_name="a"))
    assert dest.outs["pools"]["gpu"] == "a/gpu"
    assert dest.outs["standalone_pools"] == {"gpu": "a/gpu", "cpu": "a/cpu"}
    assert memberships.read(ids["a"], props(destination="a", pool="shared")).id == ""


def test_membership_for_a_resource_not_drawn_is_refused(props: Any) -> None:
    DestinationProvider().create(destination(props, "a", "cpu"))
    PoolProvider().create(pool(props, "gpus", "gpu"))
    with pytest.raises(TopologyRuleViolation, match="does not draw from resource 'gpu'"):
        PoolMembershipProvider().create(props(destination="a", pool="gpus"))


def test_replacing_a_membership_create_before_delete(props: Any) -> None:
    a = DestinationProvider().create(destination(props, "a", "gpu")).id
    PoolProvider().create(pool(props, "p1", "gpu"))
    PoolProvider().create(pool(props, "p2", "gpu"))
    memberships = PoolMembershipProvider()
    old = memberships.create(props(destination="a", pool="p1")).id
    memberships.create(props(destination="a", pool="p2"))  # the replacement first
    memberships.delete(old, props(destination="a", pool="p1"))  # then the old one: no-op
    assert DestinationProvider().read(a, props(arklow_name="a")).outs["pools"] == {"gpu": "p2"}


def test_deleting_a_pool_with_scale_targets_fails_clearly(props: Any, store_url: str) -> None:
    from arklow_pulumi.core.topology import GroupRef, ScaleTarget

    id_ = PoolProvider().create(pool(props, "gpu-pool", "gpu")).id
    group = GroupRef("aws_asg", "asg-1", region="us-east-1")
    svc.attach_target(open_store(store_url), "gpu-pool", ScaleTarget("asg-1", group, 1, 2, 1, 1))
    with pytest.raises(TopologyRuleViolation) as err:
        PoolProvider().delete(id_, props(arklow_name="gpu-pool"))
    assert "pool 'gpu-pool': field 'scale_targets': cannot delete a pool with scale targets" in str(
        err.value
    )
    assert PoolProvider().read(id_, props(arklow_name="gpu-pool")).id == id_


def test_read_shows_drift_made_outside_pulumi(props: Any, store_url: str) -> None:
    created = PoolProvider().create(pool(props, "shared", "gpu", 4.0))
    store = open_store(store_url)
    svc.update_pool(store, CorePool("shared", "gpu", capacity=10.0, headroom=0.5))
    read = PoolProvider().read(created.id, created.outs)
    assert read.outs["capacity"] == 10.0 and read.outs["headroom"] == 0.5
    # the program still declares capacity 4: the next diff proposes an update back
    assert PoolProvider().diff(created.id, read.outs, pool(props, "shared", "gpu", 4.0)).changes


def test_store_url_from_provider_config(sqlite_url: str) -> None:
    provider = PoolProvider()
    provider.configure(ConfigureRequest(Config({"arklow:store": sqlite_url}, "arklow")))
    created = provider.create({"arklow_name": "p", "resource": "gpu", "capacity": 1.0})
    assert "store" not in created.outs
    assert svc.get_pool(open_store(sqlite_url), "p") is not None


def test_read_answers_every_output_from_the_store(props: Any, store_url: str, asg: Any) -> None:
    """What ``pulumi refresh`` brings back: after changes made outside Pulumi (the pool shrunk,
    another member joined, the controller moved the replica count, the lanes edited), ``read``
    returns every output property from the store, none from the state it was handed."""
    from dataclasses import replace

    from sqlalchemy import update

    from arklow_pulumi.core.topology import Lane
    from arklow_pulumi.providers.scale_targets import ScaleTargetProvider
    from arklow_pulumi.store.snapshots import TARGETS
    from tests.providers.conftest import make_asg
    from tests.providers.test_scale_targets import target

    make_asg(asg, "asg-a", 1, 10)
    a = DestinationProvider().create(destination(props, "a", "gpu"))
    DestinationProvider().create(destination(props, "b", "gpu"))
    DestinationProvider().create(destination(props, "c", "gpu"))
    gpu = PoolProvider().create(pool(props, "gpu", "gpu", 4.0))
    member = PoolMembershipProvider().create(props(destination="a", pool="gpu"))
    workers = ScaleTargetProvider().create(target(props))
    created = {"a": a.outs, "gpu": gpu.outs, "member": member.outs, "workers": workers.outs}

    store = open_store(store_url)
    svc.update_pool(store, CorePool("gpu", "gpu", capacity=10.0, headroom=0.5))
    svc.join(store, "c", "gpu")
    svc.leave(store, "a", "gpu")
    svc.join(store, "a", "b/gpu")  # T7: a joins b's own pool
    dest = svc.get_destination(store, "a")
    assert dest is not None
    svc.update_destination(store, replace(dest.destination, lanes=(Lane("a", "l", 3.0),)))
    with store.engine.begin() as conn:
        conn.execute(update(TARGETS).where(TARGETS.c.name == "asg-a").values(replicas=5))

    read = {
        "a": DestinationProvider().read(a.id, a.outs).outs,
        "gpu": PoolProvider().read(gpu.id, gpu.outs).outs,
        "workers": ScaleTargetProvider().read(workers.id, workers.outs).outs,
    }
    for name, outs in read.items():
        assert set(outs) == set(created[name]), name  # every output property, nothing more
    assert read["a"]["pools"] == {"gpu": "b/gpu"}
    assert read["a"]["standalone_pools"] == {}
    assert read["a"]["lanes"] == [{"name": "l", "limit": 3.0, "weight": 1.0, "cost": None}]
    assert read["gpu"]["capacity"] == 10.0 and read["gpu"]["headroom"] == 0.5
    assert read["gpu"]["members"] == ["c"] and read["gpu"]["standalone"] is False
    assert read["gpu"]["scale_targets"] == ["asg-a"]
    assert read["workers"]["replicas"] == 5
    # a's membership in gpu is gone: refresh drops it from the state
    assert PoolMembershipProvider().read(member.id, member.outs).id == ""
