"""``pulumi destroy`` removes the Arklow objects and never resizes a cloud group: the group keeps
the count the controller gave it last (docs/store.md, README). The documented way down, ``arklow
supply set ... --replicas N`` after the destroy, then takes it there. Real engine, the
``examples/gpu_pool_asg`` program, a moto server, the ``arklow`` CLI in a subprocess."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.arklow_cli import only, run
from tests.e2e.pulumi_cli import REPO, Stack, write_project

pytestmark = pytest.mark.e2e

GROUP = ("--kind", "aws_asg", "--name", "gpu-workers", "--region", "us-east-1")


def arklow(env: dict[str, str], *args: str) -> Any:
    result = run([*args, "--format", "json"], env=env, cleared=only(env))
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout)


def test_destroy_leaves_the_group_at_its_count_and_supply_set_scales_it_down(
    tmp_path: Path, aws_env: dict[str, str]
) -> None:
    # The session's moto server and its gpu-workers group (moto servers in one process share
    # their groups: a server of its own would redefine the group for the other tests).
    source = (REPO / "examples" / "gpu_pool_asg" / "__main__.py").read_text()
    project = write_project(tmp_path / "project", main_source=source, name="gpu-pool-asg")
    stack = Stack(project, tmp_path, name="example", env=aws_env).init()
    env = stack.env
    before = arklow(env, "supply", "describe", *GROUP)["desired"]
    try:
        stack.up()
        arklow(env, "supply", "set", *GROUP, "--replicas", "7")  # as the controller would
        stack.destroy()
        assert stack.topology() == {"destinations": {}, "pools": {}}
        assert arklow(env, "supply", "describe", *GROUP)["desired"] == 7  # left as it was

        arklow(env, "supply", "set", *GROUP, "--replicas", "0")  # the documented way down
        assert arklow(env, "supply", "describe", *GROUP)["desired"] == 0
    finally:
        arklow(env, "supply", "set", *GROUP, "--replicas", str(before))
