"""Updates the engine must see: a rotated store URL reaches the outputs; a checked input and its
output agree (no perpetual diff); error reports keep their one-line shape."""

from __future__ import annotations

import sys
import traceback
from pathlib import Path
from typing import Any

import pytest

from arklow_pulumi.core.errors import ArklowError, InvalidInput
from arklow_pulumi.providers.destinations import DestinationProvider
from arklow_pulumi.providers.memberships import PoolMembershipProvider
from arklow_pulumi.providers.pools import PoolProvider
from arklow_pulumi.providers.scale_targets import ScaleTargetProvider
from arklow_pulumi.store import open_store
from arklow_pulumi.store import service as svc
from tests.providers.conftest import make_asg


def checked(provider: Any, news: dict[str, Any]) -> dict[str, Any]:
    result = provider.check({}, news)
    assert result.failures == []
    return dict(result.inputs)


@pytest.fixture
def two_urls(tmp_path: Path) -> tuple[str, str]:
    """Two URLs of one SQLite store (as a rotated PostgreSQL password gives two URLs of one
    database): the second goes through a symlinked directory."""
    (tmp_path / "db").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "db")
    return f"sqlite:///{tmp_path}/db/arklow.db", f"sqlite:///{tmp_path}/link/arklow.db"


# -- finding 2: store URL rotation -------------------------------------------------------------


def test_a_new_store_url_is_an_update_that_reaches_the_outputs(
    two_urls: tuple[str, str],
) -> None:
    old_url, new_url = two_urls
    cases: list[tuple[Any, dict[str, Any], str]] = [
        (
            DestinationProvider(),
            {"arklow_name": "d", "resources": ["gpu"], "lanes": [], "standalone_capacity": {}},
            "d",
        ),
        (PoolProvider(), {"arklow_name": "p", "resource": "gpu", "capacity": 1.0}, "p"),
    ]
    for provider, news, _name in cases:
        created = provider.create(checked(provider, {**news, "store": old_url}))
        id_ = created.id
        rotated = checked(provider, {**news, "store": new_url})
        diff = provider.diff(id_, created.outs, rotated)
        assert diff.changes is True and diff.replaces == [], type(provider).__name__
        updated = provider.update(id_, created.outs, rotated)
        assert updated.outs["store"] == new_url
        assert provider.diff(id_, updated.outs, rotated).changes is False
    membership = {"destination": "d", "pool": "p"}
    joined = PoolMembershipProvider().create({**membership, "store": old_url})
    rotated = {**membership, "store": new_url}
    diff = PoolMembershipProvider().diff(joined.id, joined.outs, rotated)
    assert diff.changes is True and diff.replaces == []
    moved = PoolMembershipProvider().update(joined.id, joined.outs, rotated)
    assert moved.outs == {"destination": "d", "pool": "p", "resource": "gpu", "store": new_url}


def test_an_unknown_store_is_not_a_change() -> None:
    from pulumi.output import Unknown

    olds = {"arklow_name": "p", "resource": "gpu", "capacity": 1.0, "headroom": 0.1}
    olds["store"] = "sqlite:///x.db"
    assert PoolProvider().diff("p", olds, {**olds, "store": Unknown()}).changes is False


def test_scale_target_store_only_update_skips_the_cloud(
    two_urls: tuple[str, str], asg: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    old_url, new_url = two_urls
    make_asg(asg, "asg-a", 0, 10)
    PoolProvider().create({"arklow_name": "gpu", "resource": "gpu", "store": old_url})
    news = {
        "arklow_name": "asg-a",
        "pool": "gpu",
        "group": {"kind": "aws_asg", "name": "asg-a", "region": "us-east-1"},
        "min_replicas": 1.0,
        "max_replicas": 4.0,
        "units_per_replica": 2.0,
        "override_policies": False,
    }
    provider = ScaleTargetProvider()
    created = provider.create(checked(provider, {**news, "store": old_url}))
    asg.delete_auto_scaling_group(AutoScalingGroupName="asg-a", ForceDelete=True)
    rotated = checked(provider, {**news, "store": new_url})
    assert provider.diff(created.id, created.outs, rotated).changes is True
    updated = provider.update(created.id, created.outs, rotated)  # no cloud call: no error
    assert updated.outs["store"] == new_url and updated.outs["replicas"] == 1
    with pytest.raises(InvalidInput, match="does not exist"):  # a real change still verifies
        provider.update(created.id, updated.outs, {**rotated, "max_replicas": 5})


# -- finding 4: Lane(cost={}) ------------------------------------------------------------------


def test_an_empty_cost_has_no_perpetual_diff(store_url: str) -> None:
    provider = DestinationProvider()
    lanes = [
        {"name": "a", "limit": 2.0, "weight": 1.0, "cost": {}},
        {"name": "b", "limit": 2.0, "weight": 1.0, "cost": None},
        {"name": "c", "limit": 2.0, "weight": 1.0, "cost": {"gpu": 2.0}},
    ]
    news = {"arklow_name": "d", "resources": ["gpu"], "lanes": lanes, "store": store_url}
    inputs = checked(provider, news)
    assert [lane["cost"] for lane in inputs["lanes"]] == [None, None, {"gpu": 2.0}]
    created = provider.create(inputs)
    diff = provider.diff(created.id, created.outs, checked(provider, news))
    assert diff.changes is False
    refreshed = provider.read(created.id, created.outs)
    assert provider.diff(created.id, refreshed.outs, checked(provider, news)).changes is False


# -- finding 10: the traceback limit -----------------------------------------------------------


def test_traceback_limit_is_set_for_our_errors_and_removed_for_bugs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    provider = PoolProvider()
    bad_store = {"arklow_name": "p", "store": "postgresql://u:pw@h:notaport/db"}
    with pytest.raises(ArklowError):
        provider.read("p", bad_store)
    assert sys.tracebacklimit == 0
    try:
        provider.read("p", bad_store)
    except ArklowError:
        # what the SDK's provider server reports: the message alone, no frames
        report = traceback.format_exc().strip().splitlines()
        assert len(report) == 1 and "field 'port'" in report[0]

    def broken(*_args: Any) -> Any:
        raise KeyError("bug")

    monkeypatch.setattr(svc, "get_pool", broken)
    with pytest.raises(KeyError):
        provider.read("p", {"arklow_name": "p", "store": f"sqlite:///{tmp_path}/arklow.db"})
    assert not hasattr(sys, "tracebacklimit")


def test_a_bad_port_is_a_store_error_naming_the_redacted_url_and_the_field() -> None:
    from arklow_pulumi.store.engine import StoreError

    with pytest.raises(StoreError) as err:
        open_store("postgresql://u:pw@h:notaport/db")
    message = str(err.value)
    assert "field 'port'" in message and "notaport" in message
    assert "pw" not in message.replace("psycopg", "") and "u:***@h" in message
