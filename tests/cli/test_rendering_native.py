"""The compiled lane rendering is the Python's text, character for character.

``allocation_json`` and ``allocation_table`` render the lanes with ``_render.c`` when it is
built; the text must be what the Python reference (``_lanes_json``, ``_lanes_table``) prints:
keys with quotes, backslashes, control characters, lone surrogates and characters outside the
BMP; numbers at -0.0, around 2**53, tiny, huge, integral, at the 1e-3 boundary of the table's
cells. Whole outputs are compared with the module and with the Python forced. And the module
must be there: this machine and CI build it at install, so a test fails if the package
silently fell back to the Python.
"""

from __future__ import annotations

import importlib.machinery
import json
import math
import os
import random
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arklow_pulumi.cli import rendering
from arklow_pulumi.core.allocating import Allocation, LaneResult, LaneResults, PoolResult

FORCED_PURE = os.environ.get("ARKLOW_PURE_PYTHON") == "1"
needs_native = pytest.mark.skipif(FORCED_PURE, reason="ARKLOW_PURE_PYTHON=1 forces the Python")

SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.1, 1 / 3, 2.5, 1e-3, -1e-3, 0.000999999, 0.0010000001]
SPECIAL += [2.0**53, 2.0**53 + 2, 2.0**53 - 1, -(2.0**53 - 1), -(2.0**53), 2.0**63, 2.0**64]
SPECIAL += [5e-324, 2.2250738585072014e-308, 1e-300, 1e308, 1.7976931348623157e308, 1e16]
SPECIAL += [123456.0, 999999.0, 999999.5, 1e6, 1e6 + 1, 9999995.0, 0.30000000000000004, 1e21]
FLOATS = (
    st.sampled_from(SPECIAL)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.floats(-1e7, 1e7).map(round).map(float)
    | st.floats(-0.01, 0.01)
)
# every code point, lone surrogates included; quotes, backslashes and controls made likely
KEYS = st.text(
    st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())
    | st.sampled_from(['"', "\\", "\n", "\t", "\x00", "\x1f", "\x7f", "é", "\U0001f600", "/"]),
    max_size=12,
)
LANES = st.lists(st.tuples(KEYS, FLOATS, FLOATS, FLOATS, FLOATS), max_size=25)
Row = tuple[str, float, float, float, float]

POOLS = {
    "p": PoolResult(
        resource="gpu",
        capacity=8.0,
        demand=2.5,
        pressure=0.3125,
        state="steady",
        desired_replicas=(1, 2),
    )
}


def columns(rows: list[Row]) -> LaneResults:
    """Lane results as the engine keeps them; rows are (key, demand, cap, allocation, admission)
    and a repeated key keeps its first row."""
    seen: dict[str, tuple[float, float, float, float]] = {}
    for key, demand, cap, allocation, admission in rows:
        seen.setdefault(key, (demand, cap, allocation, admission))
    keys = tuple(seen)
    values = list(seen.values())
    return LaneResults(
        keys,
        {k: i for i, k in enumerate(keys)},
        [v[0] for v in values],
        [v[1] for v in values],
        [v[2] for v in values],
        [v[3] for v in values],
    )


def rendered(result: Allocation, native: bool) -> tuple[str, str]:
    """``allocation_json`` and ``allocation_table`` (coloured), with or without the module."""
    with pytest.MonkeyPatch.context() as patch:
        if not native:
            patch.setattr(rendering, "_native", None)
        return rendering.allocation_json(result), rendering.allocation_table(result, color=True)


@needs_native
def test_the_native_renderer_is_loaded() -> None:
    assert rendering.NATIVE
    from arklow_pulumi.cli import _render

    assert _render.__file__.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


def test_pure_python_is_forced_by_the_environment() -> None:
    code = "import arklow_pulumi.cli.rendering as r; print(r.NATIVE)"
    env = {**os.environ, "ARKLOW_PURE_PYTHON": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


@needs_native
@settings(max_examples=1500, deadline=None)
@given(LANES)
def test_json_lanes_are_the_python_text(rows: list[Row]) -> None:
    from arklow_pulumi.cli import _render

    lanes = columns(rows)
    keys, demand, allocation, held, admission = lanes.columns()
    text = _render.json_lanes(keys, demand, allocation, held, admission)
    views = {key: lanes[key] for key in lanes}  # a plain mapping: the Python renders it
    if not all(math.isfinite(h) for h in held):  # a cap less a huge negative allocation
        assert text is None
        with pytest.raises(ValueError, match="not a finite number"):
            rendering._lanes_json(views)
        return
    assert text == rendering._lanes_json(views)
    assert text is not None
    parsed = json.loads("{" + text + "}")
    assert list(parsed) == list(keys)
    for key, value in parsed.items():
        view = views[key]
        assert list(value.values()) == [view.demand, view.allocation, view.held, view.admission]


@needs_native
@settings(max_examples=1500, deadline=None)
@given(LANES)
def test_table_lanes_are_the_python_text(rows: list[Row]) -> None:
    from arklow_pulumi.cli import _render

    lanes = columns(rows)
    keys, demand, allocation, held, admission = lanes.columns()
    views = {key: lanes[key] for key in lanes}
    for color in (False, True):
        native = _render.table_lanes(keys, demand, allocation, admission, held, color)
        assert native == rendering._lanes_table(views, color)


@needs_native
@settings(max_examples=2000, deadline=None)
@given(st.lists(st.floats() | st.sampled_from([*SPECIAL, math.nan, -math.nan, math.inf])))
def test_table_cells_are_the_python_format(values: list[float]) -> None:
    """Every float, NaN and the infinities included, in each of the four cells."""
    from arklow_pulumi.cli import _render

    keys = tuple(f"l{k}" for k in range(len(values)))
    for column in range(4):
        cols = [[1.0] * len(values) for _ in range(4)]
        cols[column] = list(values)
        demand, allocation, held, admission = cols
        views = {
            k: LaneResult(demand[i], allocation[i], held[i], admission[i])
            for i, k in enumerate(keys)
        }
        native = _render.table_lanes(keys, demand, allocation, admission, held, True)
        assert native == rendering._lanes_table(views, True)


@needs_native
@settings(max_examples=300, deadline=None)
@given(LANES)
def test_whole_outputs_are_the_same_with_the_python_forced(rows: list[Row]) -> None:
    result = Allocation(lanes=columns(rows), pools=POOLS)
    assert rendered(result, True) == rendered(result, False)


@needs_native
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("column", [1, 3, 4])  # demand, allocation, admission
def test_a_number_that_is_not_finite_raises_the_python_error(bad: float, column: int) -> None:
    row: list[str | float] = ["b", 1.0, 2.0, 0.5, 1.0]
    row[column] = bad
    lanes = columns([("a", 1.0, 1.0, 1.0, 1.0), tuple(row)])  # type: ignore[list-item]
    messages = []
    for native in (True, False):
        with pytest.raises(ValueError, match="not a finite number") as raised:
            rendered(Allocation(lanes=lanes, pools={}), native)
        messages.append(str(raised.value))
    assert messages[0] == messages[1]


@needs_native
def test_ints_and_odd_columns_are_left_to_the_python() -> None:
    from arklow_pulumi.cli import _render

    keys = ("a", "b")
    floats = [1.0, 2.0]
    assert _render.json_lanes(keys, [1.0, 2], floats, floats, floats) is None
    assert _render.json_lanes(keys, floats, floats, floats, [1.0]) is None  # not the keys' length
    assert _render.json_lanes(keys, floats, iter(floats), floats, floats) is None  # type: ignore[arg-type]
    assert _render.json_lanes(("a", 2), floats, floats, floats, floats) is None  # type: ignore[arg-type]
    assert _render.table_lanes(keys, floats, floats, floats, [True, 2.0], False) is None
    assert _render.table_lanes(keys, floats, floats, floats, floats, False) is not None


@needs_native
def test_ints_print_as_the_python_prints_them() -> None:
    lanes = columns([("a", 2, 3, 1, 2**60), ("b", 1.5, 2.0, -0.0, 0.0)])
    result = Allocation(lanes=lanes, pools={})
    assert rendered(result, True) == rendered(result, False)


@needs_native
@pytest.mark.parametrize("seed", range(3))
def test_many_lanes_with_repeats_are_the_python_text(seed: int) -> None:
    """Enough numbers to fill and overwrite the module's table of number texts many times."""
    rng = random.Random(seed)
    pool = [rng.uniform(0, 100) for _ in range(3000)] + [rng.uniform(0, 0.002) for _ in range(500)]
    pool += [float(rng.randrange(1000)) for _ in range(200)] + SPECIAL

    def draw() -> float:
        return rng.choice(pool) if rng.random() < 0.7 else rng.expovariate(0.01)

    rows = [(f"d{k // 7}/l{k % 7}", draw(), draw(), draw(), draw()) for k in range(20_000)]
    lanes = columns(rows)
    from arklow_pulumi.cli import _render

    assert _render.json_lanes(*lanes.columns()) is not None  # the module renders these
    result = Allocation(lanes=lanes, pools=POOLS)
    assert rendered(result, True) == rendered(result, False)


def reference_table(headers: list[str], rows: list[list[str]], right: set[int]) -> list[str]:
    """``rendering.table`` as it was, row by row: the reference of the column-wise one."""
    widths = [
        max(len(h), *(len(r[k]) for r in rows)) if rows else len(h) for k, h in enumerate(headers)
    ]

    def line(cells: list[str]) -> str:
        parts = [
            c.rjust(w) if k in right else c.ljust(w)
            for k, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    return [line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)]


CELLS = st.text(
    st.sampled_from(["a", "é", " ", "\u3000", "\t", "-", "7", "\U0001f600"]), max_size=6
)


@settings(max_examples=1500, deadline=None)
@given(
    st.integers(0, 6).flatmap(
        lambda n: st.tuples(
            st.lists(CELLS, min_size=n, max_size=n),
            st.lists(st.lists(CELLS, min_size=n, max_size=n), max_size=8),
            st.sets(st.integers(0, max(n - 1, 0))),
        )
    )
)
def test_tables_are_the_row_by_row_text(case: tuple[list[str], list[list[str]], set[int]]) -> None:
    headers, rows, right = case
    assert rendering.table(headers, rows, right) == reference_table(headers, rows, right)
