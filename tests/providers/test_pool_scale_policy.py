"""``scale_policy`` on the ``Pool`` resource: checked like the topology file, stored in the pools
table (SQLite and PostgreSQL), read back into the topology the controller decides on."""

from __future__ import annotations

from typing import Any

import pytest

from arklow_pulumi.core.policy import DEFAULT_POLICY, ScalePolicy
from arklow_pulumi.providers.pools import PoolProvider
from arklow_pulumi.store import open_store
from arklow_pulumi.store import service as svc


def checked(props: Any, policy: Any) -> Any:
    return PoolProvider().check({}, props(arklow_name="gpu", resource="gpu", scale_policy=policy))


def test_engine_floats_are_taken_as_step_counts(props: Any) -> None:
    result = checked(props, {"max_step_up": 8.0, "tolerance": 0.05})
    assert result.failures == []
    assert result.inputs["scale_policy"] == {"max_step_up": 8, "tolerance": 0.05}


@pytest.mark.parametrize(
    ("policy", "field"),
    [
        ({"tolerance": 2.0}, "scale_policy.tolerance"),
        ({"max_step_down": 0.0}, "scale_policy.max_step_down"),
        ({"max_step_up": 2.5}, "scale_policy.max_step_up"),
        ({"window": 300.0}, "scale_policy.window"),
    ],
)
def test_bad_policy_is_a_check_failure_naming_pool_and_field(
    props: Any, policy: Any, field: str
) -> None:
    [failure] = checked(props, policy).failures
    assert failure.property == "scale_policy"
    assert f"pool 'gpu': field '{field}'" in failure.reason


def test_policy_is_stored_updated_and_read_back(props: Any, store_url: str) -> None:
    provider = PoolProvider()
    inputs = checked(props, {"scale_down_window_s": 600.0}).inputs
    created = provider.create(inputs)
    assert created.outs["scale_policy"] == {"scale_down_window_s": 600.0}
    store = open_store(store_url)
    assert svc.get_pool(store, "gpu").pool.scale_policy == ScalePolicy(scale_down_window_s=600.0)

    changed = checked(props, {"max_step_down": 3.0}).inputs
    assert provider.diff(created.id, created.outs, changed).changes is True
    updated = provider.update(created.id, created.outs, changed)
    assert updated.outs["scale_policy"] == {"max_step_down": 3}
    assert provider.diff(created.id, updated.outs, changed).changes is False
    assert svc.get_pool(store, "gpu").pool.scale_policy == ScalePolicy(max_step_down=3)

    cleared = checked(props, None).inputs
    updated = provider.update(created.id, updated.outs, cleared)
    assert updated.outs["scale_policy"] is None
    assert svc.stored_topology(store).pools["gpu"].scale_policy == DEFAULT_POLICY
