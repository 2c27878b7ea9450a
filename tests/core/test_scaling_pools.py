"""``desired_for_pools``, the tick's decision for all its pools at once, is ``desired_replicas``
pool by pool: the same counts for every input (one target, several, none; odd demands, headrooms,
static capacities and units per replica), or the same error."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from arklow_pulumi.core.scaling import desired_for_pools, desired_replicas, pool_sizing
from arklow_pulumi.core.topology import GroupRef, ScaleTarget

ODD = [0.0, -0.0, 1e-300, 5e-324, 1e-9, 0.1, 1 / 3, 1.0, 7.25, 1e12, 1e300, math.inf, math.nan]
DEMANDS = (
    st.sampled_from([*ODD, -1.0, 3, 0])
    | st.floats(0, 1e7)
    | st.integers(0, 10_000).map(float)
    | st.floats(allow_nan=True, allow_infinity=True)
)
HEADROOMS = st.sampled_from([0.0, 0.1, 0.2, 0.25, 1 / 3, 1.0]) | st.floats(0, 10)
STATICS = st.sampled_from([0.0, 8.0, 40.0, 100.5, 1e12]) | st.floats(0, 1e6)
UPR = st.sampled_from([0.1, 0.5, 1.0, 1.1, 3.0, 8.0, 1 / 3, 1e-3, 1e6]) | st.floats(1e-3, 1e4)


@st.composite
def targets(draw: st.DrawFn) -> tuple[ScaleTarget, ...]:
    out = []
    for k in range(draw(st.integers(0, 3))):
        low = draw(st.integers(0, 20))
        high = low + draw(st.integers(0, 60))
        upr = draw(UPR)
        out.append(ScaleTarget(f"t{k}", GroupRef("aws_asg", f"t{k}"), low, high, upr, low))
    return tuple(out)


def outcome(call: Any) -> Any:
    try:
        return call()
    except (ValueError, OverflowError, ZeroDivisionError) as e:
        return type(e).__name__


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.tuples(DEMANDS, HEADROOMS, STATICS, targets()), max_size=6))
def test_every_pool_is_desired_replicas(
    pools: list[tuple[float, float, float, tuple[ScaleTarget, ...]]],
) -> None:
    demands = [d for d, _h, _s, _t in pools]
    plans = [pool_sizing(h, t, s) for _d, h, s, t in pools]
    one_by_one = [outcome(lambda p=p: desired_replicas(p[0], p[1], p[3], p[2])) for p in pools]
    if all(isinstance(r, tuple) for r in one_by_one):
        assert desired_for_pools(demands, plans) == one_by_one
    for demand, plan, expected in zip(demands, plans, one_by_one, strict=True):
        got = outcome(lambda d=demand, p=plan: desired_for_pools([d], [p])[0])
        assert got == expected
        assert type(got) is type(expected)
        if isinstance(got, tuple):
            assert [type(c) for c in got] == [type(c) for c in expected]


def test_a_zero_supply_target_and_a_target_with_room() -> None:
    stuck = ScaleTarget("s", GroupRef("aws_asg", "s"), 0, 0, 8.0, 0)
    room = ScaleTarget("r", GroupRef("aws_asg", "r"), 1, 10, 8.0, 1)
    plans = [pool_sizing(0.2, (stuck,), 0.0), pool_sizing(0.2, (room,), 4.0)]
    assert desired_for_pools([50.0, 50.0], plans) == [(0,), (7,)]
    assert desired_replicas(50.0, 0.2, (room,), 4.0) == (7,)
