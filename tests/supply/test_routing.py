"""The router's describe: partitions described apart, and a failure kept to the groups it names."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from arklow_pulumi.core.topology import GroupRef
from arklow_pulumi.supply import GroupState, InMemorySupply
from arklow_pulumi.supply.errors import PermanentSupplyError, TemporarySupplyError
from arklow_pulumi.supply.routing import SupplyRouter

REGION = "us-east-1"


def asg(name: str, region: str = REGION) -> GroupRef:
    return GroupRef("aws_asg", name, region=region)


class RefusesOne(InMemorySupply):
    """A describe naming ``broken`` fails the whole call with an error about ``broken`` (as a
    batched cloud call does when one group of it is refused)."""

    def __init__(self, groups: Sequence[GroupState], broken: GroupRef) -> None:
        super().__init__(groups)
        self.broken = broken

    def describe(
        self, refs: Sequence[GroupRef], *, detail: bool = True
    ) -> Mapping[GroupRef, GroupState]:
        if self.broken in refs:
            self.calls["refused"] += 1
            raise PermanentSupplyError("access denied", self.broken)
        return super().describe(refs, detail=detail)


class Down(InMemorySupply):
    """Every describe fails with an error naming no group (the endpoint is down)."""

    def describe(
        self, refs: Sequence[GroupRef], *, detail: bool = True
    ) -> Mapping[GroupRef, GroupState]:
        self.calls["down"] += 1
        raise TemporarySupplyError("endpoint unreachable")


def test_a_failure_naming_one_group_is_that_groups_alone() -> None:
    refs = [asg(f"g{k}") for k in range(4)]
    supply = RefusesOne([GroupState(r, 2, 2, min=0, max=5) for r in refs], broken=refs[1])
    seen = SupplyRouter.of(supply).describe_partial(refs, detail=False)
    assert list(seen.failed) == [refs[1]]
    assert str(refs[1]) in str(seen.failed[refs[1]])
    assert set(seen.found) == {refs[0], refs[2], refs[3]}
    assert all(seen.found[r].desired == 2 for r in seen.found)
    # one call refused, one more for the rest of the batch
    assert seen.calls == 2 and supply.calls["refused"] == 1


def test_a_failure_naming_no_group_is_every_groups_and_other_partitions_stay() -> None:
    east = [asg("e0"), asg("e1")]
    west = [asg("w0", "us-west-2")]
    down = Down([GroupState(r, 1, 1, min=0, max=5) for r in east])
    fine = InMemorySupply([GroupState(r, 3, 3, min=0, max=5) for r in west])

    class Split(InMemorySupply):
        def describe(
            self, refs: Sequence[GroupRef], *, detail: bool = True
        ) -> Mapping[GroupRef, GroupState]:
            target = fine if refs[0].region == "us-west-2" else down
            return target.describe(refs, detail=detail)

    seen = SupplyRouter.of(Split()).describe_partial([*east, *west], detail=False)
    assert set(seen.failed) == set(east)
    assert all("endpoint unreachable" in str(e) for e in seen.failed.values())
    assert set(seen.found) == set(west) and seen.found[west[0]].desired == 3
    assert down.calls["down"] == 1  # not once per group


def test_a_lone_group_failing_is_reported_once() -> None:
    ref = asg("solo")
    supply = RefusesOne([GroupState(ref, 1, 1, min=0, max=5)], broken=ref)
    seen = SupplyRouter.of(supply).describe_partial([ref], detail=False)
    assert list(seen.failed) == [ref] and not seen.found and seen.calls == 1
