"""The compiled filling kernel is the Python reference, bit for bit.

``progressive_fill`` runs ``_filling.c`` when it is built; it must give the same allocation,
saturation and usage as :func:`arklow_pulumi.core.filling._fill` to the last bit (compared as
``float.hex``, types included: a lane frozen at its cap holds the cap object itself), over
random coupled topologies: caps 0, tiny and huge values, many ties, one pool, lanes without
pools, costs 0. The whole engine (``allocate``) is compared the same way with the kernel and
with the Python forced. And the kernel must be there: this machine and CI build it at install,
so a test fails if the package silently fell back to the Python.
"""

from __future__ import annotations

import importlib.machinery
import os
import pickle
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arklow_pulumi.core import filling
from arklow_pulumi.core.allocating import (
    Allocation,
    CompiledTopology,
    LaneResults,
    _compile_lanes,
    _fillable,
    _pool_demand,
    allocate,
    compile_topology,
)
from arklow_pulumi.reading.spec import build_topology
from arklow_pulumi.core.filling import Filling, _fill, pack, progressive_fill
from arklow_pulumi.reading.parsing import parse_topology
from arklow_pulumi.core.topology import Destination, Lane, Pool, Topology, frozen_map

FORCED_PURE = os.environ.get("ARKLOW_PURE_PYTHON") == "1"
needs_native = pytest.mark.skipif(FORCED_PURE, reason="ARKLOW_PURE_PYTHON=1 forces the Python")

# Values where rounding, ties, underflow and saturation order are all exercised.
SPECIAL = [0.0, 1e-300, 1e-12, 1e-9, 1e-6, 0.1, 1 / 3, 0.5, 1.0, 1.5, 2.0, 3.0, 7.25, 10.0]
SPECIAL += [1e6, 1e9, 1e12, 2.0**-1074, 0.30000000000000004]
AMOUNTS = st.sampled_from(SPECIAL) | st.floats(0, 1e12) | st.floats(0, 50, width=16)
FACTORS = st.sampled_from([1e-6, 0.1, 0.5, 1.0, 1.0, 2.0, 3.0, 1 / 3, 1e6]) | st.floats(1e-6, 1e6)
COSTS = FACTORS | st.just(0.0)


def bits(f: Filling) -> tuple[list[str], list[str], list[bool], list[str]]:
    allocation = [x.hex() if type(x) is float else repr(x) for x in f.allocation]
    types = [type(x).__name__ for x in f.allocation + f.used]
    assert all(type(s) is bool for s in f.saturated)
    return allocation, types, f.saturated, [x.hex() for x in f.used]


@st.composite
def problems(
    draw: st.DrawFn,
) -> tuple[list[float], list[float], list[tuple[tuple[int, float], ...]], list[float]]:
    m = draw(st.integers(1, 6))
    n = draw(st.integers(1, 24))
    caps = [draw(AMOUNTS) for _ in range(n)]
    weights = [draw(FACTORS) for _ in range(n)]
    lane_pools = []
    for _ in range(n):
        pools = draw(st.lists(st.integers(0, m - 1), max_size=min(m, 3), unique=True))
        lane_pools.append(tuple((p, draw(COSTS)) for p in pools))
    capacity = [draw(AMOUNTS) for _ in range(m)]
    return caps, weights, lane_pools, capacity


def pool_lanes_of(
    lane_pools: Sequence[Sequence[tuple[int, float]]], m: int
) -> list[tuple[tuple[int, float], ...]]:
    lanes: list[list[tuple[int, float]]] = [[] for _ in range(m)]
    for i, incidences in enumerate(lane_pools):
        for p, c in incidences:
            lanes[p].append((i, c))
    return [tuple(x) for x in lanes]


def both(
    caps: Sequence[float],
    weights: Sequence[float],
    lane_pools: Sequence[Sequence[tuple[int, float]]],
    capacity: Sequence[float],
) -> tuple[Filling, Filling]:
    pool_lanes = pool_lanes_of(lane_pools, len(capacity))
    reference = _fill(caps, weights, lane_pools, pool_lanes, capacity)
    packed = pack(weights, lane_pools, pool_lanes, len(capacity))
    assert packed is not None
    native = progressive_fill(caps, weights, lane_pools, pool_lanes, capacity, packed)
    return reference, native


@needs_native
def test_the_native_kernel_is_loaded() -> None:
    assert filling.NATIVE
    from arklow_pulumi.core import _filling

    assert _filling.__file__.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


def test_pure_python_is_forced_by_the_environment() -> None:
    code = "import arklow_pulumi.core.filling as f; print(f.NATIVE)"
    env = {**os.environ, "ARKLOW_PURE_PYTHON": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


@needs_native
@settings(max_examples=4000, deadline=None)
@given(problems())
def test_native_filling_is_the_python_one_bit_for_bit(
    problem: tuple[list[float], list[float], list[tuple[tuple[int, float], ...]], list[float]],
) -> None:
    reference, native = both(*problem)
    assert bits(native) == bits(reference)


@needs_native
@settings(max_examples=1500, deadline=None)
@given(
    level=st.sampled_from(SPECIAL[1:]) | st.floats(1e-6, 1e3),
    scales=st.lists(st.integers(-3, 3), min_size=1, max_size=30),
    m=st.integers(1, 4),
    cost=st.sampled_from([0.1, 1 / 3, 1.0, 0.7]),
    capacity=st.sampled_from(SPECIAL) | st.integers(0, 100).map(float),
)
def test_many_ties(level: float, scales: list[int], m: int, cost: float, capacity: float) -> None:
    """Lanes whose caps are reached at the same level with different weights (powers of two, so
    the levels are equal exactly), pools that saturate at the same level: the order in which
    tied lanes freeze decides how the pools' sums round."""
    weights = [2.0**k for k in scales]
    caps = [level * w for w in weights]
    lane_pools = [tuple((p, cost * (1 + p)) for p in range(m) if (i + p) % 2 == 0) for i in range(len(caps))]  # fmt: skip
    reference, native = both(caps, weights, lane_pools, [capacity] * m)
    assert bits(native) == bits(reference)


@needs_native
@settings(max_examples=500, deadline=None)
@given(problems())
def test_integer_caps_and_capacity_are_kept_as_the_python_keeps_them(
    problem: tuple[list[float], list[float], list[tuple[tuple[int, float], ...]], list[float]],
) -> None:
    caps, weights, lane_pools, capacity = problem
    int_caps: list[Any] = [int(c) for c in caps]
    int_capacity: list[Any] = [int(c) for c in capacity]
    reference, native = both(int_caps, weights, lane_pools, int_capacity)
    assert bits(native) == bits(reference)


@needs_native
def test_a_zero_weight_raises_as_the_python_does() -> None:
    lane_pools = [((0, 1.0),), ((0, 1.0),)]
    packed = pack([1.0, 0.0], lane_pools, pool_lanes_of(lane_pools, 1), 1)
    assert packed is not None
    with pytest.raises(ZeroDivisionError):
        progressive_fill(
            [1.0, 2.0], [1.0, 0.0], lane_pools, pool_lanes_of(lane_pools, 1), [1.0], packed
        )


@needs_native
@pytest.mark.parametrize(
    "caps",
    [[float("inf"), 1.0, float("nan")], [1e308, 1e308, 2.0], [-0.0, -1.0, 3.0]],
)
@pytest.mark.parametrize(
    "capacity", [float("nan"), float("inf"), -float("inf"), 1e308, -1.0, -0.0, 0.0, 2.5]
)
def test_non_finite_and_signed_values(caps: list[float], capacity: float) -> None:
    lane_pools = [((0, 1.0), (1, 2.0)), ((1, 0.5),), ((0, 1e6),)]
    reference, native = both(caps, [1.0, 1e-6, 2.0], lane_pools, [capacity, 3.0])
    assert bits(native) == bits(reference)


@needs_native
def test_inputs_the_kernel_cannot_pack_run_in_python() -> None:
    weights = [1.0, float("nan")]
    lane_pools = [((0, 1.0),), ((0, 1.0),)]
    assert pack(weights, lane_pools, pool_lanes_of(lane_pools, 1), 1) is None
    assert pack([1.0, 2.0], [((5, 1.0),), ()], [((0, 1.0),)], 1) is None  # pool out of range
    caps = [1.0, 2.0]
    filled = progressive_fill(caps, [1.0, True], lane_pools, pool_lanes_of(lane_pools, 1), [2.0])
    assert filled == _fill(caps, [1.0, True], lane_pools, pool_lanes_of(lane_pools, 1), [2.0])


# -- the whole engine, kernel against Python ------------------------------------------------------


@st.composite
def documents(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, float]]:
    resources = ["cpu", "gpu", "mem"][: draw(st.integers(1, 3))]
    n_pools = draw(st.integers(len(resources), len(resources) + 4))
    pool_res = resources + [
        draw(st.sampled_from(resources)) for _ in range(n_pools - len(resources))
    ]
    members: list[list[str]] = [[] for _ in range(n_pools)]
    destinations, demand = [], {}
    positive = st.sampled_from([1e-9, 1e-6, 0.5, 1.0, 3.0, 1e6, 1e12]) | st.floats(1e-9, 1e12)
    units = st.sampled_from([0.0, 1e-9, 1.0, 2.0, 5.0, 1e12]) | st.floats(0, 1e12)
    for d in range(draw(st.integers(1, 6))):
        name = f"d{d}"
        used = draw(st.lists(st.sampled_from(resources), max_size=len(resources), unique=True))
        for r in used:
            p = draw(st.sampled_from([p for p, pr in enumerate(pool_res) if pr == r]))
            members[p].append(name)
        lanes = []
        for k in range(draw(st.integers(1, 4))):
            cost = {r: draw(FACTORS) for r in used if draw(st.booleans())}
            lane = {"name": f"l{k}", "limit": draw(units), "weight": draw(FACTORS)}
            lanes.append({**lane, "cost": cost} if cost else lane)
            if draw(st.booleans()):
                demand[f"{name}/l{k}"] = draw(units)
        destinations.append({"name": name, "resources": used, "lanes": lanes})
    pools = [
        {
            "name": f"p{p}",
            "resource": pool_res[p],
            "capacity": draw(st.just(0.0) | positive),
            "members": members[p],
        }
        for p in range(n_pools)
    ]
    return {"destinations": destinations, "pools": pools}, demand


def figures(a: Allocation) -> list[str]:
    out = [repr((k, r.demand.hex(), r.allocation.hex(), r.held.hex(), r.admission.hex())) for k, r in a.lanes.items()]  # fmt: skip
    out += [repr((k, r.capacity, r.demand.hex(), r.pressure, r.state, r.desired_replicas)) for k, r in a.pools.items()]  # fmt: skip
    assert isinstance(a.lanes, LaneResults)
    held = a.lanes.columns()[3]  # the kernel's column or the comprehension: LaneResult.held
    assert [x.hex() for x in held] == [r.held.hex() for r in a.lanes.values()]
    return out + [x.hex() for x in held]


@needs_native
@settings(max_examples=400, deadline=None)
@given(documents())
def test_allocate_with_the_kernel_is_allocate_in_python(
    case: tuple[dict[str, Any], dict[str, float]],
) -> None:
    doc, demand = case
    topo = build_topology(parse_topology(doc))
    assert compile_topology(topo).packed is not None
    native = figures(allocate(topo, demand))
    kernel = filling._native
    filling._native = None
    try:
        python = figures(allocate(topo, demand))
    finally:
        filling._native = kernel
    assert native == python


def native_kernel() -> Any:
    kernel = filling.kernel()
    assert kernel is not None
    return kernel


def typed(value: object) -> object:
    """``value`` with every float as its hex and every other leaf with its type: equal only when
    the two are the same to the bit and of the same types (1 and 1.0 differ here)."""
    if isinstance(value, float):
        return ("float", value.hex())
    if isinstance(value, tuple | list):
        return (type(value).__name__, [typed(v) for v in value])
    if isinstance(value, dict):
        return ("dict", [(typed(k), typed(v)) for k, v in value.items()])
    return (type(value).__name__, value)


@needs_native
@settings(max_examples=400, deadline=None)
@given(documents())
def test_the_kernel_compiles_the_lanes_as_the_python_does(
    case: tuple[dict[str, Any], dict[str, float]],
) -> None:
    topo = build_topology(parse_topology(case[0]))
    pool_index = {name: p for p, name in enumerate(topo.pools)}
    destinations = tuple(topo.destinations.values())
    native = native_kernel().compile_lanes(
        destinations, topo.memberships, pool_index, len(pool_index)
    )
    assert typed(native) == typed(_compile_lanes(topo, pool_index, len(pool_index)))


@needs_native
def test_the_kernel_compiles_what_the_python_compiles_from_odd_values() -> None:
    """Objects built directly (as a test or a caller may): int weights and limits, a cost given
    for some resources only, a lane key given twice (the later index wins, as in a dict
    comprehension), a missing membership (KeyError in both)."""
    lanes = (
        Lane("d", "a", 3, 2, frozen_map({"cpu": 0.5})),
        Lane("d", "b", 1.5),
        Lane("d", "a", 2.0, 1.0, frozen_map({"gpu": 2})),
    )
    dest = Destination("d", ("cpu", "gpu"), lanes)
    topo = Topology(
        destinations=frozen_map({"d": dest}),
        pools=frozen_map({"p": Pool("p", "cpu", 1.0), "q": Pool("q", "gpu", 1.0)}),
        memberships=frozen_map({("d", "cpu"): "p", ("d", "gpu"): "q"}),
    )
    index = {"p": 0, "q": 1}
    native = native_kernel().compile_lanes((dest,), topo.memberships, index, 2)
    assert typed(native) == typed(_compile_lanes(topo, index, 2))
    assert native[1] == {"d/a": 2, "d/b": 1}
    broken = Topology(destinations=topo.destinations, pools=topo.pools, memberships=frozen_map())
    with pytest.raises(KeyError):
        native_kernel().compile_lanes((dest,), broken.memberships, index, 2)
    with pytest.raises(KeyError):
        _compile_lanes(broken, index, 2)
    with pytest.raises(IndexError):
        native_kernel().compile_lanes((dest,), topo.memberships, {"p": 0, "q": 2}, 2)


def test_a_compiled_topology_pickles_with_its_packed_arrays() -> None:
    doc = {
        "destinations": [
            {"name": "d", "resources": ["cpu"], "lanes": [{"name": "l", "limit": 4.0}]}
        ],
        "pools": [{"name": "p", "resource": "cpu", "capacity": 3.0, "members": ["d"]}],
    }
    compiled = compile_topology(build_topology(parse_topology(doc)))
    assert pickle.loads(pickle.dumps(compiled)) == compiled


# -- the engine's other loops in the kernel: pool demand and the admission rooms -----------------

ODD = st.sampled_from([-0.0, float("nan"), float("inf"), -1.0, 0, 3, 1e-300]) | AMOUNTS


@needs_native
@settings(max_examples=1500, deadline=None)
@given(problems(), st.data())
def test_pool_demand_and_fillable_are_the_python_ones(
    problem: tuple[list[float], list[float], list[tuple[tuple[int, float], ...]], list[float]],
    data: st.DataObject,
) -> None:
    caps, weights, lane_pools, capacity = problem
    caps = [data.draw(ODD) if data.draw(st.booleans()) else c for c in caps]
    m = len(capacity)
    residual = [data.draw(ODD) if data.draw(st.booleans()) else c for c in capacity]
    compiled = CompiledTopology(
        lane_keys=tuple(f"d/l{i}" for i in range(len(caps))),
        lane_index={f"d/l{i}": i for i in range(len(caps))},
        pool_names=tuple(f"p{p}" for p in range(m)),
        weights=tuple(weights),
        limits=tuple(caps),
        lane_pools=tuple(lane_pools),
        pool_lanes=tuple(pool_lanes_of(lane_pools, m)),
        packed=pack(weights, lane_pools, pool_lanes_of(lane_pools, m), m),
    )
    assert compiled.packed is not None
    native_room, python_room = list(caps), list(caps)
    native_demand = _pool_demand(compiled, caps)
    native_fillable = _fillable(native_room, compiled, residual)
    kernel = filling._native
    filling._native = None
    try:
        python_demand = _pool_demand(compiled, caps)
        python_fillable = _fillable(python_room, compiled, residual)
    finally:
        filling._native = kernel
    assert [x.hex() for x in native_demand] == [x.hex() for x in python_demand]
    assert native_fillable is python_fillable
    assert [repr(x) for x in native_room] == [repr(x) for x in python_room]


@needs_native
@pytest.mark.parametrize("capacity", [0.0, 1e-300, 1.0, 10.0, 1e300])
def test_signed_zero_levels_tie_as_in_python(capacity: float) -> None:
    """Outside the model (weights are positive there), but the kernel keeps the reference's
    order still: levels -0.0 and 0.0 are tied, and ties go by lane index."""
    caps = [k * 1.1e-300 for k in range(1, 13)] + [1.0, 2.0]
    weights = [1e308 if k % 3 else -1e308 for k in range(12)] + [1.0, -1.0]
    lane_pools = [((0, 1 / (k + 3)),) for k in range(14)]
    reference, native = both(caps, weights, lane_pools, [capacity])
    assert bits(native) == bits(reference)


class _EveryLaneAtOne(dict[str, float]):
    """A mapping whose ``get`` is not the dict's: the engine must call it, not read the dict."""

    def get(self, key: str, default: Any = None) -> float:
        return 1.0


DEMANDS: list[Any] = [
    {},
    {"d/a": 5},
    {"d/a": 5.0, "d/b": 1},
    {"d/a": 1e12, "d/b": 0.0},
    {"d/a": 2**60},
    {"d/a": True},
    {"d/x": 1.0},
    {"d/a": -1.0},
    {"d/a": float("nan")},
    {"d/a": 1e13},
    {"d/a": "x"},
    _EveryLaneAtOne({"d/a": 0.5}),
]


def outcome(topo: Any, demand: Any) -> list[str] | str:
    try:
        a = allocate(topo, demand)
    except Exception as e:  # the same refusal, worded the same, either way
        return f"{type(e).__name__}: {e}"
    lanes = [repr((k, r.demand, r.allocation, r.held, r.admission)) for k, r in a.lanes.items()]
    return lanes + [repr(r) for r in a.pools.values()]


@needs_native
@pytest.mark.parametrize("demand", DEMANDS, ids=repr)
def test_demand_checks_and_caps_are_the_python_ones(demand: Any) -> None:
    lanes = [{"name": "a", "limit": 4.0}, {"name": "b", "limit": 2.0, "weight": 2.0}]
    doc = {
        "destinations": [{"name": "d", "resources": ["cpu"], "lanes": lanes}],
        "pools": [{"name": "p", "resource": "cpu", "capacity": 3.0, "members": ["d"]}],
    }
    topo = build_topology(parse_topology(doc))
    native = outcome(topo, demand)
    kernel = filling._native
    filling._native = None
    try:
        python = outcome(topo, demand)
    finally:
        filling._native = kernel
    assert native == python


@needs_native
@settings(max_examples=1500, deadline=None)
@given(st.lists(st.tuples(ODD, ODD, ODD), max_size=12))
def test_lane_columns_are_the_comprehensions(rows: list[tuple[Any, Any, Any]]) -> None:
    """allocate's per-lane columns in the kernel: each item as its comprehension makes it (the
    clamp keeps the very objects); ints and other non-floats leave it to the comprehension."""
    from arklow_pulumi.core import _filling as k

    d = [r[0] for r in rows]
    limits = tuple(r[1] for r in rows)
    a = [r[2] for r in rows]
    ops: dict[str, tuple[Any, list[Any], list[list[Any] | tuple[Any, ...]]]] = {
        "active_room": (
            k.active_room(d, limits, a),
            [lim - x if v > 0 and lim > x else 0.0 for v, lim, x in zip(d, limits, a, strict=True)],
            [d, limits, a],
        ),
        "idle_room": (
            k.idle_room(d, limits),
            [lim if v <= 0 else 0.0 for v, lim in zip(d, limits, strict=True)],
            [d, limits],
        ),
        "add": (k.add(d, a), [v + x for v, x in zip(d, a, strict=True)], [d, a]),
        "held": (
            k.held(d, a),
            [h if (h := v - x) > 0 else 0.0 for v, x in zip(d, a, strict=True)],
            [d, a],
        ),
        "clamp": (
            k.clamp(a, limits),
            [x if x < lim else lim for x, lim in zip(a, limits, strict=True)],
            [a, limits],
        ),
    }
    for name, (column, want, used) in ops.items():
        if not all(type(x) is float for seq in used for x in seq):
            assert column is None, name
            continue
        assert column is not None, name
        assert [x.hex() for x in column] == [x.hex() for x in want], name
        if name == "clamp":
            assert all(x is y for x, y in zip(column, want, strict=True)), name


DEMAND_VALUES = ODD | st.sampled_from([True, 2**60, 2**53 + 1, 1e12, 1e13, "x", None])


@needs_native
@settings(max_examples=1500, deadline=None)
@given(st.data())
def test_the_one_pass_check_and_caps_are_the_check_then_the_caps(data: st.DataObject) -> None:
    """``checked_caps`` gives ``lane_caps``'s columns, the very objects, exactly when
    ``demand_ok`` passes the demand, and None otherwise (the Python then checks)."""
    from arklow_pulumi.core import _filling as k
    from arklow_pulumi.core.limits import MAX_UNITS

    n = data.draw(st.integers(0, 8))
    keys = [f"d/l{i}" for i in range(n)]
    limits = tuple(data.draw(ODD) for _ in keys)
    listed = data.draw(st.lists(st.sampled_from(keys), unique=True) if keys else st.just([]))
    demand: dict[Any, Any] = {key: data.draw(DEMAND_VALUES) for key in listed}
    for extra in data.draw(st.lists(st.sampled_from(["d/x", "e/l0", 3, "d/l"]), unique=True)):
        demand[extra] = data.draw(DEMAND_VALUES)
    known = {key: i for i, key in enumerate(keys)}
    try:
        expected = k.lane_caps(demand, keys, limits)
    except TypeError:  # a value the cap's comparison refuses: the Python refuses it first
        assert not k.demand_ok(demand, known, MAX_UNITS)
        assert k.checked_caps(demand, keys, limits, MAX_UNITS) is None
        return
    got = k.checked_caps(demand, keys, limits, MAX_UNITS)
    if not k.demand_ok(demand, known, MAX_UNITS):
        assert got is None
        return
    assert got is not None and expected is not None
    given_objects = {id(v) for v in [*demand.values(), *limits]}
    for column, want in zip(got, expected, strict=True):
        assert len(column) == len(want) == n
        for x, y in zip(
            column, want, strict=True
        ):  # each call makes its own 0.0 for a lane not listed
            assert x is y if id(y) in given_objects else (type(x), repr(x)) == (float, "0.0")
