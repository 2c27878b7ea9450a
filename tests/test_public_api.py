"""The public API: what ``arklow_pulumi`` exports, and that the core never needs Pulumi."""

from __future__ import annotations

import subprocess
import sys

import arklow_pulumi

EXPECTED = {
    "AwsAutoScalingGroup",
    "Destination",
    "DestinationArgs",
    "GcpManagedInstanceGroup",
    "Lane",
    "Pool",
    "PoolArgs",
    "PoolMembership",
    "PoolMembershipArgs",
    "ScaleTarget",
    "ScaleTargetArgs",
}


def test_all_lists_the_resources_and_each_resolves() -> None:
    assert set(arklow_pulumi.__all__) == EXPECTED
    for name in arklow_pulumi.__all__:
        assert getattr(arklow_pulumi, name).__name__ == name


def test_the_resources_package_exports_the_same_names() -> None:
    # Both lists are literal (type checkers and linters read them so): they must stay one list.
    import arklow_pulumi.resources

    assert arklow_pulumi.resources.__all__ == arklow_pulumi.__all__


def test_resources_are_pulumi_dynamic_resources() -> None:
    import pulumi.dynamic

    for name in ("Destination", "Pool", "PoolMembership", "ScaleTarget"):
        cls = getattr(arklow_pulumi, name)
        assert issubclass(cls, pulumi.dynamic.Resource)
        assert cls._resource_type_name == f"dynamic/arklow:{name}"


def test_importing_the_core_does_not_import_pulumi() -> None:
    code = (
        "import sys, arklow_pulumi, arklow_pulumi.core.allocating, arklow_pulumi.cli.allocate;"
        "assert 'pulumi' not in sys.modules and 'sqlalchemy' not in sys.modules, 'eager import'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_unknown_attribute_is_an_attribute_error() -> None:
    import pytest

    with pytest.raises(AttributeError):
        arklow_pulumi.Nope  # noqa: B018
