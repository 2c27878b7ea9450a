"""The scale policy (core.policy): the pool's mode (held work, the kept headroom, the tolerance
on the way down), each target's step, window and reversal guard, the reasons, the bounds."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arklow_pulumi.core.policy import (
    DEFAULT_POLICY,
    REASONS,
    Mode,
    Move,
    PoolFigures,
    ScalePolicy,
    TargetFigures,
    TargetStep,
    decide_pool,
    guarding,
    move_after,
    plain_step,
    pool_mode,
    reverses,
)


def test_defaults_are_the_documented_ones() -> None:
    p = ScalePolicy()
    assert (p.max_step_up, p.max_step_up_percent) == (4, 100.0)
    assert (p.max_step_down, p.max_step_down_percent) == (1, 100.0)
    assert (p.scale_down_window_s, p.tolerance, p.headroom_kept) == (300.0, 0.1, 0.75)
    assert p == DEFAULT_POLICY


def test_constructor_is_keyword_only() -> None:
    with pytest.raises(TypeError):
        ScalePolicy(8)  # type: ignore[misc]


@pytest.mark.parametrize(
    ("current", "up", "down"),
    [(0, 4, 1), (2, 4, 2), (4, 4, 4), (10, 10, 10), (40, 40, 40)],  # 100 % of current, or 4 / 1
)
def test_default_step_limits(current: int, up: int, down: int) -> None:
    assert DEFAULT_POLICY.step_up_limit(current) == up
    assert DEFAULT_POLICY.step_down_limit(max(current, 1)) == max(down, 1)


def test_fixed_steps_with_zero_percent() -> None:
    p = ScalePolicy(max_step_up=2, max_step_up_percent=0, max_step_down=3, max_step_down_percent=0)
    assert (p.step_up_limit(100), p.step_down_limit(100)) == (2, 3)


def pool(demand: float, supplied: float, *, capacity: float | None = None, static: float = 0.0,
         headroom: float = 0.1, members: bool = True) -> PoolFigures:  # fmt: skip
    cap = supplied + static if capacity is None else capacity
    return PoolFigures(demand, cap, supplied, static, headroom, members)


T10 = ScalePolicy(tolerance=0.1, headroom_kept=1.0)


@pytest.mark.parametrize(
    ("figures", "policy", "mode"),
    [
        (pool(10.0, 11.0), T10, "hold"),  # need 11 = supply
        (pool(10.0, 12.0), T10, "hold"),  # need 11 ≥ 0.9 × 12
        (pool(10.0, 12.3), T10, "down"),  # need 11 < 0.9 × 12.3
        (pool(10.0, 10.9), T10, "up"),  # the headroom is kept: any shortfall acts
        (pool(10.0, 10.9, capacity=10.0), T10, "up"),  # capacity serves the demand
        (pool(10.0, 12.0, capacity=9.0), T10, "held"),  # in service holds work
        (
            pool(10.0, 10.6),
            ScalePolicy(tolerance=0.1, headroom_kept=0.5),
            "hold",
        ),  # 0.6 of 1 unit of headroom
        (pool(10.0, 10.4), ScalePolicy(tolerance=0.1, headroom_kept=0.5), "up"),
        (pool(10.0, 10.8), DEFAULT_POLICY, "hold"),  # the default keeps 3/4 of the headroom
        (pool(10.0, 10.7), DEFAULT_POLICY, "up"),
        (pool(10.0, 11.0, static=4.0), T10, "down"),  # static covers 4 of the 11
        (pool(0.0, 0.0), T10, "hold"),  # nothing needed, nothing supplied
        (pool(0.0, 3.0), T10, "down"),
        (pool(5.0, 0.0, capacity=10.0), T10, "up"),
        (pool(10.0, 50.0, members=False), T10, "settle"),
        (pool(10.0, 11.5), ScalePolicy(tolerance=0.0), "down"),  # tolerance 0: any surplus acts
    ],
)
def test_pool_mode(figures: PoolFigures, policy: ScalePolicy, mode: Mode) -> None:
    assert pool_mode(policy, figures) == mode


# A pool that lets a target move the way its recommendation says (or holds work).
def step(current: int, rec: int, *, highest: int | None = None, lo: int = 0, hi: int = 100,
         held: bool = False, last: Move | None = None, now: float = 0.0,
         policy: ScalePolicy = DEFAULT_POLICY) -> TargetStep:  # fmt: skip
    if held:
        figures = pool(float(rec), float(current), capacity=rec - 0.5)
    elif rec > current:  # in service serves the demand; the supply is short of the headroom
        figures = pool(rec / 1.1, float(current), capacity=float(rec))
    else:
        figures = pool(rec / 1.1, float(current)) if current else pool(0.0, 0.0)
    t = TargetFigures(current, rec, lo, hi, () if highest is None else (highest,), last)
    return decide_pool(policy, figures, [t], now)[0]


@pytest.mark.parametrize(
    ("current", "rec", "highest", "lo", "hi", "expected", "reason"),
    [
        (5, 5, None, 0, 100, 5, "within-tolerance"),
        (5, 8, None, 0, 100, 8, "scale-up"),  # up at once
        (2, 30, None, 0, 100, 6, "step-limited"),  # bounded by max(4, 100 %)
        (20, 60, None, 0, 100, 40, "step-limited"),
        (20, 60, None, 0, 30, 30, "at-max"),  # ... and by max
        (20, 30, None, 0, 30, 30, "at-max"),  # resting on max
        (10, 3, None, 0, 100, 3, "scale-down"),  # down in one step by default
        (10, 3, 7, 0, 100, 7, "stabilized"),  # only to the window's highest
        (10, 3, 12, 0, 100, 10, "stabilized"),  # a higher one in the window: hold, never up
        (10, 3, None, 5, 100, 5, "at-min"),
        (50, 20, 25, 0, 20, 20, "at-max"),  # above a lowered max: to max at once
        (0, 0, None, 3, 10, 3, "at-min"),  # below min: to min at once
        (0, 50, None, 0, 100, 4, "step-limited"),  # from zero, the absolute step
    ],
)
def test_target_steps(current: int, rec: int, highest: int | None, lo: int, hi: int,
                      expected: int, reason: str) -> None:  # fmt: skip
    got = step(current, rec, highest=highest, lo=lo, hi=hi)
    assert (got.desired, got.reason) == (expected, reason)


def test_a_smaller_step_down_is_a_knob() -> None:
    slow = ScalePolicy(max_step_down_percent=10.0)
    got = step(40, 3, policy=slow)
    assert (got.desired, got.reason) == (36, "step-limited")


def test_held_work_goes_up_in_one_step_and_nothing_scales_down() -> None:
    assert (step(2, 42, held=True).desired, step(2, 42, held=True).reason) == (42, "held-work")
    assert step(10, 4, held=True).desired == 10  # held: no target scales down


def test_no_members_settles_to_min() -> None:
    t = TargetFigures(9, 9, 2, 20)
    got = decide_pool(DEFAULT_POLICY, pool(5.0, 36.0, members=False), [t], 0.0)[0]
    assert (got.desired, got.reason) == (2, "no-members")


UP, DOWN = Move(1000.0, 1), Move(1000.0, -1)


@pytest.mark.parametrize(
    ("current", "rec", "last", "now", "held", "expected"),
    [
        (10, 3, UP, 1299.0, False, 10),  # down within the window after an up: waits
        (10, 3, UP, 1300.0, False, 10),  # the window is closed: exactly 300 s later still waits
        (10, 3, UP, 1300.5, False, 3),  # the window has passed: down as usual
        (10, 3, DOWN, 1001.0, False, 3),  # down after down: no reversal
        (10, 14, DOWN, 1299.0, False, 10),  # up within the window after a down: waits
        (10, 14, DOWN, 1300.0, False, 10),
        (10, 14, DOWN, 1299.0, True, 14),  # ... unless held work takes it up: never waits
        (10, 14, DOWN, 1301.0, False, 14),
        (10, 14, UP, 1001.0, False, 14),  # up after up
        (10, 14, None, 0.0, False, 14),  # never moved
    ],
)
def test_no_reversal_within_the_window(
    current: int, rec: int, last: Move | None, now: float, held: bool, expected: int
) -> None:
    got = step(current, rec, held=held, last=last, now=now)
    assert got.desired == expected
    if expected == current and not held:
        assert got.reason == "no-reversal"


def test_reverses_reads_the_pools_window() -> None:
    short = ScalePolicy(scale_down_window_s=60.0)
    assert reverses(DEFAULT_POLICY, UP, -1, 1200.0)
    assert not reverses(short, UP, -1, 1200.0)
    assert not reverses(DEFAULT_POLICY, UP, 1, 1200.0)  # the same way is no reversal
    assert not reverses(DEFAULT_POLICY, None, -1, 1200.0)
    assert reverses(ScalePolicy(scale_down_window_s=0.0), UP, -1, 1000.0)  # the same instant
    assert not reverses(ScalePolicy(scale_down_window_s=0.0), UP, -1, 1000.5)
    assert guarding(UP, 300.0, 1300.0) == 1 and guarding(UP, 300.0, 1300.1) == 0


def test_move_after_records_only_a_change() -> None:
    assert move_after(None, 5, 5, 60.0) is None
    assert move_after(UP, 5, 5, 2000.0) is UP
    assert move_after(UP, 5, 3, 2000.0) == Move(2000.0, -1)
    assert move_after(None, 5, 9, 60.0) == Move(60.0, 1)


def test_plain_step_is_the_recommendation() -> None:
    assert plain_step(TargetFigures(5, 9, 0, 10), 0.0) == TargetStep(9, "scale-up", Move(0.0, 1))
    assert plain_step(TargetFigures(5, 2, 0, 10), 0.0).reason == "scale-down"
    assert plain_step(TargetFigures(5, 10, 0, 10), 0.0).reason == "at-max"


policies = st.builds(
    ScalePolicy,
    max_step_up=st.integers(1, 10),
    max_step_up_percent=st.floats(0, 300),
    scale_down_window_s=st.floats(0, 1000),
    max_step_down=st.integers(1, 10),
    max_step_down_percent=st.floats(0, 100),
    tolerance=st.floats(0, 1),
    headroom_kept=st.floats(0, 1),
)


@given(
    policies,
    st.floats(0, 1e4),
    st.floats(0, 1e4),
    st.floats(0, 1e4),
    st.lists(st.tuples(st.integers(0, 500), st.integers(0, 500)), min_size=1, max_size=4),
    st.lists(st.integers(0, 200), min_size=8, max_size=8),
    st.sampled_from([-1, 0, 1]),  # 0: never moved
    st.floats(0, 2000),
    st.booleans(),
)
def test_never_outside_bounds_nor_turned_around_within_the_window(
    policy: ScalePolicy, demand: float, supplied: float, capacity: float,
    counts: list[tuple[int, int]], bounds: list[int], direction: int, age: float, members: bool,
) -> None:  # fmt: skip
    last = Move(10_000.0 - age, direction) if direction else None
    figures = PoolFigures(demand, capacity, supplied, 0.0, 0.1, members)
    targets = []
    for k, (current, rec) in enumerate(counts):
        lo, hi = sorted(bounds[2 * k : 2 * k + 2])
        targets.append(TargetFigures(current, max(lo, min(hi, rec)), lo, hi, (), last))
    mode = pool_mode(policy, figures)
    for t, got in zip(targets, decide_pool(policy, figures, targets, 10_000.0), strict=True):
        assert t.low <= got.desired <= t.high
        assert got.reason in REASONS
        if not t.low <= t.current <= t.high:
            continue
        if mode != "settle":  # moves towards the recommendation, never past it
            assert min(t.current, t.recommended) <= got.desired <= max(t.current, t.recommended)
        if last is not None and age <= policy.scale_down_window_s and mode != "settle":
            if direction > 0:
                assert got.desired >= t.current  # no scale-down after a scale-up
            elif mode != "held":
                assert got.desired <= t.current  # no scale-up after a scale-down unless held
        if mode == "held":
            assert got.desired >= t.current  # held work: nothing scales down


def test_policy_is_a_frozen_value() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT_POLICY.tolerance = 0.5  # type: ignore[misc]
