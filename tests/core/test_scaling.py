"""Scale decisions: headroom, ceil, split across targets, [min, max] clamping."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arklow_pulumi.core.scaling import desired_replicas
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
        (20, 0.0, [T(0, 10, 2, "a"), T(0, 30, 2, "b")], (3, 7)),  # split by largest supply
        (5, 0.0, [T(0, 5, 1, "a"), T(0, 5, 1, "b")], (3, 2)),  # ceil(5) in all, not 3 + 3
        (20, 0.0, [T(5, 10, 2, "a"), T(0, 10, 2, "b")], (5, 5)),  # a's floor is fixed first
        (5, 0.0, [], ()),
    ],
)
def test_desired_replicas(demand, headroom, targets, expected) -> None:
    assert desired_replicas(demand, headroom, targets) == expected


STATIC = [
    # (name, demand, headroom, static capacity, targets, expected) — issue 8, item 9
    ("static covers all: targets settle to min", 10, 0.1, 11, [T(1, 9)], (1,)),
    ("static covers more than needed", 10, 0.1, 500, [T(0, 9)], (0,)),
    ("targets supply only the shortfall", 100, 0.1, 100, [T(0, 50)], (10,)),
    ("shortfall in replicas, rounded up", 100, 0.1, 100, [T(0, 50, 4)], (3,)),
    (
        "shortfall split across targets",
        100,
        0.0,
        60,
        [T(0, 10, 2, "a"), T(0, 10, 2, "b")],
        (10, 10),
    ),
    (
        "shortfall split, not the whole need",
        100,
        0.0,
        80,
        [T(0, 10, 2, "a"), T(0, 10, 2, "b")],
        (5, 5),
    ),
    ("shortfall above max is clamped", 1000, 0.1, 100, [T(0, 5, 2)], (5,)),
    ("min holds even when static covers", 5, 0.0, 100, [T(3, 5)], (3,)),
    ("no static: the whole need", 10, 0.1, 0, [T(0, 100)], (11,)),
    ("float noise of an exact cover", 10, 0.1, 11.000000000000002, [T(0, 9)], (0,)),
    ("idle pool with static capacity", 0, 0.1, 50, [T(2, 9)], (2,)),
]


@pytest.mark.parametrize(
    ("name", "demand", "headroom", "static", "targets", "expected"),
    STATIC,
    ids=[c[0] for c in STATIC],
)
def test_desired_replicas_with_static_capacity(
    name: str,
    demand: float,
    headroom: float,
    static: float,
    targets: list[ScaleTarget],
    expected: tuple[int, ...],
) -> None:
    assert desired_replicas(demand, headroom, targets, static) == expected


def test_whole_replicas_tolerate_float_noise() -> None:
    assert desired_replicas(0.1 * 3, 0.0, [T(0, 100, 0.1)]) == (3,)  # 0.30000000000000004 / 0.1
    assert desired_replicas(3.0000001, 0.0, [T(0, 100)]) == (4,)  # more than noise: one more


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
