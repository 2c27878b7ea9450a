"""Provider fixtures: a store per test (SQLite and PostgreSQL) and a moto server for ASGs."""

from __future__ import annotations

import logging
import sys
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from arklow_pulumi.store.engine import close_stores
from tests.store.conftest import postgres, postgres_url, sqlite_url, store_url

__all__ = ["postgres", "postgres_url", "sqlite_url", "store_url"]
REGION = "us-east-1"


@pytest.fixture(autouse=True)
def _fresh_engines() -> Iterator[None]:
    yield
    close_stores()


@pytest.fixture(autouse=True)
def _traceback_limit() -> Iterator[None]:
    """A provider call that raised an ArklowError leaves ``sys.tracebacklimit = 0`` (by design,
    see ``providers/storing.py``); in the provider process nothing else runs, but here it would
    leak into later tests (``traceback.extract_stack()`` in the SDK then finds no frames)."""
    yield
    if hasattr(sys, "tracebacklimit"):
        del sys.tracebacklimit


@pytest.fixture
def props(store_url: str) -> Any:
    """Build resource properties as the engine hands them to a provider (with the store URL)."""

    def make(**values: Any) -> dict[str, Any]:
        return {**values, "store": store_url}

    return make


@pytest.fixture(scope="session")
def moto_url() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def autoscaling(moto_url: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A raw boto3 client on a reset moto server, with the environment a user's process has."""
    import boto3

    urllib.request.urlopen(urllib.request.Request(f"{moto_url}/moto-api/reset", method="POST"))
    for key, value in {
        "AWS_ENDPOINT_URL": moto_url,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
    }.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    client = boto3.session.Session().client("autoscaling", region_name=REGION)
    client.create_launch_configuration(
        LaunchConfigurationName="lc", ImageId="ami-12345678", InstanceType="t3.micro"
    )
    return client


def make_asg(client: Any, name: str, low: int, high: int) -> None:
    client.create_auto_scaling_group(
        AutoScalingGroupName=name,
        LaunchConfigurationName="lc",
        MinSize=low,
        MaxSize=high,
        DesiredCapacity=low,
        AvailabilityZones=[f"{REGION}a"],
    )
