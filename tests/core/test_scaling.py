"""Scale decisions: headroom, ceil, split across targets, [min, max] clamping, stabilization."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arklow_pulumi.core.scaling import (
    Recommendation,
    ScalePolicy,
    desired_replicas,
    replicas_for,
    stabilize,
)
from arklow_pulumi.core.topology import GroupRef, ScaleTarget


def T(lo: int, hi: int, upr: float = 1.0, name: str = "t") -> ScaleTarget:
    return ScaleTarget(name, GroupRef("aws_asg", name), lo, hi, upr, lo)


@pytest.mark.parametrize(
    ("demand", "headroom", "targets", "expected"),
    [
        (10, 0.1, [T(0, 100)], (11,)),  # 10 * 1.1 = 11.000000000000002 must not become 12
        (10, 0.0, [T(0, 100, 4)], (3,)),
        (0, 0.1, [T(2, 9)], (2,)),  # idle / no members -> min
        (1000, 0.1, [T(1, 5)], (5,)),  # clamped to max
        (1, 0.1, [T(3, 5)], (3,)),  # clamped to min
        (40, 0.0, [T(0, 10, 2, "a"), T(0, 10, 2, "b")], (10, 10)),
        (20, 0.0, [T(0, 10, 2, "a"), T(0, 30, 2, "b")], (3, 8)),  # split by largest supply
        (20, 0.0, [T(5, 10, 2, "a"), T(0, 10, 2, "b")], (5, 5)),  # a's floor is fixed first
        (5, 0.0, [], ()),
    ],
)
def test_desired_replicas(demand, headroom, targets, expected) -> None:
    assert desired_replicas(demand, headroom, targets) == expected


def test_replicas_for_tolerates_float_noise() -> None:
    assert replicas_for(0.1 * 3, 0.1) == 3
    assert replicas_for(3.0000001, 1) == 4


@given(
    st.floats(0, 1e6),
    st.floats(0, 2),
    st.lists(
        st.tuples(st.integers(0, 50), st.integers(0, 50), st.floats(0.1, 100)),
        min_size=1,
        max_size=4,
    ),
)
def test_never_outside_bounds(
    demand: float, headroom: float, specs: list[tuple[int, int, float]]
) -> None:
    targets = [T(min(a, b), max(a, b), u, f"t{k}") for k, (a, b, u) in enumerate(specs)]
    for t, r in zip(targets, desired_replicas(demand, headroom, targets), strict=True):
        assert t.min_replicas <= r <= t.max_replicas


def test_stabilize_scales_up_at_once_and_down_after_window() -> None:
    t, p = T(1, 20), ScalePolicy(stabilization_seconds=300)
    assert stabilize(t, current=5, desired=9, history=[], now=0, policy=p) == 9
    history = [Recommendation(at=100, replicas=8), Recommendation(at=0, replicas=9)]
    assert stabilize(t, current=9, desired=3, history=history, now=350, policy=p) == 8
    assert stabilize(t, current=9, desired=3, history=history, now=500, policy=p) == 3


def test_stabilize_step_limit_and_bounds() -> None:
    t = T(2, 10)
    assert stabilize(t, 4, 10, [], 0, ScalePolicy(max_step=2)) == 6
    assert stabilize(t, 40, 3, [], 0, ScalePolicy(0, max_step=2)) == 10  # current out of bounds
    assert stabilize(t, 0, 0, [], 0, ScalePolicy(0, max_step=1)) == 2
