"""create and update build their outputs from what the store's write returns: no second read of
the object they just wrote (a read-back doubles the calls and can see another writer's change)."""

from __future__ import annotations

from typing import Any

import pytest

from arklow_pulumi.providers.destinations import DestinationProvider
from arklow_pulumi.providers.memberships import PoolMembershipProvider
from arklow_pulumi.providers.pools import PoolProvider
from arklow_pulumi.providers.scale_targets import ScaleTargetProvider
from arklow_pulumi.store import service
from tests.providers.conftest import make_asg
from tests.providers.test_scale_targets import target

READS = ("get_destination", "get_pool", "get_target", "membership_view")
LANES = [{"name": "l", "limit": 4.0, "weight": 1.0, "cost": None}]


def test_outputs_come_from_the_write(props: Any, asg: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    make_asg(asg, "asg-a", 1, 10)
    dests, pools, targets = DestinationProvider(), PoolProvider(), ScaleTargetProvider()
    dest_in = dests.check({}, props(arklow_name="d", resources=["gpu"], lanes=LANES)).inputs
    pool_in = pools.check({}, props(arklow_name="gpu", resource="gpu", capacity=2.0)).inputs
    target_in = target(props)
    member_in = props(destination="d", pool="gpu", owner_stack="s", owner_urn="urn:m")

    with monkeypatch.context() as patch:
        for name in READS:
            patch.setattr(service, name, _refuse)
        dest = dests.create(dest_in)
        pool = pools.create(pool_in)
        member = PoolMembershipProvider().create(member_in)
        made = targets.create(target_in)
        assert dest.outs["pools"] == {"gpu": "d/gpu"}
        assert pool.outs["members"] == [] and pool.outs["standalone"] is False
        assert member.outs["resource"] == "gpu"
        assert made.outs["replicas"] == 2 and made.outs["pool"] == "gpu"

        pool_more = pools.update(pool.id, pool.outs, {**pool_in, "capacity": 5.0})
        assert pool_more.outs["capacity"] == 5.0 and pool_more.outs["members"] == ["d"]
        assert pool_more.outs["scale_targets"] == ["asg-a"]
        dest_more = dests.update(dest.id, dest.outs, {**dest_in, "resources": ["gpu", "cpu"]})
        assert dest_more.outs["pools"] == {"gpu": "gpu", "cpu": "d/cpu"}
        moved = PoolMembershipProvider().update(
            member.id, member.outs, {**member_in, "owner_urn": "urn:m2"}
        )
        assert moved.outs["resource"] == "gpu"
        narrower = targets.update(made.id, made.outs, target(props, min_replicas=3.0))
        assert narrower.outs["replicas"] == 3  # the stored count, inside the new bounds

    # what refresh reads agrees with what the writes answered
    assert targets.read(made.id, narrower.outs).outs == narrower.outs
    assert pools.read(pool.id, pool_more.outs).outs == pool_more.outs


def _refuse(*_args: Any, **_kwargs: Any) -> None:
    raise AssertionError("a read-back after a write")
