"""Fixtures: a moto server reached through AWS_ENDPOINT_URL, and the project's Compute API server."""

from __future__ import annotations

import json
import logging
import os
import urllib.request
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

REGION = "us-east-1"


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
def aws_env(moto_url: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The environment a user's process would have; moto state is reset for each test."""
    urllib.request.urlopen(urllib.request.Request(f"{moto_url}/moto-api/reset", method="POST"))
    env = {
        "AWS_ENDPOINT_URL": moto_url,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    for key in ("AWS_PROFILE", "AWS_ENDPOINT_URL_AUTO_SCALING"):
        monkeypatch.delenv(key, raising=False)
    return env


@pytest.fixture
def asg(aws_env: dict[str, str]) -> Any:
    """A raw boto3 client to arrange state (the project's code is not used for that)."""
    import boto3

    client = boto3.session.Session().client("autoscaling", region_name=REGION)
    client.create_launch_configuration(
        LaunchConfigurationName="lc", ImageId="ami-12345678", InstanceType="t3.micro"
    )
    return client


def make_asg(client: Any, name: str, low: int, high: int, desired: int) -> None:
    client.create_auto_scaling_group(
        AutoScalingGroupName=name,
        LaunchConfigurationName="lc",
        MinSize=low,
        MaxSize=high,
        DesiredCapacity=desired,
        AvailabilityZones=[f"{REGION}a"],
    )


def count_calls(client: Any) -> Counter[str]:
    """Counts every API call a botocore client sends, by operation name."""
    calls: Counter[str] = Counter()

    def hook(model: Any, **_: Any) -> None:
        calls[model.name] += 1

    client.meta.events.register("before-call", hook)
    return calls


@pytest.fixture(scope="session")
def compute_server() -> Iterator[Any]:
    from arklow_pulumi.devservers.compute import ComputeServer

    server = ComputeServer(port=0, op_delay=0.02, settle_delay=0.5)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def compute(compute_server: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    compute_server.reset()
    monkeypatch.setenv("ARKLOW_GCP_COMPUTE_ENDPOINT", compute_server.url)
    return compute_server


def admin(url: str, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(
        f"{url}{path}", data=data, method="POST" if body is not None else "GET"
    )
    req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req) as resp:
        return json.loads(resp.read() or b"null")


os.environ.setdefault("NO_PROXY", "127.0.0.1,localhost")
