"""The Rust filling kernel is the Python oracle (``tests/reference_filling.py``), bit for bit.

Both ``Network.fill`` and ``Network.allocate`` (allocation, both admission fillings, pool demand)
are compared as ``float.hex`` over random coupled problems across the whole documented ranges
(weights and costs 1e-6..1e6, amounts 0..1e12, their extremes mixed), with many ties, zeros and
subnormal caps; and over the wider domain the kernel accepts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from arklow_pulumi.core._kernel import Network
from tests import reference_filling as oracle
from tests.hypothesis_profiles import examples

Problem = tuple[
    list[float], list[float], list[tuple[tuple[int, float], ...]], list[float], list[float]
]

EXTREME_FACTORS = [1e-6, 1e-3, 1 / 3, 0.5, 1.0, 2.0, 7.0, 1e3, 1e6]
FACTORS = st.sampled_from(EXTREME_FACTORS) | st.floats(1e-6, 1e6) | st.integers(-6, 6).map(lambda k: 10.0**k)  # fmt: skip
EXTREME_AMOUNTS = [0.0, 5e-324, 1e-300, 1e-9, 0.1, 1 / 3, 1.0, 7.0, 20.0, 1e6, 1e9, 1e12]
AMOUNTS = st.sampled_from(EXTREME_AMOUNTS) | st.floats(0, 1e12) | st.floats(0, 50, width=16)
CAPACITIES = st.just(0.0) | st.sampled_from([1e-9, 1.0, 20.0, 1e6, 1e12]) | st.floats(1e-9, 1e12)
WIDE_FACTORS = st.floats(1e-30, 1e30)
WIDE_AMOUNTS = st.just(0.0) | st.floats(0, 1e60)
LIMITS = AMOUNTS | st.just(math.inf)  # +inf: no limit (the simulator's scaling lanes)


@st.composite
def problems(
    draw: st.DrawFn,
    factors: st.SearchStrategy[float] = FACTORS,
    amounts: st.SearchStrategy[float] = AMOUNTS,
    capacities: st.SearchStrategy[float] = CAPACITIES,
    max_lanes: int = 24,
    limits_from: st.SearchStrategy[float] | None = None,
) -> Problem:
    m = draw(st.integers(1, 6))
    n = draw(st.integers(1, max_lanes))
    weights = [draw(factors) for _ in range(n)]
    limits = [draw(amounts if limits_from is None else limits_from) for _ in range(n)]
    lane_pools = []
    for _ in range(n):
        pools = draw(st.lists(st.integers(0, m - 1), max_size=min(m, 3), unique=True))
        lane_pools.append(tuple((p, draw(factors)) for p in pools))
    demands = [draw(st.just(0.0) | amounts) for _ in range(n)]
    capacity = [draw(capacities) for _ in range(m)]
    return weights, limits, lane_pools, demands, capacity


def hexes(values: Sequence[float]) -> list[str]:
    assert all(type(x) is float for x in values)
    return [x.hex() for x in values]


def same_fill(problem: Problem) -> None:
    weights, limits, lane_pools, demands, capacity = problem
    net = Network(weights, limits, lane_pools, len(capacity))
    got = net.fill(demands, capacity)
    want = oracle.fill(demands, weights, lane_pools, capacity)
    assert hexes(got.allocation) == hexes(want.allocation)
    assert got.saturated == want.saturated
    assert hexes(got.used) == hexes(want.used)


def same_allocate(problem: Problem, admission: bool = True) -> None:
    weights, limits, lane_pools, demands, capacity = problem
    net = Network(weights, limits, lane_pools, len(capacity))
    got = net.allocate(demands, capacity, admission)
    want = oracle.allocate(weights, limits, lane_pools, demands, capacity, admission)
    named = (got.caps, got.allocation, got.admission, got.pool_demand)
    assert [hexes(column) for column in named] == [hexes(column) for column in want]


@settings(max_examples=examples(3000), deadline=None)
@given(problems())
def test_fill_is_the_oracle_bit_for_bit(problem: Problem) -> None:
    same_fill(problem)


@settings(max_examples=examples(1500), deadline=None)
@given(problems(), st.booleans())
def test_allocate_is_the_oracle_bit_for_bit(problem: Problem, admission: bool) -> None:
    same_allocate(problem, admission)


@settings(max_examples=examples(500), deadline=None)
@given(problems(limits_from=LIMITS), st.booleans())
def test_allocate_without_limits_is_the_oracle_bit_for_bit(
    problem: Problem, admission: bool
) -> None:
    same_allocate(problem, admission)


@settings(max_examples=examples(500), deadline=None)
@given(
    problems(WIDE_FACTORS, WIDE_AMOUNTS, WIDE_AMOUNTS, limits_from=WIDE_AMOUNTS | st.just(math.inf))
)
def test_the_whole_domain_the_kernel_accepts(problem: Problem) -> None:
    same_fill(problem)
    same_allocate(problem)


@settings(max_examples=examples(1500), deadline=None)
@given(
    level=st.sampled_from([1e-9, 1 / 3, 1.0, 7.25, 1e3]) | st.floats(1e-6, 1e3),
    scales=st.lists(st.integers(-3, 3), min_size=1, max_size=30),
    m=st.integers(1, 4),
    cost=st.sampled_from([0.1, 1 / 3, 1.0, 0.7]),
    capacity=st.sampled_from([0.0, 1e-9, 1.0, 10.0]) | st.integers(0, 100).map(float),
)
def test_many_ties(level: float, scales: list[int], m: int, cost: float, capacity: float) -> None:
    """Caps reached at the same level with different weights (powers of two, so the levels are
    equal exactly), pools saturating at the same level: the order in which tied lanes freeze
    decides how the pools' sums round."""
    weights = [2.0**k for k in scales]
    caps = [level * w for w in weights]
    lane_pools = [tuple((p, cost * (1 + p)) for p in range(m) if (i + p) % 2 == 0) for i in range(len(caps))]  # fmt: skip
    same_fill((weights, caps, lane_pools, caps, [capacity] * m))


@settings(max_examples=examples(300), deadline=None)
@given(
    heavy=st.lists(st.sampled_from([1e6, 1e5, 3e5]), min_size=1, max_size=40),
    light=st.lists(st.sampled_from([1e-6, 1e-5, 3e-6]), min_size=1, max_size=40),
    capacity=st.sampled_from([1e-9, 1.0, 20.0, 1e12]),
)
def test_many_heavy_lanes_freeze_before_light_ones(
    heavy: list[float], light: list[float], capacity: float
) -> None:
    """The cancellation case at scale: heavy lanes (weight x cost up to 1e12) held at 0 by a
    pool of their own, light ones (down to 1e-12) sharing a pool with them."""
    weights = heavy + light
    lane_pools = [((0, w), (1, 1.0)) for w in heavy] + [((0, w),) for w in light]
    caps = [7.0] * len(heavy) + [1e12] * len(light)
    same_fill((weights, caps, lane_pools, caps, [capacity, 0.0]))
    same_allocate((weights, caps, lane_pools, caps, [capacity, 0.0]))


def test_the_kernel_is_the_one_compiled_part_and_the_core_uses_it() -> None:
    """No fallback: the core's filling is the Rust module's, compiled into the package itself
    (``arklow_pulumi.core._kernel``), and the package ships no other compiled file and no C."""
    import importlib.machinery
    from pathlib import Path

    import arklow_pulumi
    from arklow_pulumi.core import _kernel, filling

    assert filling.Network is _kernel.Network
    assert _kernel.__file__ is not None
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    assert _kernel.__file__.endswith(suffixes)
    package = Path(arklow_pulumi.__file__).parent
    compiled = [p for p in package.rglob("*") if p.name.endswith((*suffixes, ".c", ".pyd"))]
    assert [p.name.split(".")[0] for p in compiled] == ["_kernel"]
