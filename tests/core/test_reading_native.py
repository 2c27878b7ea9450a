"""The compiled lane loop of the fast reader (``_reading.c``) against the Python loop it replaces.

For any ``lanes`` value — valid lanes, and lanes with hostile values in every field — the
compiled ``read_lanes`` must decline exactly when the Python's ``_lanes`` defers, and otherwise
build the same Lane objects (same values of the same types) and say the same of
``lanes_are_plain``. ``tests/core/test_reading.py`` holds the whole reader, whichever loop runs,
to the spec models.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arklow_pulumi.core import reading
from arklow_pulumi.core.reading import _LANE_SETTERS, _NATIVE_LIMITS, _Defer, _lanes
from arklow_pulumi.core.topology import EMPTY, Lane
from arklow_pulumi.core.validating import lanes_are_plain

FORCED_PURE = os.environ.get("ARKLOW_PURE_PYTHON") == "1"
needs_native = pytest.mark.skipif(FORCED_PURE, reason="ARKLOW_PURE_PYTHON=1 forces the Python")

RESOURCES = ("cpu", "gpu")
NAMES = st.sampled_from(
    ["a", "b", "a/b", "", "x" * 255, "x" * 256, "tab\there", "é", "名前", "\u2028"]
)
NUMBERS = st.sampled_from(
    [0, 1, 3, -1, 0.0, -0.0, 1e-7, 1e-6, 0.5, 1.0, 1e6, 1.0000001e6, 1e12, 1.5e12, 10**12,
     10**12 + 1, 10**400, float("nan"), float("inf"), True, False, "1", None]
) | st.floats(allow_nan=True) | st.integers(-(10**13), 10**13)  # fmt: skip
KEYS = st.sampled_from(["name", "limit", "weight", "cost", "surprise", 1, None])


@st.composite
def lane_docs(draw: st.DrawFn) -> Any:
    doc: dict[Any, Any] = {"name": draw(NAMES), "limit": draw(NUMBERS)}
    if draw(st.booleans()):
        doc["weight"] = draw(NUMBERS)
    if draw(st.booleans()):
        doc["cost"] = draw(
            st.none()
            | st.dictionaries(st.sampled_from(["cpu", "gpu", "mem", "", "a/b", 7]), NUMBERS)
            | st.sampled_from([[], "cpu", 1])
        )
    for _ in range(draw(st.integers(0, 1))):
        doc[draw(KEYS)] = draw(NUMBERS | NAMES)
    if draw(st.integers(0, 9)) == 0:
        doc.pop(draw(st.sampled_from(["name", "limit"])), None)
    return doc if draw(st.integers(0, 19)) else draw(st.sampled_from([None, [], "lane", 1]))


def typed(lanes: tuple[Lane, ...]) -> list[Any]:
    return [
        (
            lane.destination,
            lane.name,
            type(lane.limit), repr(lane.limit),
            type(lane.weight), repr(lane.weight),
            type(lane.cost).__name__,
            [(k, type(v), repr(v)) for k, v in lane.cost.items()],
        )
        for lane in lanes
    ]  # fmt: skip


def python(value: Any) -> tuple[list[Any], bool] | None:
    try:
        lanes = _lanes("d", value)
    except _Defer:
        return None
    return typed(lanes), lanes_are_plain(lanes, set(RESOURCES))


def compiled(value: Any) -> tuple[list[Any], bool] | None:
    native = reading._native
    assert native is not None
    read = native.read_lanes("d", value, RESOURCES, Lane, _LANE_SETTERS, EMPTY, _NATIVE_LIMITS)
    if read is None:
        return None
    lanes, plain = read
    assert all(type(lane) is Lane for lane in lanes)
    return typed(lanes), plain


@needs_native
def test_the_compiled_lane_loop_is_loaded() -> None:
    assert reading.NATIVE


@needs_native
@settings(max_examples=3000, deadline=None)
@given(st.lists(lane_docs(), max_size=5) | st.sampled_from([None, {}, "lanes", 3]))
def test_the_compiled_lane_loop_reads_as_the_python_reads(value: Any) -> None:
    assert compiled(value) == python(value)


@needs_native
def test_plain_and_not_plain_lanes() -> None:
    ok = [{"name": "a", "limit": 1, "weight": 2, "cost": {"gpu": 3}}, {"name": "b", "limit": 0.5}]
    assert compiled(ok) == python(ok) and python(ok) is not None and python(ok)[1]
    for bad in (
        [*ok, {"name": "a", "limit": 1.0}],  # a name twice
        [{"name": "a/b", "limit": 1.0}],  # a '/' in a lane name
        [{"name": "a", "limit": 1.0, "cost": {"mem": 1.0}}],  # a cost for another resource
    ):
        result = compiled(bad)
        assert result == python(bad) and result is not None and not result[1]


@needs_native
def test_the_lanes_read_are_frozen_lanes_equal_to_constructed_ones() -> None:
    native = reading._native
    assert native is not None
    read = native.read_lanes(
        "d",
        [{"name": "a", "limit": 3, "weight": 2, "cost": {"gpu": 0.5}}, {"name": "b", "limit": 1.5}],
        RESOURCES,
        Lane,
        _LANE_SETTERS,
        EMPTY,
        _NATIVE_LIMITS,
    )
    assert read is not None
    lanes = read[0]
    assert lanes == (
        Lane("d", "a", 3.0, 2.0, reading.frozen_map({"gpu": 0.5})),
        Lane("d", "b", 1.5, 1.0, EMPTY),
    )
    assert lanes[1].cost is EMPTY
