"""Fixtures: the session's moto server (tests/conftest.py) reached through AWS_ENDPOINT_URL, and
the session's Compute API server reached through ARKLOW_GCP_COMPUTE_ENDPOINT."""

from __future__ import annotations

import json
import os
import urllib.request
from collections import Counter
from typing import Any

import pytest

from arklow_pulumi.core.topology import GroupRef
from arklow_pulumi.supply import ReplicaLimits, SetResult, Supply, SupplyRouter, reconcile_pass
from tests import aws_moto

REGION = aws_moto.REGION


def make_asg(client: Any, name: str, low: int, high: int, desired: int) -> None:
    aws_moto.make_asg(client, name, low, high, desired)


def set_size(
    supply: Supply, ref: GroupRef, replicas: int, limits: ReplicaLimits | None = None
) -> SetResult:
    """One group set through the one act path, as ``arklow supply set`` does (the group described
    with its policies, planned, applied): what it did, or its refusal or error raised."""
    targets = {ref: limits} if limits is not None else None
    return reconcile_pass(
        SupplyRouter.of(supply), {ref: replicas}, targets=targets, detail=True
    ).result(ref)


class FakeClock:
    """A monotonic clock that only moves when slept on."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0
        self.sleeps.append(seconds)
        self.now += seconds


def count_calls(client: Any) -> Counter[str]:
    """Counts every API call a botocore client sends, by operation name."""
    calls: Counter[str] = Counter()

    def hook(model: Any, **_: Any) -> None:
        calls[model.name] += 1

    client.meta.events.register("before-call", hook)
    return calls


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
