"""The providers' side of store identity: create ids as Pulumi ids, owners from the inputs, the
replacement of issue 8 item 1, and a delete after the store password was rotated (item 4)."""

from __future__ import annotations

from typing import Any

import pytest
from pulumi.dynamic import ConfigureRequest
from pulumi.dynamic.config import Config

from arklow_pulumi.core.errors import TopologyRuleViolation
from arklow_pulumi.providers.destinations import DestinationProvider
from arklow_pulumi.providers.pools import PoolProvider
from arklow_pulumi.providers.scale_targets import ScaleTargetProvider
from arklow_pulumi.store import open_store, ownership
from arklow_pulumi.store import service as svc
from arklow_pulumi.store.engine import close_stores
from tests.providers.conftest import make_asg
from tests.store import password_roles
from tests.store.postgres_server import Cluster


def owned(kind: str, name: str, stack: str = "dev") -> dict[str, str]:
    urn = f"urn:pulumi:{stack}::arklow::pulumi-python:dynamic/arklow:{kind}::{name}"
    return {"owner_stack": stack, "owner_urn": urn}


def target(props: Any, pool: str, max_replicas: float = 10.0) -> dict[str, Any]:
    news = props(
        arklow_name="gpu-workers",
        pool=pool,
        group={"kind": "aws_asg", "name": "gpu-workers", "region": "us-east-1"},
        min_replicas=1.0,
        max_replicas=max_replicas,
        units_per_replica=8.0,
        override_policies=False,
        **owned("ScaleTarget", "gpu-workers"),
    )
    checked = ScaleTargetProvider().check({}, news)
    assert checked.failures == []
    return checked.inputs


def test_the_replacement_of_a_target_survives_the_delete_of_the_original(
    props: Any, asg: Any, store_url: str
) -> None:
    """Issue 8 item 1 at the provider: state holds the target (id A) marked for replacement;
    the engine creates its replacement first, then deletes A."""
    make_asg(asg, "gpu-workers", 0, 10)
    PoolProvider().create(props(arklow_name="shared-gpu", resource="gpu", **owned("Pool", "p")))
    provider = ScaleTargetProvider()
    original = provider.create(target(props, "shared-gpu"))
    replacement = provider.create(target(props, "shared-gpu"))
    assert replacement.id != original.id
    provider.delete(original.id, original.outs)
    view = svc.get_target(open_store(store_url), "gpu-workers")
    assert view is not None and view.identity.create_id == replacement.id
    assert provider.read(original.id, original.outs).id == ""  # refresh drops the stale one
    assert provider.read(replacement.id, replacement.outs).id == replacement.id
    assert replacement.outs["owner_stack"] == "dev"


def test_another_stacks_object_is_a_one_line_conflict_naming_it(props: Any) -> None:
    base = {"arklow_name": "search", "resources": ["gpu"], "lanes": [], "standalone_capacity": {}}
    DestinationProvider().create(props(**base, **owned("Destination", "search", "prod")))
    with pytest.raises(TopologyRuleViolation) as err:
        DestinationProvider().create(props(**base, **owned("Destination", "search", "dev")))
    assert "stack 'prod'" in str(err.value) and "\n" not in str(err.value)


def test_a_new_owner_is_an_update_that_records_it(props: Any, store_url: str) -> None:
    news = props(arklow_name="p", resource="gpu", capacity=1.0, headroom=0.1)
    provider = PoolProvider()
    created = provider.create(news)  # as a state from before schema 0002: no owner
    with_owner = {**news, **owned("Pool", "p")}
    diff = provider.diff(created.id, created.outs, with_owner)
    assert diff.changes is True and diff.replaces == []
    updated = provider.update(created.id, created.outs, with_owner)
    assert updated.outs["owner_urn"] == with_owner["owner_urn"]
    rows = ownership.owned_rows(open_store(store_url), "dev")
    assert [(r.kind, r.name, r.identity.create_id) for r in rows] == [("pool", "p", created.id)]


@pytest.mark.postgres
def test_a_delete_after_the_password_was_rotated_uses_the_current_config(
    postgres: Cluster,
) -> None:
    """Issue 8 item 4: state holds the old password; the provider config has the new one."""
    role, database = password_roles.password_role(postgres, "old-secret")
    old_url = password_roles.role_url(postgres, role, "old-secret", database)
    new_url = password_roles.role_url(postgres, role, "new-secret", database)
    created = PoolProvider().create(
        {"arklow_name": "p", "resource": "gpu", "store": old_url, **owned("Pool", "p")}
    )
    password_roles.rotate(postgres, role, "new-secret")
    close_stores()  # connections made with the old password are gone

    provider = PoolProvider()
    provider.configure(ConfigureRequest(Config({"arklow:store": new_url}, "arklow")))
    provider.delete(created.id, created.outs)  # the state's URL would fail to log in
    assert svc.get_pool(open_store(new_url), "p") is None
