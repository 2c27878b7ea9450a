"""The constructor forms of the four resources: the ones pulumi-aws accepts (``Kind(name, args,
opts)`` and ``Kind(name, opts=None, **fields)``) and this library's positional fields work; every
other mix is a TypeError naming the argument, and no option or field is silently dropped."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pulumi
import pytest

from arklow_pulumi import (
    AwsAutoScalingGroup,
    Destination,
    DestinationArgs,
    Lane,
    Pool,
    PoolArgs,
    PoolMembership,
    PoolMembershipArgs,
    ScaleTarget,
    ScaleTargetArgs,
)
from tests.program.mocks import RecordingMocks, mocked

ASG = AwsAutoScalingGroup("asg", "us-east-1")
PROTECT = pulumi.ResourceOptions(protect=True)


def settle(*resources: pulumi.CustomResource) -> None:
    async def gather() -> None:
        for resource in resources:
            await resource.urn.future()

    asyncio.get_event_loop().run_until_complete(gather())


ACCEPTED: dict[str, Callable[[], pulumi.CustomResource]] = {
    "pool args, opts by position": lambda: Pool("p", PoolArgs(resource="gpu", capacity=3), PROTECT),
    "pool args, opts by keyword": lambda: Pool("p", PoolArgs("gpu", 3), opts=PROTECT),
    "pool args by keyword": lambda: Pool("p", args=PoolArgs("gpu", 3), opts=PROTECT),
    "pool fields": lambda: Pool("p", opts=PROTECT, resource="gpu", capacity=3),
    "pool positional fields": lambda: Pool("p", "gpu", 3, opts=PROTECT),
    "destination args": lambda: Destination("p", DestinationArgs(["gpu"], [Lane("l", 1)]), PROTECT),
    "destination fields": lambda: Destination(
        "p", resources=["gpu"], lanes=[Lane("l", 1)], opts=PROTECT
    ),
    "membership args": lambda: PoolMembership("p", PoolMembershipArgs("d", "shared"), PROTECT),
    "membership fields": lambda: PoolMembership("p", destination="d", pool="shared", opts=PROTECT),
    "target args": lambda: ScaleTarget("p", ScaleTargetArgs("shared", ASG, 0, 2, 1), PROTECT),
    "target fields": lambda: ScaleTarget("p", "shared", ASG, 0, 2, 1, opts=PROTECT),
}


@pytest.mark.parametrize("form", list(ACCEPTED))
def test_accepted_forms_keep_their_options(form: str) -> None:
    with mocked() as mocks:
        settle(ACCEPTED[form]())
    assert mocks.protected["p"] is True
    inputs = _inputs(mocks)["p"]
    if "capacity" in inputs:
        assert inputs["capacity"] == 3


def _inputs(mocks: RecordingMocks) -> dict[str, dict[str, Any]]:
    return {r.name: r.inputs for r in mocks.resources}


REFUSED: dict[str, tuple[Callable[[], object], str]] = {
    "field beside args": (lambda: Pool("p", PoolArgs("gpu"), capacity=4), "'capacity'"),
    "opts twice": (lambda: Pool("p", PoolArgs("gpu"), PROTECT, opts=PROTECT), "'opts'"),
    "opts in a field's place": (lambda: Pool("p", "gpu", PROTECT), "'capacity'"),
    "opts past the fields": (
        lambda: PoolMembership("p", "d", "shared", PROTECT),
        "opts=",
    ),
    "unknown field": (lambda: Pool("p", resource="gpu", capcity=4), "'capcity'"),
    "field twice": (lambda: Pool("p", "gpu", resource="cpu"), "'resource'"),
    "missing field": (lambda: Pool("p", capacity=4), "'resource'"),
    "missing target field": (lambda: ScaleTarget("p", "shared", ASG, 0), "'max_replicas'"),
    "opts not options": (lambda: Pool("p", PoolArgs("gpu"), {"protect": True}), "'opts'"),
    "args of another kind": (lambda: Pool("p", args=DestinationArgs(["gpu"])), "'args'"),
    "more after args": (
        lambda: Destination("p", DestinationArgs(["gpu"]), PROTECT, PROTECT),
        "only the options",
    ),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_other_mixes_are_refused_naming_the_argument(case: str) -> None:
    declare, needle = REFUSED[case]
    with mocked() as mocks, pytest.raises(TypeError) as err:
        declare()
    assert needle in str(err.value), str(err.value)
    assert "'p'" in str(err.value)
    assert mocks.resources == []
