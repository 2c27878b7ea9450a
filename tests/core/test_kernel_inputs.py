"""The filling kernel refuses what it cannot fill, with a Python exception, never a crash or a hang.

Hostile inputs through every entry point: wrong types, lengths that disagree, pool indices out of
range, negative, NaN and infinite numbers, weights and costs not > 0, strings, iterables that
change while they are read (items whose ``__float__`` grows or empties the list being read),
generators, and huge pool counts. Each must raise ``ValueError`` or ``TypeError``, or be
accepted and filled like its plain copy.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arklow_pulumi.core import _kernel
from arklow_pulumi.core._kernel import Allocated, Filled, Network
from tests import reference_filling as oracle
from tests.hypothesis_profiles import examples


def filled(got: Filled) -> tuple[list[float], list[bool], list[float]]:
    """A fill's named results, in order."""
    return got.allocation, got.saturated, got.used


def columns(got: Allocated) -> tuple[list[float], list[float], list[float], list[float]]:
    """An allocate's named results, in order."""
    return got.caps, got.allocation, got.admission, got.pool_demand


REFUSED = (ValueError, TypeError)


class Opaque:
    """Neither a number nor anything like one, with one repr in every process (the test ids are
    reprs, and the workers of ``pytest -n`` must collect the same ones)."""

    def __repr__(self) -> str:
        return "Opaque()"


BAD_NUMBERS: list[Any] = [
    math.nan, math.inf, -math.inf, -1.0, -1e-300, 1e61, 10**400, "1", b"1", None, 1j, [1.0], Opaque()
]  # fmt: skip
BAD_FACTORS: list[Any] = [*BAD_NUMBERS, 0.0, -0.0, 1e-31, 1e31, 0]
UNLIMITED = (math.inf, 1e61)  # refused as demands and capacities, a cap or limit may be anything


def good() -> tuple[list[float], list[float], list[tuple[tuple[int, float], ...]], int]:
    return [1.0, 2.0], [5.0, 5.0], [((0, 1.0),), ((0, 2.0), (1, 1.0))], 2


def test_the_module_states_its_domain() -> None:
    assert _kernel.DOMAIN_MIN_FACTOR == 1e-30 and _kernel.DOMAIN_MAX_FACTOR == 1e30
    assert _kernel.MAX_AMOUNT == 1e60 and _kernel.MAX_POOLS == 1 << 22


@pytest.mark.parametrize("bad", BAD_FACTORS, ids=repr)
def test_bad_weights_and_costs_are_refused(bad: Any) -> None:
    weights, limits, lane_pools, m = good()
    with pytest.raises(REFUSED):
        Network([1.0, bad], limits, lane_pools, m)
    with pytest.raises(REFUSED):
        Network(weights, limits, [((0, 1.0),), ((0, bad),)], m)


@pytest.mark.parametrize("bad", BAD_NUMBERS, ids=repr)
def test_bad_amounts_are_refused(bad: Any) -> None:
    weights, limits, lane_pools, m = good()
    net = Network(weights, limits, lane_pools, m)
    with pytest.raises(REFUSED):
        net.allocate([1.0, bad], [1.0, 1.0])
    for call in (net.fill, net.allocate):
        with pytest.raises(REFUSED):
            call([1.0, 1.0], [bad, 1.0])
    if bad in UNLIMITED:
        Network(weights, [5.0, bad], lane_pools, m).allocate([1.0, 1.0], [1.0, 1.0])
        net.fill([1.0, bad], [1.0, 1.0])
        return
    with pytest.raises(REFUSED):
        Network(weights, [5.0, bad], lane_pools, m)
    with pytest.raises(REFUSED):
        net.fill([1.0, bad], [1.0, 1.0])


def test_a_lane_without_a_limit_is_held_by_its_pools_or_gets_its_cap() -> None:
    """+inf as a limit or a cap means no limit: the lane freezes when a pool it draws on
    saturates, or at its cap when it draws on none (the simulator's scaling lanes)."""
    net = Network([1.0, 1.0], [math.inf, math.inf], [((0, 2.0),), ()], 1)
    busy = ([3.0, 4.0], [3.0, 4.0], [5.0, math.inf], [6.0])
    idle = ([0.0, 0.0], [0.0, 0.0], [5.0, math.inf], [0.0])
    assert columns(net.allocate([3.0, 4.0], [10.0])) == busy
    assert columns(net.allocate([0.0, 0.0], [10.0])) == idle
    assert filled(net.fill([math.inf, math.inf], [10.0])) == ([5.0, math.inf], [True], [10.0])


@pytest.mark.parametrize(
    "lane_pools",
    [
        [((0, 1.0),), ((2, 1.0),)],  # pool out of range
        [((0, 1.0),), ((-1, 1.0),)],
        [((0, 1.0),), ((2**70, 1.0),)],
        [((0, 1.0),), ((1.0, 1.0),)],  # a float index
        [((0, 1.0),), (("0", 1.0),)],
        [((0, 1.0),), ((0, 1.0, 2.0),)],  # not a pair
        [((0, 1.0),), ((0,),)],
        [((0, 1.0),), (0, 1.0)],  # a pair, not a list of pairs
        [((0, 1.0),), "01"],
        [((0, 1.0),), None],
        [((0, 1.0),)],  # too few lanes
        [((0, 1.0),), (), ()],  # too many
        None,
        "lanes",
    ],
    ids=repr,
)
def test_bad_incidences_are_refused(lane_pools: Any) -> None:
    weights, limits, _, m = good()
    with pytest.raises(REFUSED):
        Network(weights, limits, lane_pools, m)


@pytest.mark.parametrize("pools", [-1, 2**22 + 1, 2**64, 1.5, "2", None, math.nan])
def test_bad_pool_counts_are_refused(pools: Any) -> None:
    weights, limits, lane_pools, _ = good()
    with pytest.raises(REFUSED):
        Network(weights, limits, lane_pools, pools)


def test_lengths_that_disagree_are_refused() -> None:
    weights, limits, lane_pools, m = good()
    with pytest.raises(ValueError):
        Network(weights, [5.0], lane_pools, m)
    with pytest.raises(ValueError):
        Network([1.0], limits, lane_pools, m)
    net = Network(weights, limits, lane_pools, m)
    for call in (net.fill, net.allocate):
        with pytest.raises(ValueError):
            call([1.0], [1.0, 1.0])
        with pytest.raises(ValueError):
            call([1.0, 1.0, 1.0], [1.0, 1.0])
        with pytest.raises(ValueError):
            call([1.0, 1.0], [1.0])
        with pytest.raises(ValueError):
            call([1.0, 1.0], [1.0, 1.0, 1.0])
        with pytest.raises(TypeError):
            call(1.0, [1.0, 1.0])
        with pytest.raises(TypeError):
            call("12", [1.0, 1.0])
    with pytest.raises(TypeError):
        net.allocate([1.0, 1.0], [1.0, 1.0], "yes")  # type: ignore[arg-type]


class Shifty:
    """A number whose conversion changes the list it sits in while the kernel reads it."""

    def __init__(self, home: list[Any], grow: bool) -> None:
        self.home, self.grow = home, grow

    def __float__(self) -> float:
        if self.grow:
            self.home.extend([1.0] * 100)
        else:
            self.home.clear()
        return 1.0


def test_sequences_that_change_while_read_are_read_once() -> None:
    """One pass over each input into an owned copy: a list that grows while it is read is
    copied as read (then too long: refused); one emptied while read stops there."""
    weights, limits, lane_pools, m = good()
    net = Network(weights, limits, lane_pools, m)
    caps: list[Any] = [1.0]
    caps.append(Shifty(caps, grow=True))
    with pytest.raises(ValueError, match=r"caps: 102 items for 2 lanes"):
        net.fill(caps, [1.0, 1.0])
    caps = [1.0]
    caps.append(Shifty(caps, grow=False))
    assert filled(net.fill(caps, [1.0, 1.0])) == filled(net.fill([1.0, 1.0], [1.0, 1.0]))
    caps = [Shifty([], grow=False), 1.0]
    caps[0].home = caps
    with pytest.raises(ValueError, match=r"caps: 1 items for 2 lanes"):
        net.fill(caps, [1.0, 1.0])


def test_any_iterable_is_read_once() -> None:
    weights, limits, lane_pools, m = good()
    net = Network(iter(weights), (x for x in limits), map(tuple, lane_pools), m)
    assert (net.lanes, net.pools) == (2, 2)
    got = net.fill(iter([1.0, 2.0]), (c for c in [2.0, 2.0]))
    assert filled(got) == filled(net.fill([1.0, 2.0], [2.0, 2.0]))


def test_ints_bools_and_float_subclasses_read_as_floats() -> None:
    net = Network([1, True], [5, 5.0], [((0, 1),), ((True, 2),)], 2)
    alloc, saturated, used = filled(net.fill([1, 2], [2, 2]))
    assert all(type(x) is float for x in alloc + used)
    assert (alloc, saturated, used) == filled(net.fill([1.0, 2.0], [2.0, 2.0]))


def test_negative_zero_reads_as_zero() -> None:
    net = Network([1.0], [-0.0], [((0, 1.0),)], 1)
    assert [x.hex() for x in net.allocate([-0.0], [-0.0]).admission] == ["0x0.0p+0"]


def test_empty_networks() -> None:
    assert columns(Network([], [], [], 0).allocate([], [])) == ([], [], [], [])
    assert filled(Network([], [], [], 3).fill([], [1.0, 0.0, 2.0])) == ([], [False] * 3, [0.0] * 3)
    assert columns(Network([1.0], [1.0], [()], 0).allocate([4.0], [])) == ([1.0], [1.0], [1.0], [])


JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=3),
    st.binary(max_size=3),
    st.complex_numbers(max_magnitude=2),
)
NUMBERS = st.floats(allow_nan=True, allow_infinity=True) | st.integers(-5, 5) | JUNK
VALUES = st.recursive(NUMBERS, lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner), max_leaves=8)  # fmt: skip


@settings(max_examples=examples(2000), deadline=None)
@given(
    weights=st.lists(NUMBERS, max_size=5) | VALUES,
    limits=st.lists(NUMBERS, max_size=5) | VALUES,
    lane_pools=st.lists(st.lists(st.tuples(NUMBERS, NUMBERS) | VALUES, max_size=3), max_size=5)
    | VALUES,
    pools=NUMBERS,
    caps=st.lists(NUMBERS, max_size=5) | VALUES,
    capacity=st.lists(NUMBERS, max_size=5) | VALUES,
    admission=st.booleans(),
)
def test_hostile_inputs_raise_or_fill_like_the_oracle(
    weights: Any,
    limits: Any,
    lane_pools: Any,
    pools: Any,
    caps: Any,
    capacity: Any,
    admission: bool,
) -> None:
    try:
        net = Network(weights, limits, lane_pools, pools)
    except REFUSED:
        return
    for entry in ("fill", "allocate"):
        try:
            if entry == "fill":
                got: Any = filled(net.fill(caps, capacity))
            else:
                got = columns(net.allocate(caps, capacity, admission))
        except REFUSED:
            continue
        # accepted: then every input was a list of in-range numbers, filled as the oracle fills
        plain = [[(int(p), float(c)) for p, c in lane] for lane in lane_pools]
        ws, ls = [float(w) for w in weights], [float(x) + 0.0 for x in limits]
        cs, ks = [float(x) + 0.0 for x in caps], [float(x) + 0.0 for x in capacity]
        if entry == "fill":
            want = oracle.fill(cs, ws, plain, ks)
            assert repr(got) == repr((want.allocation, want.saturated, want.used))
        else:
            assert repr(got) == repr(oracle.allocate(ws, ls, plain, cs, ks, admission))


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.floats(1e-6, 1e6), min_size=1, max_size=50), st.data())
def test_a_bad_value_anywhere_is_refused(weights: list[float], data: st.DataObject) -> None:
    n = len(weights)
    limits = [1.0] * n
    lane_pools = [((0, 1.0),)] * n
    k = data.draw(st.integers(0, n - 1))
    bad = data.draw(st.sampled_from(BAD_FACTORS))
    spoilt = list(weights)
    spoilt[k] = bad
    with pytest.raises(REFUSED):
        Network(spoilt, limits, lane_pools, 1)
    net = Network(weights, limits, lane_pools, 1)
    caps = [1.0] * n
    caps[k] = data.draw(st.sampled_from(BAD_NUMBERS))
    with pytest.raises(REFUSED):
        net.allocate(caps, [1.0])


def test_demands_above_the_given_bound_are_refused() -> None:
    net = Network([1.0], [5.0], [((0, 1.0),)], 1)
    assert net.allocate([2.0], [1.0], True, 2.0).allocation == [1.0]
    with pytest.raises(ValueError):
        net.allocate([2.5], [1.0], True, 2.0)
    for bad in (math.nan, -1.0, *UNLIMITED):
        with pytest.raises(ValueError):
            net.allocate([1.0], [1.0], True, bad)


class Raising:
    def __float__(self) -> float:
        raise KeyError("mine")


def test_an_error_raised_while_reading_a_number_goes_through() -> None:
    net = Network([1.0], [5.0], [((0, 1.0),)], 1)
    with pytest.raises(KeyError):
        net.fill([Raising()], [1.0])
