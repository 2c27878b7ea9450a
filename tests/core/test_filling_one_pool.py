"""The one-pool filling is the general progressive filling, bit for bit.

``progressive_fill`` takes a shorter path when one pool is all there is; it must give the same
allocation, saturation and usage as the general algorithm to the last bit (the simulator's golden
outputs and the controller's decisions depend on it), whatever the caps, weights, costs and
capacity, ties and zeros included.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from arklow_pulumi.core.filling import _fill, _fill_one_pool, progressive_fill

VALUES = st.sampled_from([0.0, 0.1, 0.5, 1.0, 1.5, 2.0, 3.0, 7.25, 10.0, 1e-6, 1e6, 1 / 3])


@settings(max_examples=3000, deadline=None)
@given(
    lanes=st.lists(
        st.tuples(VALUES | st.floats(0, 100), VALUES.filter(bool), VALUES.filter(bool)),
        min_size=1,
        max_size=12,
    ),
    capacity=VALUES | st.floats(0, 500),
)
def test_one_pool_filling_is_the_general_one_bit_for_bit(
    lanes: list[tuple[float, float, float]], capacity: float
) -> None:
    caps = [cap for cap, _, _ in lanes]
    weights = [w for _, w, _ in lanes]
    lane_pools = [((0, c),) for _, _, c in lanes]
    pool_lanes = [tuple((i, c) for i, (_, _, c) in enumerate(lanes))]
    general = _fill(caps, weights, lane_pools, pool_lanes, [capacity])
    short = _fill_one_pool(caps, weights, lane_pools, capacity)
    assert repr(short) == repr(general)
    assert repr(progressive_fill(caps, weights, lane_pools, pool_lanes, [capacity])) == repr(
        general
    )
