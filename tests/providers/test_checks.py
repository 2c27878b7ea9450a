"""check: every bad input is a CheckFailure with the ``arklow validate`` message; unknown values
(preview) are tolerated. diff: pure, identity fields replace."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from pulumi.runtime.rpc import UNKNOWN

from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.providers.destinations import DestinationProvider
from arklow_pulumi.providers.memberships import PoolMembershipProvider
from arklow_pulumi.providers.pools import PoolProvider
from arklow_pulumi.providers.scale_targets import ScaleTargetProvider
from arklow_pulumi.reading.parsing import parse_topology
from arklow_pulumi.reading.spec import build_topology
from tests.providers.conftest import preview_wait


def validate_messages(topology: dict[str, Any]) -> set[str]:
    """The problems ``arklow validate`` reports for a topology document."""
    try:
        build_topology(parse_topology(topology))
    except InvalidInput as exc:
        return {str(p) for p in exc.problems}
    return set()


def reasons(result: Any) -> set[str]:
    return {f.reason for f in result.failures}


BAD_DESTINATIONS = [
    {"name": "a", "resources": ["gpu"], "lanes": [{"name": "x", "limit": -1}]},
    {"name": "a", "resources": ["gpu"], "lanes": [{"name": "x", "limit": 1, "weight": 0}]},
    {
        "name": "a",
        "resources": ["gpu"],
        "lanes": [{"name": "x", "limit": 1}, {"name": "x", "limit": 2}],
    },
    {"name": "a", "resources": ["gpu"], "standalone_capacity": {"cpu": 1.0}},
    {"name": "a", "resources": ["gpu", "gpu"]},
    {"name": "a/b", "resources": ["gpu"]},
    {"name": "a", "resources": ["gpu"], "lanes": [{"name": "x", "limit": 1, "cost": {"cpu": 2}}]},
    {"name": "a", "resources": ["gpu"], "lanes": [{"name": "x", "limit": "5"}]},
]


@pytest.mark.parametrize("raw", BAD_DESTINATIONS)
def test_destination_check_reports_what_validate_reports(raw: dict[str, Any]) -> None:
    news = {
        "arklow_name": raw["name"],
        "resources": raw.get("resources"),
        "lanes": raw.get("lanes", []),
        "standalone_capacity": raw.get("standalone_capacity", {}),
    }
    result = DestinationProvider().check({}, news)
    expected = validate_messages({"destinations": [raw]})
    assert expected and reasons(result) == expected


BAD_POOLS = [
    {"name": "p", "resource": "gpu", "capacity": -1},
    {"name": "p", "resource": "gpu", "headroom": -0.5},
    {"name": "p", "capacity": 1},
    {"name": "", "resource": "gpu"},
]


@pytest.mark.parametrize("raw", BAD_POOLS)
def test_pool_check_reports_what_validate_reports(raw: dict[str, Any]) -> None:
    news = {"arklow_name": raw["name"], **{k: v for k, v in raw.items() if k != "name"}}
    result = PoolProvider().check({}, news)
    assert reasons(result) == validate_messages({"pools": [raw]})
    assert result.failures


def target_news(**overrides: Any) -> dict[str, Any]:
    news: dict[str, Any] = {
        "arklow_name": "asg-a",
        "pool": "gpu",
        "group": {"kind": "aws_asg", "name": "asg-a", "region": "us-east-1"},
        "min_replicas": 1.0,  # the engine sends numbers as floats
        "max_replicas": 4.0,
        "units_per_replica": 8.0,
        "override_policies": False,
    }
    return {**news, **overrides}


@pytest.fixture
def unreachable_aws(monkeypatch: pytest.MonkeyPatch) -> None:
    """Credentials, but no AWS to reach (a closed port): preview leaves the bounds to create."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    preview_wait(monkeypatch, 0.2)


@pytest.mark.usefixtures("unreachable_aws")
def test_scale_target_check_accepts_floats_for_counts_and_normalizes() -> None:
    result = ScaleTargetProvider().check({}, target_news())
    assert result.failures == []
    assert result.inputs["min_replicas"] == 1 and isinstance(result.inputs["min_replicas"], int)


@pytest.mark.parametrize(
    ("overrides", "prop", "message"),
    [
        (
            {"min_replicas": 5.0},
            "min_replicas",
            "min_replicas (5) is greater than max_replicas (4)",
        ),
        ({"units_per_replica": 0.0}, "units_per_replica", "greater than or equal to 0.000001"),
        ({"min_replicas": 1.5}, "min_replicas", "valid integer"),
        ({"group": {"kind": "aws_asg", "name": "x"}}, "group", "needs a region"),
        ({"group": {"kind": "gcp_mig", "name": "x", "project": "p"}}, "group", "zone or region"),
        ({"group": {"kind": "k8s", "name": "x"}}, "group", "'aws_asg' or 'gcp_mig'"),
        ({"pool": None}, "pool", "is required"),
    ],
)
def test_scale_target_check_names_the_field(
    overrides: dict[str, Any], prop: str, message: str
) -> None:
    result = ScaleTargetProvider().check({}, target_news(**overrides))
    assert any(f.property == prop and message in f.reason for f in result.failures), [
        (f.property, f.reason) for f in result.failures
    ]
    assert all(f.reason.startswith("pool ") for f in result.failures)


@pytest.mark.parametrize(
    ("group", "missing"),
    [
        ({"kind": "aws_asg", "name": "asg-a", "region": "us-east-1"}, "no AWS credentials"),
        (
            {"kind": "gcp_mig", "name": "mig-a", "project": "p", "zone": "us-central1-a"},
            "no Google credentials",
        ),
    ],
)
def test_missing_cloud_credentials_fail_at_preview(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, group: dict[str, str], missing: str
) -> None:
    """Known at preview, so reported there (one line naming the target and what is missing),
    not as a traceback halfway through ``pulumi up``."""
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    for key in ("GOOGLE_APPLICATION_CREDENTIALS", "ARKLOW_GCP_COMPUTE_ENDPOINT"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))
    monkeypatch.setenv("NO_GCE_CHECK", "True")
    preview_wait(monkeypatch, 120.0)  # a cloud SDK's first import may take seconds
    result = ScaleTargetProvider().check({}, target_news(arklow_name=group["name"], group=group))
    assert [f.property for f in result.failures] == ["group"]
    (reason,) = reasons(result)
    assert missing in reason and f"scale target {group['name']!r}" in reason
    assert "\n" not in reason and "Traceback" not in reason


def test_membership_check_requires_names() -> None:
    result = PoolMembershipProvider().check({}, {"destination": "a", "pool": ""})
    assert [f.property for f in result.failures] == ["pool"]


def test_check_tolerates_unknown_values_in_preview() -> None:
    news = {
        "arklow_name": "a",
        "resources": UNKNOWN,
        "lanes": [{"name": "x", "limit": UNKNOWN}],
        "standalone_capacity": {},
    }
    assert DestinationProvider().check({}, news).failures == []
    assert PoolMembershipProvider().check({}, {"destination": UNKNOWN, "pool": "p"}).failures == []
    target = ScaleTargetProvider().check({}, target_news(pool=UNKNOWN, group=UNKNOWN))
    assert target.failures == []
    # a known bad value next to an unknown one is still reported
    bad = {**news, "standalone_capacity": {"gpu": -1.0}}
    assert [f.property for f in DestinationProvider().check({}, bad).failures] == [
        "standalone_capacity"
    ]


def test_diff_is_pure_and_identity_fields_replace() -> None:
    olds = {
        "arklow_name": "p",
        "resource": "gpu",
        "capacity": 4,
        "headroom": 0.1,
        "members": ["a"],
        "store": "sqlite:///x",
    }
    provider = PoolProvider()
    same = provider.diff("p", olds, {**olds, "capacity": 4.0})
    assert same.changes is False and same.replaces == []
    # a new store URL (a rotated password) is an update, never a replacement
    moved = provider.diff("p", olds, {**olds, "store": "sqlite:///elsewhere"})
    assert moved.changes is True and moved.replaces == []
    update = provider.diff("p", olds, {**olds, "capacity": 8.0})
    assert update.changes is True and update.replaces == []
    replace = provider.diff("p", olds, {**olds, "resource": "cpu"})
    assert replace.replaces == ["resource"] and replace.delete_before_replace is True
    renamed = provider.diff("p", olds, {**olds, "arklow_name": "q"})
    assert renamed.replaces == ["arklow_name"] and renamed.delete_before_replace is False
    unknown = provider.diff("p", olds, {**olds, "resource": UNKNOWN})
    assert unknown.changes is True and unknown.replaces == ["resource"]
    assert olds["capacity"] == 4  # inputs untouched


def test_membership_and_target_identity() -> None:
    olds = {"destination": "a", "pool": "p", "resource": "gpu"}
    moved = PoolMembershipProvider().diff("p:a", olds, {"destination": "a", "pool": "q"})
    assert moved.replaces == ["pool"] and not moved.delete_before_replace
    old_target = target_news()
    regrouped = target_news(group={"kind": "aws_asg", "name": "asg-b", "region": "us-east-1"})
    diff = ScaleTargetProvider().diff("asg-a", old_target, regrouped)
    assert diff.replaces == ["group"] and diff.delete_before_replace is True
    resized = ScaleTargetProvider().diff("asg-a", old_target, target_news(max_replicas=6))
    assert resized.changes is True and resized.replaces == []
