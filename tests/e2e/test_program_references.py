"""Arklow resources named by plain name, duplicates and T3, under the real engine: a plain pool or
destination name is a dependency (first ``up`` and ``destroy`` succeed); a program declaring one
object twice, or a membership breaking T3, fails ``pulumi preview`` and stores nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e.pulumi_cli import PulumiError, Stack, write_project

pytestmark = pytest.mark.e2e

BY_NAME = """
from arklow_pulumi import AwsAutoScalingGroup, Destination, Lane, Pool, PoolMembership, ScaleTarget

Pool("gp", "gpu", 1)
Destination("d", ["gpu"], [Lane("l", 1)])
ScaleTarget("t", "gp", AwsAutoScalingGroup("gpu-workers", "us-east-1"), 0, 4, 8)
PoolMembership("m", "d", "gp")
"""

DUPLICATE = """
from arklow_pulumi import Pool

Pool("dup1", "gpu", arklow_name="same")
Pool("dup2", "gpu", arklow_name="same")
"""

T3 = """
from arklow_pulumi import Destination, Lane, Pool, PoolMembership

good = Destination("good", resources=["gpu"], lanes=[Lane("l", 1)])
cpu = Pool("cpu-pool", "cpu")
PoolMembership("t3", destination=good, pool=cpu)
"""


@pytest.fixture
def program_stack(tmp_path: Path, aws_env: dict[str, str]) -> Callable[[str, str], Stack]:
    def make(name: str, source: str) -> Stack:
        work = tmp_path / name
        project = write_project(work / "project", source, name=name)
        stack = Stack(project, work, env=aws_env)
        stack.init()
        return stack

    return make


def test_plain_names_are_dependencies(program_stack: Callable[[str, str], Stack]) -> None:
    stack = program_stack("byname", BY_NAME)
    stack.up()  # the first up: the pool exists before the target and the membership
    shown = stack.topology()
    assert shown["destinations"]["d"]["pools"] == {"gpu": "gp"}
    assert [t["name"] for t in shown["pools"]["gp"]["scale_targets"]] == ["t"]
    stack.destroy()  # the target and the membership go before the pool (no T6 race)
    assert stack.resources() == []
    assert stack.topology()["pools"] == {}


def test_duplicates_and_t3_fail_preview_and_store_nothing(
    program_stack: Callable[[str, str], Stack],
) -> None:
    duplicate = program_stack("duplicate", DUPLICATE)
    with pytest.raises(PulumiError) as err:
        duplicate.preview()
    assert "Pool 'dup2': field 'arklow_name': pool 'same' is already declared by Pool 'dup1'" in (
        err.value.output
    )
    assert not duplicate.default_store_path.exists()

    t3 = program_stack("t3", T3)
    with pytest.raises(PulumiError) as err:
        t3.preview()
    assert (
        "membership of destination 'good' in pool 'cpu-pool': field 'pool': destination 'good' "
        "does not draw from resource 'cpu' (it draws from ['gpu']); it would wait on an "
        "unrelated constraint"
    ) in err.value.output
    assert not t3.default_store_path.exists()
