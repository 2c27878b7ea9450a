"""check and diff at preview: real ``pulumi.output.Unknown`` values (what the SDK's provider server
hands over), every problem reported at once, T3 from hidden inputs without the store, and a
replacement's new group verified before anything is deleted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pulumi.output import Unknown

from arklow_pulumi.core.errors import TopologyRuleViolation
from arklow_pulumi.core.topology import Destination, Lane, Pool
from arklow_pulumi.providers.destinations import DestinationProvider
from arklow_pulumi.providers.inputs import is_unknown
from arklow_pulumi.providers.memberships import PoolMembershipProvider
from arklow_pulumi.providers.pools import PoolProvider
from arklow_pulumi.providers.scale_targets import ScaleTargetProvider
from arklow_pulumi.store import open_store
from arklow_pulumi.store import service as svc
from tests.providers.conftest import make_asg, preview_wait


def target_news(**overrides: Any) -> dict[str, Any]:
    news: dict[str, Any] = {
        "arklow_name": "asg-a",
        "pool": "gpu",
        "group": {"kind": "aws_asg", "name": "asg-a", "region": "us-east-1"},
        "min_replicas": 1.0,
        "max_replicas": 4.0,
        "units_per_replica": 8.0,
        "override_policies": False,
    }
    return {**news, **overrides}


def described(result: Any) -> list[tuple[str, str]]:
    return [(f.property, f.reason) for f in result.failures]


def no_unknown_rendered(result: Any) -> None:
    for failure in result.failures:
        assert "Unknown" not in failure.reason and "object at" not in failure.reason


# -- finding 1: pulumi.output.Unknown ----------------------------------------------------------


def test_is_unknown_recognizes_the_sdk_unknown_object_anywhere() -> None:
    assert is_unknown(Unknown())
    assert is_unknown([1, {"a": Unknown()}])
    assert not is_unknown({"a": ["b", 1.0, None]})


def test_membership_with_an_unknown_pool_previews() -> None:
    """``PoolMembership(destination=b, pool=a.standalone_pools.apply(...))`` while ``a`` is being
    created or updated: the pool is an Unknown object in check and diff."""
    news = {"destination": "b", "pool": Unknown(), "destination_resources": ["gpu"]}
    assert described(PoolMembershipProvider().check({}, news)) == []
    olds = {"destination": "b", "pool": "a/gpu", "resource": "gpu"}
    diff = PoolMembershipProvider().diff("a/gpu:b", olds, news)
    assert diff.changes is True and diff.replaces == ["pool"]


def test_membership_problem_next_to_an_unknown_never_renders_it() -> None:
    result = PoolMembershipProvider().check({}, {"destination": "", "pool": Unknown()})
    assert [f.property for f in result.failures] == ["destination"]
    no_unknown_rendered(result)
    assert "(not known yet)" in result.failures[0].reason


def test_scale_target_with_an_unknown_pool_previews() -> None:
    result = ScaleTargetProvider().check({}, target_news(pool=Unknown()))
    assert described(result) == []
    whole = ScaleTargetProvider().check({}, target_news(pool=Unknown(), group=Unknown()))
    assert described(whole) == []
    bad = ScaleTargetProvider().check({}, target_news(pool=Unknown(), min_replicas=9.0))
    assert [f.property for f in bad.failures] == ["min_replicas"]
    no_unknown_rendered(bad)


def test_pool_and_destination_with_unknown_fields_preview() -> None:
    pool = {"arklow_name": Unknown(), "resource": "gpu", "capacity": 1.0, "headroom": 0.1}
    assert described(PoolProvider().check({}, pool)) == []
    assert described(PoolProvider().check({}, {**pool, "capacity": Unknown()})) == []
    dest = {
        "arklow_name": "d",
        "resources": ["gpu"],
        "lanes": [{"name": "x", "limit": Unknown(), "weight": 1.0}],
        "standalone_capacity": {},
    }
    assert described(DestinationProvider().check({}, dest)) == []
    assert described(DestinationProvider().check({}, {**dest, "resources": Unknown()})) == []
    diff = PoolProvider().diff("p", {**pool, "arklow_name": "p"}, pool)
    assert diff.changes is True and diff.replaces == ["arklow_name"]


# -- finding 7: every problem at once ----------------------------------------------------------


def test_scale_target_check_reports_cross_field_problems_next_to_parse_problems() -> None:
    news = target_news(min_replicas=5.0, max_replicas=2.0, units_per_replica=0.0)
    result = ScaleTargetProvider().check({}, news)
    props = sorted(f.property for f in result.failures)
    assert props == ["min_replicas", "units_per_replica"], described(result)
    reasons = {f.reason for f in result.failures}
    assert (
        "pool 'gpu', scale target 'asg-a': field 'min_replicas': "
        "min_replicas (5) is greater than max_replicas (2)" in reasons
    )


def test_cross_field_problem_is_reported_next_to_an_unknown_field() -> None:
    news = target_news(min_replicas=5.0, max_replicas=2.0, units_per_replica=Unknown())
    assert [f.property for f in ScaleTargetProvider().check({}, news).failures] == ["min_replicas"]


# -- finding 5: T3 at preview ------------------------------------------------------------------


def t3_message(store_url: str) -> str:
    """What ``up`` says: the exact message of ``core.rules.join``."""
    store = open_store(store_url)
    svc.create_destination(store, Destination("good", ("gpu",), (Lane("good", "l", 1.0),)))
    svc.create_pool(store, Pool("cpu-pool", "cpu"))
    with pytest.raises(TopologyRuleViolation) as err:
        svc.join(store, "good", "cpu-pool")
    (problem,) = err.value.problems
    return str(problem)


def test_t3_fails_check_with_the_message_join_gives(sqlite_url: str, tmp_path: Path) -> None:
    expected = t3_message(sqlite_url)
    never = tmp_path / "never" / "arklow.db"
    news = {
        "destination": "good",
        "pool": "cpu-pool",
        "destination_resources": ["gpu"],
        "pool_resource": "cpu",
        "store": f"sqlite:///{never}",
    }
    result = PoolMembershipProvider().check({}, news)
    assert described(result) == [("pool", expected)]
    assert not never.exists() and not never.parent.exists()  # check never opens the store


def test_t3_at_preview_for_a_standalone_pool_and_waits_for_unknowns() -> None:
    news = {"destination": "c", "pool": "a/cpu", "destination_resources": ["gpu"]}
    result = PoolMembershipProvider().check({}, {**news, "pool_resource": "cpu"})
    assert [f.property for f in result.failures] == ["pool"]
    fine = {**news, "pool_resource": "gpu"}
    assert described(PoolMembershipProvider().check({}, fine)) == []
    for unknown in ({"pool_resource": Unknown()}, {"destination_resources": Unknown()}, {}):
        assert described(PoolMembershipProvider().check({}, {**news, **unknown})) == []


def test_membership_diff_ignores_the_hidden_inputs() -> None:
    olds = {"destination": "b", "pool": "p", "resource": "gpu"}
    news = {**olds, "destination_resources": ["gpu"], "pool_resource": "gpu"}
    assert PoolMembershipProvider().diff("p:b", olds, news).changes is False


# -- finding 8: a new group is verified in check, before the delete of a replacement -----------


def test_check_of_a_changed_group_verifies_it_before_the_replacement(asg: Any) -> None:
    make_asg(asg, "asg-a", 0, 10)
    provider = ScaleTargetProvider()
    olds = provider.check({}, target_news()).inputs
    gone = {"kind": "aws_asg", "name": "no-such-asg", "region": "us-east-1"}
    result = provider.check(olds, target_news(group=gone))
    assert [f.property for f in result.failures] == ["group"]
    assert "does not exist" in result.failures[0].reason
    make_asg(asg, "asg-b", 0, 10)
    moved = {"kind": "aws_asg", "name": "asg-b", "region": "us-east-1"}
    assert described(provider.check(olds, target_news(group=moved))) == []


def test_check_without_a_group_change_never_calls_verify(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Only a changed group is verified in full at preview (existence included); otherwise
    ``check`` looks at the bounds only, and only when the group can be described."""

    def no_cloud(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("check verified the group")

    monkeypatch.setattr(ScaleTargetProvider, "verify", no_cloud)
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # nothing listens: no cloud
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    preview_wait(monkeypatch, 0.2)  # nothing listens: the wait can only run out
    provider = ScaleTargetProvider()
    missing = {"kind": "aws_asg", "name": "no-such-asg", "region": "us-east-1"}
    # a new target (no olds): preview of a new stack works without cloud access
    assert described(provider.check({}, target_news(group=missing))) == []
    olds = provider.check({}, target_news()).inputs
    assert described(provider.check(olds, target_news(max_replicas=6.0))) == []
    # a group change with an unknown input waits for up
    unknown = target_news(group=missing, max_replicas=Unknown())
    assert described(provider.check(olds, unknown)) == []


def test_check_refuses_bounds_beyond_a_group_it_can_describe(asg: Any) -> None:
    """Issue 8 item 1: ``max_replicas: 50`` on a group whose MaxSize is 10 fails at preview."""
    make_asg(asg, "asg-a", 0, 10)
    provider = ScaleTargetProvider()
    result = provider.check({}, target_news(max_replicas=50.0))
    assert [f.property for f in result.failures] == ["max_replicas"]
    assert "max_replicas 50 is above the group's MaxSize 10" in result.failures[0].reason
    assert described(provider.check({}, target_news(max_replicas=10.0))) == []
    # a group that does not exist (yet: the program may create it) is left to create
    missing = {"kind": "aws_asg", "name": "no-such-asg", "region": "us-east-1"}
    assert described(provider.check({}, target_news(group=missing, max_replicas=50.0))) == []
