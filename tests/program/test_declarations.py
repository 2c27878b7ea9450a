"""One program, one declaration per Arklow object; plain names become dependencies."""

from __future__ import annotations

import asyncio
from typing import Any

import pulumi
import pytest

from arklow_pulumi import (
    AwsAutoScalingGroup,
    Destination,
    Lane,
    Pool,
    PoolMembership,
    ScaleTarget,
)
from arklow_pulumi.resources.registry import DuplicateDeclaration
from tests.program.mocks import RecordingMocks, mocked


def settle(mocks: RecordingMocks, *resources: pulumi.CustomResource) -> None:
    """Let the mocked registrations run (they are scheduled on the event loop)."""

    async def gather() -> None:
        for resource in resources:
            await resource.urn.future()

    asyncio.get_event_loop().run_until_complete(gather())


def depends_on(mocks: RecordingMocks, name: str) -> set[str]:
    return {urn.split("::")[-1] for urn in mocks.dependencies[name]}


def target(name: str, pool: Any) -> ScaleTarget:
    return ScaleTarget(name, pool, AwsAutoScalingGroup("asg", "us-east-1"), 0, 2, 1)


# -- finding 6: duplicate declarations ---------------------------------------------------------


@pytest.mark.parametrize(
    ("declare", "kind"),
    [
        (lambda: (Pool("dup1", "gpu", arklow_name="same"), Pool("dup2", "gpu", arklow_name="same")), "Pool"),
        (lambda: (Destination("dup1", ["gpu"], arklow_name="same"), Destination("dup2", ["gpu"], arklow_name="same")), "Destination"),
        (lambda: (target("dup1", "p"), ScaleTarget("dup2", "p", AwsAutoScalingGroup("b", "r"), 0, 1, 1, arklow_name="dup1")), "ScaleTarget"),
    ],
)  # fmt: skip
def test_two_resources_for_one_arklow_name_fail_at_construction(declare: Any, kind: str) -> None:
    with mocked(), pytest.raises(DuplicateDeclaration) as err:
        declare()
    message = str(err.value)
    assert message.startswith(f"{kind} 'dup2': field 'arklow_name': ")
    assert f"already declared by {kind} 'dup1'" in message
    assert isinstance(err.value, pulumi.RunError)  # the engine shows it without a traceback


def test_two_memberships_of_one_destination_for_one_resource_fail() -> None:
    with mocked():
        good = Destination("good", ["gpu", "cpu"], [Lane("l", 1)])
        p1, p2 = Pool("p1", "gpu"), Pool("p2", "gpu")
        PoolMembership("m1", good, p1)
        PoolMembership("m-cpu", "good", Pool("c", "cpu"))  # another resource: fine
        with pytest.raises(DuplicateDeclaration) as err:
            PoolMembership("m2", good, p2)
        assert str(err.value).startswith(
            "PoolMembership 'm2': field 'pool': destination 'good' is already given pool 'p1' "
            "for resource 'gpu' by PoolMembership 'm1'"
        )
        with pytest.raises(DuplicateDeclaration, match=r"PoolMembership 'm3'.*'m1'"):
            PoolMembership("m3", "good", "good/gpu")  # by plain names, standalone pool


def test_unknown_identities_and_separate_programs_are_not_duplicates() -> None:
    with mocked() as mocks:
        a = Destination("a", ["gpu"], [Lane("l", 1)])
        b = Destination("b", ["gpu"], [Lane("l", 1)])
        x = Pool("x", "gpu", arklow_name=a.arklow_name.apply(lambda n: n + "-x"))
        y = Pool("y", "gpu", arklow_name=a.arklow_name.apply(lambda n: n + "-y"))
        m1 = PoolMembership("m1", b, a.pools.apply(lambda s: s["gpu"]))
        m2 = PoolMembership("m2", b, a.pools.apply(lambda s: s["gpu"]))  # not known: allowed
        settle(mocks, a, b, x, y, m1, m2)
    with mocked() as mocks:  # a new program starts empty
        settle(mocks, Destination("a", ["gpu"], [Lane("l", 1)]))


# -- finding 9: plain names are dependencies ---------------------------------------------------


def test_a_pool_given_by_plain_name_is_a_dependency() -> None:
    with mocked() as mocks:
        gp = Pool("gp-res", "gpu", arklow_name="gp")
        d = Destination("d", ["gpu"], [Lane("l", 1)])
        t = target("t", "gp")
        m = PoolMembership("m", "d", "gp")
        t7 = PoolMembership("m7", Destination("e", ["gpu"], [Lane("l", 1)]), "d/gpu")
        loose = target("loose", "undeclared")
        settle(mocks, gp, d, t, m, t7, loose)
    assert depends_on(mocks, "t") == {"gp-res"}
    assert depends_on(mocks, "m") == {"d", "gp-res"}
    assert depends_on(mocks, "m7") == {"e", "d"}  # "<d>/<r>" is Destination d's own pool
    assert depends_on(mocks, "loose") == set()


def test_membership_carries_the_hidden_inputs_for_t3_at_preview() -> None:
    with mocked() as mocks:
        good = Destination("good", resources=["gpu"], lanes=[Lane("l", 1)])
        cpu = Pool("cpu-pool", "cpu")
        m = PoolMembership("t3", destination=good, pool=cpu)
        Destination("good2", resources=["gpu"], lanes=[Lane("l", 1)])
        s = PoolMembership("s", destination="good2", pool="other/cpu")
        settle(mocks, m, s)
    inputs = mocks.of_type("PoolMembership")
    assert inputs["t3"]["destination_resources"] == ["gpu"]
    assert inputs["t3"]["pool_resource"] == "cpu"
    assert inputs["s"]["destination_resources"] == ["gpu"] and inputs["s"]["pool_resource"] == "cpu"
