"""The scale policy on one target: step limits, the scale-down window, tolerance, bounds."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arklow_pulumi.core.policy import (
    DEFAULT_POLICY,
    Move,
    ScalePolicy,
    move_after,
    next_replicas,
    reverses,
    within_tolerance,
)


def test_defaults_are_design_md() -> None:
    p = ScalePolicy()
    assert (p.max_step_up, p.max_step_up_percent) == (4, 100.0)
    assert (p.max_step_down, p.max_step_down_percent) == (1, 10.0)
    assert (p.scale_down_window_s, p.tolerance) == (300.0, 0.1)
    assert p == DEFAULT_POLICY


def test_constructor_is_keyword_only() -> None:
    with pytest.raises(TypeError):
        ScalePolicy(8)  # type: ignore[misc]


@pytest.mark.parametrize(
    ("current", "up", "down"),
    [
        (0, 4, 1),  # max(4 replicas, 100% of current); 10% of current, at least 1
        (2, 4, 1),
        (4, 4, 1),
        (10, 10, 1),
        (15, 15, 1),
        (19, 19, 1),
        (20, 20, 2),
        (40, 40, 4),
    ],
)
def test_default_step_limits(current: int, up: int, down: int) -> None:
    assert DEFAULT_POLICY.step_up_limit(current) == up
    assert DEFAULT_POLICY.step_down_limit(current) == down


def test_fixed_steps_with_zero_percent() -> None:
    p = ScalePolicy(max_step_up=2, max_step_up_percent=0, max_step_down=3, max_step_down_percent=0)
    assert (p.step_up_limit(100), p.step_down_limit(100)) == (2, 3)


def nxt(current: int, rec: int, window: tuple[int, ...] = (), lo: int = 0, hi: int = 100,
        policy: ScalePolicy = DEFAULT_POLICY) -> int:  # fmt: skip
    return next_replicas(policy, current=current, recommended=rec, window=window, low=lo, high=hi)


@pytest.mark.parametrize(
    ("current", "rec", "window", "lo", "hi", "expected"),
    [
        (5, 5, (), 0, 100, 5),  # no change
        (5, 8, (), 0, 100, 8),  # up at once
        (2, 30, (), 0, 100, 6),  # up bounded by max(4, 100%)
        (20, 60, (), 0, 100, 40),  # up bounded by 100% of current
        (20, 60, (), 0, 30, 30),  # ... and by max
        (10, 3, (), 0, 100, 9),  # down bounded by max(1, 10%)
        (40, 3, (), 0, 100, 36),
        (10, 3, (9, 7), 0, 100, 9),  # down only to the window's highest
        (10, 3, (8, 7), 0, 100, 9),  # ... and still one step at a time
        (10, 9, (4,), 0, 100, 9),  # this tick's recommendation is in the window
        (10, 3, (12,), 0, 100, 10),  # a higher recommendation in the window: hold, never up
        (50, 3, (), 0, 20, 20),  # above a lowered max: to max at once (bounds win)
        (0, 0, (), 3, 10, 3),  # below min: to min at once
        (0, 50, (), 0, 100, 4),  # from zero, the absolute step
    ],
)
def test_next_replicas(
    current: int, rec: int, window: tuple[int, ...], lo: int, hi: int, expected: int
) -> None:
    assert nxt(current, rec, window, lo, hi) == expected


@pytest.mark.parametrize(
    ("needed", "supplied", "tolerance", "hold"),
    [
        (10.0, 10.0, 0.1, True),
        (11.0, 10.0, 0.1, True),  # exactly 10%: no change
        (9.0, 10.0, 0.1, True),
        (11.5, 10.0, 0.1, False),
        (8.5, 10.0, 0.1, False),
        (0.0, 0.0, 0.1, True),  # nothing needed, nothing supplied
        (0.5, 0.0, 0.1, False),  # anything needed from nothing acts
        (10.5, 10.0, 0.0, False),  # tolerance 0: any change acts
    ],
)
def test_within_tolerance(needed: float, supplied: float, tolerance: float, hold: bool) -> None:
    assert within_tolerance(needed, supplied, tolerance) is hold


policies = st.builds(
    ScalePolicy,
    max_step_up=st.integers(0, 10),
    max_step_up_percent=st.floats(0, 300),
    scale_down_window_s=st.floats(0, 1000),
    max_step_down=st.integers(0, 10),
    max_step_down_percent=st.floats(0, 100),
    tolerance=st.floats(0, 1),
)


UP, DOWN = Move(1000.0, 1), Move(1000.0, -1)


@pytest.mark.parametrize(
    ("current", "rec", "last", "now", "held", "expected"),
    [
        (10, 3, UP, 1299.0, False, 10),  # down within the window after an up: waits
        (10, 3, UP, 1300.0, False, 9),  # the window has passed: down as usual
        (10, 3, DOWN, 1001.0, False, 9),  # down after down: no reversal
        (10, 14, DOWN, 1299.0, False, 10),  # up within the window after a down: waits
        (10, 14, DOWN, 1299.0, True, 14),  # ... unless held work takes it up: never waits
        (10, 14, DOWN, 1300.0, False, 14),
        (10, 14, UP, 1001.0, False, 14),  # up after up
        (10, 14, None, 0.0, False, 14),  # never moved
        (30, 14, UP, 1100.0, False, 20),  # a lowered max still wins over the guard
    ],
)
def test_no_reversal_within_the_window(
    current: int, rec: int, last: Move | None, now: float, held: bool, expected: int
) -> None:
    got = next_replicas(
        DEFAULT_POLICY, current=current, recommended=rec, window=(), low=0,
        high=20 if current == 30 else 100, held=held, last=last, now=now,
    )  # fmt: skip
    assert got == expected


def test_reverses_reads_the_pools_window() -> None:
    short = ScalePolicy(scale_down_window_s=60.0)
    assert reverses(DEFAULT_POLICY, UP, -1, 1200.0)
    assert not reverses(short, UP, -1, 1200.0)
    assert not reverses(DEFAULT_POLICY, UP, 1, 1200.0)  # the same way is no reversal
    assert not reverses(DEFAULT_POLICY, None, -1, 1200.0)
    assert not reverses(ScalePolicy(scale_down_window_s=0.0), UP, -1, 1000.0)


def test_move_after_records_only_a_change() -> None:
    assert move_after(None, 5, 5, 60.0) is None
    assert move_after(UP, 5, 5, 2000.0) is UP
    assert move_after(UP, 5, 3, 2000.0) == Move(2000.0, -1)
    assert move_after(None, 5, 9, 60.0) == Move(60.0, 1)


@given(
    policies,
    st.integers(0, 500),
    st.integers(0, 500),
    st.lists(st.integers(0, 500), max_size=10),
    st.integers(0, 200),
    st.integers(0, 200),
    st.sampled_from([-1, 0, 1]),  # 0: never moved
    st.floats(0, 2000),
    st.booleans(),
)
def test_never_outside_bounds_nor_turned_around_within_the_window(
    policy: ScalePolicy, current: int, rec: int, window: list[int], a: int, b: int,
    direction: int, age: float, held: bool,
) -> None:  # fmt: skip
    lo, hi = min(a, b), max(a, b)
    last = Move(10_000.0 - age, direction) if direction else None
    got = next_replicas(
        policy, current=current, recommended=rec, window=window, low=lo, high=hi, held=held,
        last=last, now=10_000.0,
    )  # fmt: skip
    assert lo <= got <= hi
    if lo <= current <= hi:  # moves towards the recommendation, never past it
        assert min(current, rec) <= got <= max(current, rec)
    if last is not None and lo <= current <= hi and age < policy.scale_down_window_s:
        if direction > 0:
            assert got >= current  # no scale-down after a scale-up, held or not
        elif not held:
            assert got <= current  # no scale-up after a scale-down unless work is held


def test_policy_is_a_frozen_value() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT_POLICY.tolerance = 0.5  # type: ignore[misc]
