"""The single-tick scale decision runs in the Rust kernel
(``arklow_pulumi.core._kernel.Sizings``); it must be the Python oracle's (``tests/reference_scaling.py``) for every input in the documented ranges and
their mixes (one target, several, none; demands 0 to 1e12 and odd ones, headrooms 0 to 100,
static capacities, units per replica 1e-6 to 1e12), and refuse whatever it cannot decide."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arklow_pulumi.core._kernel import Sizings
from arklow_pulumi.core.scaling import desired_for_pools, desired_replicas, pool_sizings
from arklow_pulumi.core.topology import GroupRef, ScaleTarget
from tests import reference_scaling as oracle
from tests.hypothesis_profiles import examples

ODD = [0.0, 5e-324, 1e-9, 0.1, 1 / 3, 1.0, 7.25, 1e6, 1e12]
DEMANDS = st.sampled_from(ODD) | st.floats(0, 1e7) | st.integers(0, 10_000).map(float)
HEADROOMS = st.sampled_from([0.0, 0.1, 0.2, 0.25, 1 / 3, 1.0, 100.0]) | st.floats(0, 100)
STATICS = st.sampled_from([0.0, 8.0, 40.0, 100.5, 1e12]) | st.floats(0, 1e6)
UPR = st.sampled_from([1e-6, 0.1, 0.5, 1.0, 1.1, 3.0, 8.0, 1 / 3, 1e-3, 1e6, 1e12]) | st.floats(
    1e-3, 1e4
)


@st.composite
def targets(draw: st.DrawFn) -> tuple[ScaleTarget, ...]:
    out = []
    for k in range(draw(st.integers(0, 4))):
        low = draw(st.integers(0, 20) | st.sampled_from([0, 1_000_000]))
        high = low + draw(st.integers(0, 60) | st.sampled_from([0, 1_000_000 - low]))
        out.append(ScaleTarget(f"t{k}", GroupRef("aws_asg", f"t{k}"), low, high, draw(UPR), low))
    return tuple(out)


@settings(max_examples=examples(3000), deadline=None)
@given(st.lists(st.tuples(DEMANDS, HEADROOMS, STATICS, targets()), max_size=6))
def test_the_kernel_decides_as_the_oracle(
    pools: list[tuple[float, float, float, tuple[ScaleTarget, ...]]],
) -> None:
    demands = [d for d, _h, _s, _t in pools]
    got = desired_for_pools(demands, pool_sizings((h, t, s) for _d, h, s, t in pools))
    expected = oracle.desired_for_pools(
        demands, [oracle.pool_sizing(h, t, s) for _d, h, s, t in pools]
    )
    assert got == expected
    for counts, (_d, _h, _s, ts) in zip(got, pools, strict=True):
        assert all(t.min_replicas <= c <= t.max_replicas for c, t in zip(counts, ts, strict=True))
        assert all(type(c) is int for c in counts)


def test_a_zero_supply_target_and_a_target_with_room() -> None:
    stuck = ScaleTarget("s", GroupRef("aws_asg", "s"), 0, 0, 8.0, 0)
    room = ScaleTarget("r", GroupRef("aws_asg", "r"), 1, 10, 8.0, 1)
    sizings = pool_sizings([(0.2, (stuck,), 0.0), (0.2, (room,), 4.0)])
    assert desired_for_pools([50.0, 50.0], sizings) == [(0,), (7,)]
    assert desired_replicas(50.0, 0.2, (room,), 4.0) == (7,)


@pytest.mark.parametrize(
    ("pools", "demands", "error"),
    [
        ([(1.1, 0.0, [(4.0, 1, 2)])], [math.nan], ValueError),
        ([(1.1, 0.0, [(4.0, 1, 2)])], [math.inf], ValueError),
        ([(1.1, 0.0, [(4.0, 1, 2)])], [-1.0], ValueError),
        ([(1.1, 0.0, [(4.0, 1, 2)])], [1.0, 2.0], ValueError),
        ([(1.1, 0.0, [(4.0, 1, 2)])], ["1"], TypeError),
        ([(1.1, 0.0, [(4.0, 1, 2)])], "1", TypeError),
        ([(1.1, 0.0, [(4.0, 3, 2)])], [1.0], ValueError),
        ([(1.1, 0.0, [(0.0, 1, 2)])], [1.0], ValueError),
        ([(1.1, 0.0, [(math.nan, 1, 2)])], [1.0], ValueError),
        ([(1.1, 0.0, [(4.0, -1, 2)])], [1.0], ValueError),
        ([(1.1, 0.0, [(4.0, 1, 2**70)])], [1.0], TypeError),
        ([(1.1, 0.0, [(4.0, 1.5, 2)])], [1.0], TypeError),
        ([(0.5, 0.0, [(4.0, 1, 2)])], [1.0], ValueError),
        ([(math.inf, 0.0, [(4.0, 1, 2)])], [1.0], ValueError),
        ([(1.1, -1.0, [(4.0, 1, 2)])], [1.0], ValueError),
        ([(1.1, 0.0)], [1.0], TypeError),
        ([(1.1, 0.0, [(4.0, 1)])], [1.0], TypeError),
        ([(1.1, 0.0, 5)], [1.0], TypeError),
        (5, [1.0], TypeError),
    ],
)
def test_what_the_kernel_cannot_decide_is_refused(pools: Any, demands: Any, error: type) -> None:
    with pytest.raises(error):
        Sizings(pools).desired(demands)


@settings(max_examples=examples(500), deadline=None)
@given(
    st.lists(
        st.one_of(st.none(), st.floats(), st.integers(), st.text(), st.tuples(st.floats())),
        max_size=4,
    )
)
def test_hostile_pools_raise_and_never_crash(items: list[Any]) -> None:
    """Anything but (units, min, max) triples in range is a Python exception, never a crash."""
    try:
        counts = Sizings([(1.1, 0.0, items)]).desired([1.0])
    except (TypeError, ValueError):
        return
    assert items == [] and counts == [()]
