"""ScaleTarget create/update check the real group (a moto server) and apply T5/T6."""

from __future__ import annotations

from typing import Any

import pytest

from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.providers.pools import PoolProvider
from arklow_pulumi.providers.scale_targets import ScaleTargetProvider
from tests.providers.conftest import make_asg


def target(props: Any, *, check: bool = True, **overrides: Any) -> dict[str, Any]:
    news = props(
        arklow_name="asg-a",
        pool="gpu",
        group={"kind": "aws_asg", "name": "asg-a", "region": "us-east-1"},
        min_replicas=2.0,
        max_replicas=8.0,
        units_per_replica=4.0,
        override_policies=False,
    )
    if not check:
        return {**news, **overrides}
    checked = ScaleTargetProvider().check({}, {**news, **overrides})
    assert checked.failures == []
    return checked.inputs


@pytest.fixture
def gpu_pool(props: Any) -> str:
    """The pool's Pulumi id (its create id)."""
    created = PoolProvider().create(
        props(arklow_name="gpu", resource="gpu", capacity=0.0, headroom=0.1)
    )
    return str(created.id)


def test_target_within_the_group_bounds_is_attached(props: Any, asg: Any, gpu_pool: str) -> None:
    make_asg(asg, "asg-a", 1, 10)
    provider = ScaleTargetProvider()
    created = provider.create(target(props))
    assert created.id and created.id != "asg-a"  # a create id, not the name
    assert created.outs["replicas"] == 2 and created.outs["pool"] == "gpu"
    pool = PoolProvider().read(gpu_pool, props(arklow_name="gpu"))
    assert pool.outs["scale_targets"] == ["asg-a"]

    wider = target(props, max_replicas=10.0)
    updated = provider.update(created.id, created.outs, wider)
    assert updated.outs["max_replicas"] == 10
    assert provider.read(created.id, updated.outs).outs["max_replicas"] == 10

    with pytest.raises(Exception, match="scale targets attached"):
        PoolProvider().delete(gpu_pool, props(arklow_name="gpu"))
    provider.delete(created.id, updated.outs)
    PoolProvider().delete(gpu_pool, props(arklow_name="gpu"))
    assert PoolProvider().read(gpu_pool, props(arklow_name="gpu")).id == ""


def test_target_outside_the_group_bounds_is_refused(props: Any, asg: Any, gpu_pool: str) -> None:
    make_asg(asg, "asg-a", 3, 6)
    # preview already sees it when the group can be described
    failures = ScaleTargetProvider().check({}, target(props, check=False)).failures
    assert sorted(f.property for f in failures) == ["max_replicas", "min_replicas"]
    # and create refuses it whatever preview could see
    with pytest.raises(InvalidInput) as err:
        ScaleTargetProvider().create(target(props, check=False))
    message = str(err.value)
    assert "min_replicas 2 is below the group's MinSize 3" in message
    assert "max_replicas 8 is above the group's MaxSize 6" in message
    assert PoolProvider().read(gpu_pool, props(arklow_name="gpu")).outs["scale_targets"] == []


@pytest.mark.usefixtures("gpu_pool")
def test_target_of_a_missing_group_is_refused(props: Any, asg: Any) -> None:
    with pytest.raises(InvalidInput, match="does not exist"):
        ScaleTargetProvider().create(target(props))


@pytest.mark.usefixtures("gpu_pool")
def test_read_of_a_group_deleted_outside_returns_the_store_not_an_error(
    props: Any, asg: Any
) -> None:
    """One drifted group must not break ``pulumi refresh`` of the whole stack: read returns what
    the store holds (no cloud check); create/update still verify the group."""
    make_asg(asg, "asg-a", 1, 10)
    created = ScaleTargetProvider().create(target(props))
    asg.delete_auto_scaling_group(AutoScalingGroupName="asg-a", ForceDelete=True)
    read = ScaleTargetProvider().read(created.id, created.outs)
    assert read.id == created.id and read.outs["group"]["name"] == "asg-a"
    with pytest.raises(InvalidInput, match="does not exist"):
        ScaleTargetProvider().update(created.id, created.outs, target(props, max_replicas=9.0))
