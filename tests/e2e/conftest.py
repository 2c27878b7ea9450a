"""Fixtures for the end-to-end tests: the engine check, a moto server, and one stack per test."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import aws_moto
from tests.e2e.pulumi_cli import MISSING_ENGINE, Stack, engine_available, write_project

REGION = aws_moto.REGION
# Auto Scaling groups the e2e topologies reference: name -> (MinSize, MaxSize, DesiredCapacity).
GROUPS = {"gpu-workers": (0, 20, 1), "quota-workers": (0, 10, 0)}


@pytest.fixture(scope="session", autouse=True)
def pulumi_engine() -> None:
    """Fail (never skip) without the engine, unless ARKLOW_SKIP_E2E=1 says so explicitly."""
    if engine_available():
        return
    if os.environ.get("ARKLOW_SKIP_E2E") == "1":
        pytest.skip("ARKLOW_SKIP_E2E=1: " + MISSING_ENGINE)
    pytest.fail(MISSING_ENGINE, pytrace=False)


@pytest.fixture(scope="session")
def aws_env() -> Iterator[dict[str, str]]:
    """A moto server on 127.0.0.1 holding the groups in GROUPS; the environment that reaches it
    (the pulumi CLI passes it on to the dynamic provider process)."""
    server, url = aws_moto.start_server()
    client = aws_moto.autoscaling_client(url)
    for name, (low, high, desired) in GROUPS.items():
        aws_moto.make_asg(client, name, low, high, desired)
    yield aws_moto.aws_env(url)
    server.stop()


@pytest.fixture
def make_stack(tmp_path: Path, aws_env: dict[str, str]) -> Iterator[Callable[..., Stack]]:
    """A fresh copy of the root program with its own backend, PULUMI_HOME and SQLite store."""
    made: list[Stack] = []

    def make(topology: dict[str, Any], name: str = "dev") -> Stack:
        work = tmp_path / f"{name}-{len(made)}"
        project = write_project(work / "project")
        stack = Stack(project, work, name=name, env=aws_env)
        stack.env.pop("AWS_PROFILE", None)
        stack.set_topology(topology)
        stack.init()
        made.append(stack)
        return stack

    yield make
    for stack in made:
        timings = ", ".join(f"{cmd} {secs:.1f}s" for cmd, secs in stack.timings)
        print(f"\n[{stack.project}] {timings}")
