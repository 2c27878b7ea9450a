"""A membership whose pool is an Output computed from another resource, under the real engine:
the SDK's provider server hands ``check``/``diff`` a ``pulumi.output.Unknown`` for it in preview
(on the first preview, and whenever the other resource is being updated)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e.pulumi_cli import Stack, arklow_steps, write_project

pytestmark = pytest.mark.e2e

PROGRAM = """
import os

import pulumi

from arklow_pulumi import Destination, Lane, PoolMembership

a = Destination("a", resources=["gpu"], lanes=[Lane("l", int(os.environ["LANE_LIMIT"]))])
b = Destination("b", resources=["gpu"], lanes=[Lane("l", 1)])
# T7: b joins a's own gpu pool, named by a's output
PoolMembership("b-in-a", destination=b, pool=a.standalone_pools.apply(lambda s: s["gpu"]))
pulumi.export("a_standalone", a.standalone_pools)
"""


@pytest.fixture
def program_stack(tmp_path: Path, aws_env: dict[str, str]) -> Callable[[str], Stack]:
    def make(source: str) -> Stack:
        project = write_project(tmp_path / "project", source, name="unknowns")
        stack = Stack(project, tmp_path, env=aws_env)
        stack.init()
        return stack

    return make


def test_membership_pool_from_another_resources_output(
    program_stack: Callable[[str], Stack],
) -> None:
    stack = program_stack(PROGRAM)
    stack.env["LANE_LIMIT"] = "1"
    preview = stack.preview()
    assert arklow_steps(preview) == [
        ("create", "Destination", "a"),
        ("create", "Destination", "b"),
        ("create", "PoolMembership", "b-in-a"),
    ]
    stack.up()
    shown = stack.topology()
    assert shown["destinations"]["b"]["pools"] == {"gpu": "a/gpu"}
    assert sorted(shown["pools"]["a/gpu"]["members"]) == ["a", "b"]
    assert stack.outputs()["a_standalone"] == {"gpu": "a/gpu"}

    # a is updated: its outputs are unknown in preview, so is the membership's pool
    stack.env["LANE_LIMIT"] = "2"
    again = stack.preview()
    assert ("update", "Destination", "a") in arklow_steps(again)
    stack.up()
    assert arklow_steps(stack.preview()) == []  # settled: no perpetual diff
    shown = stack.topology()
    assert shown["destinations"]["b"]["pools"] == {"gpu": "a/gpu"}
    assert stack.outputs()["a_standalone"] == {"gpu": "a/gpu"}  # still a's own pool (T7)
    stack.destroy()
