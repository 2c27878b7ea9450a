"""plan_change and check_bounds: pure decisions, before any call."""

from __future__ import annotations

import pytest

from arklow_pulumi.core.topology import GroupRef
from arklow_pulumi.supply import (
    GroupState,
    InMemorySupply,
    OutOfBounds,
    ReplicaLimits,
    plan_change,
)
from arklow_pulumi.supply.planning import needs_change, plan_text
from tests.supply.conftest import set_size

MIG = GroupRef("gcp_mig", "api", region="us-central1", project="p")
ASG = GroupRef("aws_asg", "web", region="us-east-1")


def autoscaled(desired: int = 4, low: int = 2, high: int = 6) -> GroupState:
    return GroupState(MIG, desired, desired, min=low, max=high, autoscaler=True)


@pytest.mark.parametrize(
    ("limits", "replicas", "ok"),
    [
        (ReplicaLimits(2, None), 2, True),
        (ReplicaLimits(2, None), 900, True),
        (ReplicaLimits(2, None), 1, False),
        (ReplicaLimits(None, 5), 0, True),
        (ReplicaLimits(None, 5), 6, False),
        (ReplicaLimits(), 900, True),
    ],
)
def test_an_unbounded_side_of_the_limits_is_skipped(
    limits: ReplicaLimits, replicas: int, ok: bool
) -> None:
    plain = GroupState(GroupRef("gcp_mig", "web", zone="z", project="p"), 3, 3)
    if ok:
        assert plan_change(plain, replicas, limits).desired == replicas
    else:
        with pytest.raises(OutOfBounds, match="target's"):
            plan_change(plain, replicas, limits)


def test_an_unbounded_max_is_shown_as_such_in_a_refusal() -> None:
    with pytest.raises(OutOfBounds, match=r"target's bounds \[2, unbounded\]") as info:
        plan_change(autoscaled(), 1, ReplicaLimits(2, None))
    assert info.value.high is None


def test_autoscaler_max_is_the_groups_own_max() -> None:
    with pytest.raises(OutOfBounds, match=r"group's bounds \[0, 6\]"):
        plan_change(autoscaled(), 7, ReplicaLimits(0, 100))
    with pytest.raises(OutOfBounds, match="group's"):
        plan_change(autoscaled(), 7)


@pytest.mark.parametrize(
    ("replicas", "window"), [(1, (1, 6)), (0, (0, 6)), (5, (5, 6)), (6, (6, 6))]
)
def test_autoscaled_mig_moves_the_window_min_and_keeps_the_max(
    replicas: int, window: tuple[int, int]
) -> None:
    plan = plan_change(autoscaled(), replicas, ReplicaLimits(0, 50))
    assert (plan.method, plan.window) == ("autoscaler_window", window)
    assert (plan.previous, plan.previous_window) == (4, (2, 6))
    assert plan.as_json()["previous_window"] == [2, 6]
    assert needs_change(autoscaled(), replicas)


def test_autoscaled_mig_is_unchanged_when_the_window_min_is_the_count() -> None:
    plan = plan_change(autoscaled(desired=5, low=2), 2)
    assert (plan.method, plan.window, plan.previous) == ("unchanged", (2, 6), 5)
    assert not needs_change(autoscaled(desired=5, low=2), 2)


def test_asg_bounds_still_bind_on_both_sides() -> None:
    asg = GroupState(ASG, 2, 2, min=1, max=5)
    for replicas in (0, 6):
        with pytest.raises(OutOfBounds, match=r"group's bounds \[1, 5\]"):
            plan_change(asg, replicas)
    assert plan_change(asg, 5).method == "set_desired_capacity"


def test_in_memory_autoscaled_mig_follows_the_same_plan() -> None:
    memory = InMemorySupply([autoscaled()])
    result = set_size(memory, MIG, 1)
    assert (result.window, result.previous, result.previous_window) == ((1, 6), 4, (2, 6))
    assert (memory.groups[MIG].min, memory.groups[MIG].max) == (1, 6)
    with pytest.raises(OutOfBounds):
        set_size(memory, MIG, 7)
    assert memory.calls["write"] == 1


# -- plan_pass ------------------------------------------------------------------------------------


def test_plan_pass_sorts_groups_into_writes_nothing_and_refusals() -> None:
    from arklow_pulumi.core.topology import ScaleTarget
    from arklow_pulumi.supply import GroupNotFound, PolicyConflict, plan_pass

    def ref(name: str) -> GroupRef:
        return GroupRef("aws_asg", name, region="us-east-1")

    states = {
        ref("same"): GroupState(ref("same"), 3, 3, min=0, max=9),
        ref("up"): GroupState(ref("up"), 3, 3, min=0, max=9),
        ref("high"): GroupState(ref("high"), 3, 3, min=0, max=9),
        ref("policy"): GroupState(ref("policy"), 3, 3, min=0, max=9, policies=("tt",)),
        ref("window"): autoscaled(desired=4, low=2),
    }
    decisions = {
        ref("same"): 3,
        ref("up"): 5,
        ref("high"): 7,
        ref("policy"): 4,
        ref("gone"): 1,
        MIG: 2,  # the window's min already is 2
    }
    targets = {ref("high"): ScaleTarget("t", ref("high"), 0, 6, 1.0, 3)}
    plan = plan_pass({**states, MIG: states[ref("window")]}, decisions, targets)
    assert {r.name: p.desired for r, p in plan.changes.items()} == {"up": 5}
    assert {r.name for r in plan.unchanged} == {"same", "api"}
    assert isinstance(plan.refused[ref("high")], OutOfBounds)
    assert isinstance(plan.refused[ref("policy")], PolicyConflict)
    assert isinstance(plan.refused[ref("gone")], GroupNotFound)
    assert InMemorySupply().calls == {}  # planning needs no binding at all


def test_a_plan_and_a_refusal_are_said_in_one_line_each() -> None:
    plan = plan_change(autoscaled(), 5, ReplicaLimits(0, 50))
    assert plan_text("g", plan) == "autoscaler_window g: 4 -> 5 window [5, 6]"
    plain = GroupState(ASG, 2, 2, min=1, max=5)
    assert plan_text("g", plan_change(plain, 3)) == "set_desired_capacity g: 2 -> 3"
    with pytest.raises(OutOfBounds) as info:
        plan_change(plain, 9)
    assert plan_text("g", info.value) == f"refuse g: {info.value}"
