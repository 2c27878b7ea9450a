"""Topology rules T1–T7, table-driven, including every refusal."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from arklow_pulumi.core import rules
from arklow_pulumi.core.errors import TopologyRuleViolation
from arklow_pulumi.core.topology import (
    Destination,
    GroupRef,
    Lane,
    Pool,
    ScaleTarget,
    Topology,
    frozen_map,
)


def D(name: str, *resources: str, **standalone: float) -> Destination:
    return Destination(name, tuple(resources), (Lane(name, "l", 5),), frozen_map(standalone))


def T(name: str, lo: int = 1, hi: int = 5, group: str | None = None) -> ScaleTarget:
    return ScaleTarget(
        name, GroupRef("aws_asg", group or name, region="us-east-1"), lo, hi, 1.0, lo
    )


def base() -> Topology:
    t = Topology()
    for d in (D("a", "gpu", "quota"), D("b", "gpu"), D("c", "cpu")):
        t = rules.add_destination(t, d)
    return rules.add_pool(t, Pool("shared", "gpu", capacity=10))


def test_t1_new_destination_gets_standalone_pool_per_resource() -> None:
    t = rules.add_destination(Topology(), D("a", "gpu", "quota", gpu=4))
    assert dict(t.pools_of("a")) == {"gpu": "a/gpu", "quota": "a/quota"}
    assert t.pools["a/gpu"].capacity == 4 and t.pools["a/gpu"].owner == "a"
    assert t.is_standalone("a/gpu")


def test_t2_join_moves_only_that_resource() -> None:
    t = rules.join(base(), "a", "shared")
    assert dict(t.pools_of("a")) == {"gpu": "shared", "quota": "a/quota"}
    assert "a/gpu" not in t.pools  # empty standalone pool without targets is collected
    assert t.members("shared") == ("a",)


def test_t2_join_again_is_a_no_op_and_moves_between_shared_pools() -> None:
    t = rules.join(base(), "a", "shared")
    assert rules.join(t, "a", "shared") is t
    t = rules.add_pool(t, Pool("shared2", "gpu"))
    t = rules.join(t, "a", "shared2")
    assert t.memberships[("a", "gpu")] == "shared2" and t.members("shared") == ()
    assert "shared" in t.pools  # declared pools stay when empty


def test_t3_join_pool_of_unrelated_resource_is_refused() -> None:
    with pytest.raises(
        TopologyRuleViolation, match="destination 'c' does not draw from resource 'gpu'"
    ):
        rules.join(base(), "c", "shared")


def test_t4_leave_gives_new_standalone_pool_and_keeps_others() -> None:
    t = rules.join(rules.join(base(), "a", "shared"), "b", "shared")
    t = rules.leave(t, "a", "shared")
    assert t.memberships[("a", "gpu")] == "a/gpu" and t.is_standalone("a/gpu")
    assert t.memberships[("a", "quota")] == "a/quota"
    assert t.members("shared") == ("b",)


def test_t4_leaving_when_not_a_member_is_refused() -> None:
    with pytest.raises(TopologyRuleViolation, match="is not a member of pool 'shared'"):
        rules.leave(base(), "a", "shared")


def test_t5_last_member_leaves_pool_with_targets_it_remains() -> None:
    t = rules.attach_target(rules.join(base(), "a", "shared"), "shared", T("asg"))
    t = rules.leave(t, "a", "shared")
    assert "shared" in t.pools and t.members("shared") == ()
    assert t.pools["shared"].scale_targets[0].name == "asg"
    t = rules.join(t, "b", "shared")  # and takes members again
    assert t.members("shared") == ("b",)


def test_t5_standalone_pool_with_target_survives_its_owner_leaving() -> None:
    t = rules.attach_target(base(), "a/gpu", T("asg"))
    t = rules.join(t, "a", "shared")
    assert "a/gpu" in t.pools and t.members("a/gpu") == ()
    t = rules.leave(t, "a", "shared")  # new standalone pool needs a fresh name
    assert t.memberships[("a", "gpu")] == "a/gpu.2"


def test_t6_pool_with_targets_cannot_be_deleted() -> None:
    t = rules.attach_target(base(), "shared", T("asg"))
    with pytest.raises(TopologyRuleViolation, match=r"pool 'shared'.*scale_targets.*'asg'"):
        rules.remove_pool(t, "shared")
    t = rules.remove_pool(rules.detach_target(t, "shared", "asg"), "shared")
    assert "shared" not in t.pools


def test_deleting_a_pool_returns_members_to_standalone_pools() -> None:
    t = rules.remove_pool(rules.join(base(), "b", "shared"), "shared")
    assert t.memberships[("b", "gpu")] == "b/gpu"


def test_t7_join_another_destinations_standalone_pool() -> None:
    t = rules.join(base(), "b", "a/gpu")
    assert t.members("a/gpu") == ("a", "b")
    assert not t.is_standalone("a/gpu")
    t = rules.leave(t, "b", "a/gpu")
    assert t.is_standalone("a/gpu")


REFUSALS: list[tuple[str, Callable[[Topology], Topology], str]] = [
    (
        "duplicate destination",
        lambda t: rules.add_destination(t, D("a", "gpu")),
        "destination 'a': field 'name'",
    ),
    (
        "duplicate pool",
        lambda t: rules.add_pool(t, Pool("shared", "gpu")),
        "pool 'shared': field 'name'",
    ),
    ("unknown destination", lambda t: rules.join(t, "ghost", "shared"), "destination 'ghost'"),
    ("unknown pool", lambda t: rules.join(t, "a", "ghost"), "pool 'ghost'"),
    ("min > max", lambda t: rules.attach_target(t, "shared", T("x", 6, 2)), "field 'min_replicas'"),
    (
        "duplicate target",
        lambda t: rules.attach_target(rules.attach_target(t, "shared", T("x")), "shared", T("x")),
        "already attached",
    ),
    (
        "target name in another pool",
        lambda t: rules.attach_target(rules.attach_target(t, "shared", T("x")), "a/quota", T("x")),
        "is in pool 'shared'",
    ),
    (
        "one group, two targets",
        lambda t: rules.attach_target(
            rules.attach_target(t, "shared", T("x", group="g")), "a/quota", T("y", group="g")
        ),
        "fight over one group",
    ),
    (
        "pool resource change",
        lambda t: rules.update_pool(t, Pool("shared", "cpu")),
        "field 'resource'",
    ),
    (
        "negative capacity",
        lambda t: rules.add_pool(t, Pool("p", "gpu", capacity=-1)),
        "field 'capacity'",
    ),
    (
        "slash in destination name",
        lambda t: rules.add_destination(t, D("x/y", "gpu")),
        "must not contain '/'",
    ),
    (
        "negative lane limit",
        lambda t: rules.add_destination(t, Destination("z", ("gpu",), (Lane("z", "l", -1),))),
        "field 'limit'",
    ),
    ("detach unknown target", lambda t: rules.detach_target(t, "shared", "nope"), "no such target"),
]


@pytest.mark.parametrize(("name", "change", "needle"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_refusals_name_the_object_and_leave_the_input_unchanged(name, change, needle) -> None:
    t = base()
    before = (dict(t.destinations), dict(t.pools), dict(t.memberships))
    with pytest.raises(TopologyRuleViolation) as info:
        change(t)
    assert needle in str(info.value)
    assert (dict(t.destinations), dict(t.pools), dict(t.memberships)) == before


def test_update_destination_adds_and_drops_resources() -> None:
    t = rules.join(base(), "b", "shared")
    t = rules.update_destination(t, D("b", "quota", quota=3))
    assert dict(t.pools_of("b")) == {"quota": "b/quota"}
    assert t.pools["b/quota"].capacity == 3
    assert t.members("shared") == ()


def test_remove_destination_collects_its_standalone_pools() -> None:
    t = rules.remove_destination(base(), "a")
    assert "a/gpu" not in t.pools and "a/quota" not in t.pools
    assert "a" not in t.destinations


def test_standalone_pool_joined_by_others_outlives_its_owner_then_is_collected() -> None:
    t = rules.join(base(), "b", "a/gpu")
    t = rules.remove_destination(t, "a")
    assert t.members("a/gpu") == ("b",)
    t = rules.leave(t, "b", "a/gpu")
    assert "a/gpu" not in t.pools and t.memberships[("b", "gpu")] == "b/gpu"


def test_standalone_pool_with_target_outlives_its_owner_until_detached() -> None:
    t = rules.attach_target(base(), "a/gpu", T("asg"))
    t = rules.remove_destination(t, "a")
    assert "a/gpu" in t.pools and t.members("a/gpu") == ()
    assert "a/gpu" not in rules.detach_target(t, "a/gpu", "asg").pools
