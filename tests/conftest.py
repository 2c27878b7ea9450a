"""Fixtures more than one test folder asks for: the project's Compute API test server and a moto
server for AWS Auto Scaling, each started once for the session. Each test that uses one resets it:
``aws_env`` here for moto, each folder's ``compute`` fixture for the Compute API server (with the
environment its tests need). And the hypothesis profile HYPOTHESIS_PROFILE names
(:mod:`tests.hypothesis_profiles`), loaded before any test module is read."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from tests import aws_moto, hypothesis_profiles

hypothesis_profiles.load()

if TYPE_CHECKING:
    from arklow_pulumi.devservers.compute import ComputeServer

# The e2e tier (the Pulumi engine, real processes and clouds, minutes a test) fails a test that
# hangs after this long, unless the test names its own limit; every other test after
# pyproject.toml's `timeout`.
E2E_TIMEOUT_S = 1200


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("e2e") and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(E2E_TIMEOUT_S))


@pytest.fixture(scope="session")
def compute_server() -> Iterator[ComputeServer]:
    from arklow_pulumi.devservers.compute import ComputeServer

    server = ComputeServer(port=0, op_delay=0.02, settle_delay=0.5)
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def moto_url() -> Iterator[str]:
    server, url = aws_moto.start_server()
    yield url
    server.stop()


@pytest.fixture
def aws_env(moto_url: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The environment a user's process would have, pointed at the session's moto server (reset
    for each test): no profile, no Auto Scaling endpoint of its own."""
    aws_moto.reset(moto_url)
    env = aws_moto.aws_env(moto_url)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    for key in ("AWS_PROFILE", "AWS_ENDPOINT_URL_AUTO_SCALING"):
        monkeypatch.delenv(key, raising=False)
    return env


@pytest.fixture
def asg(moto_url: str, aws_env: dict[str, str]) -> Any:
    """A raw boto3 Auto Scaling client on that server, with ``aws_env`` set, to arrange state (the
    project's code is not used for that)."""
    return aws_moto.autoscaling_client(moto_url)
