"""A pool's only target takes a shorter path through ``desired_replicas``: it must give the
general path's count for every input (the simulator's results are compared bit for bit)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from arklow_pulumi.core.scaling import _one_target, _several_targets, target_units
from arklow_pulumi.core.topology import GroupRef, ScaleTarget

units_per_replica = st.one_of(
    st.sampled_from([0.1, 0.5, 1.0, 1.1, 3.0, 7.0, 8.0, 16.0, 1 / 3]),
    st.floats(min_value=1e-3, max_value=1e4, allow_nan=False),
)


@given(
    demand=st.one_of(
        st.integers(min_value=0, max_value=10_000).map(float),
        st.floats(min_value=0.0, max_value=1e7, allow_nan=False),
    ),
    headroom=st.sampled_from([0.0, 0.1, 0.2, 0.25, 1 / 3]),
    static=st.sampled_from([0.0, 8.0, 40.0, 100.5]),
    low=st.integers(min_value=0, max_value=20),
    extra=st.integers(min_value=0, max_value=60),
    upr=units_per_replica,
)
def test_one_target_is_the_general_path(
    demand: float, headroom: float, static: float, low: int, extra: int, upr: float
) -> None:
    target = ScaleTarget("t", GroupRef("aws_asg", "t"), low, low + extra, upr, low)
    units = target_units(demand, headroom, static)
    assert _one_target(units, target) == _several_targets(units, (target,))[0]


def test_zero_supply_target() -> None:
    target = ScaleTarget("t", GroupRef("aws_asg", "t"), 0, 0, 8.0, 0)
    for units in (0.0, 5.0):
        assert _one_target(units, target) == _several_targets(units, (target,))[0] == 0
