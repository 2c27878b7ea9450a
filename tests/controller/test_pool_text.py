"""The published pools written directly as text (``documents.pools_json``) are the encoder's text of
:func:`~arklow_pulumi.controller.tick.documents.pool_view_document`, character for character: odd names
(quotes, backslashes, control characters, non-ASCII), no pressure, tiny and huge floats, -0.0;
and the figures the direct text leaves to the encoder (NaN, infinities, ints or bools where a
float is expected, bools where an int is) are written as the encoder writes them."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from arklow_pulumi.controller.ports import LaneView, PoolView, Published, TargetView
from arklow_pulumi.controller.tick.documents import (
    pool_view_document,
    pools_json,
    published_from_document,
    published_json,
)
from tests.controller.published_reference import published_document
from tests.hypothesis_profiles import examples

NAMES = st.text(max_size=12) | st.sampled_from(
    ['a"b', "a\\b", "\x00\x1f\x7f", "é→😀", "", "\u2028"]
)
FLOATS = st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(
    [0.0, -0.0, 5e-324, 1e-300, 1e16, 1e22, 1.7976931348623157e308, 0.1, 1 / 3]
)
COUNTS = st.integers(0, 10**6) | st.integers(-(2**70), 2**70)
STATES = st.sampled_from(["idle", "steady", "constrained"]) | NAMES


def targets(counts: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, TargetView]]:
    return st.dictionaries(
        NAMES, st.builds(TargetView, counts, counts, counts, counts, counts), max_size=3
    )


def pools(
    floats: st.SearchStrategy[Any], counts: st.SearchStrategy[Any]
) -> st.SearchStrategy[dict[str, PoolView]]:
    view = st.builds(
        PoolView,
        resource=NAMES,
        capacity=floats,
        demand=floats,
        pressure=st.none() | floats,
        state=STATES,
        desired_replicas=counts,
        targets=targets(counts),
    )
    return st.dictionaries(NAMES, view, max_size=6)


def encoder_text(views: dict[str, PoolView]) -> str:
    """The text as published_json wrote it before (the reference)."""
    documents = {name: pool_view_document(pool) for name, pool in views.items()}
    return json.dumps(documents, separators=(",", ":"))


def published(views: dict[str, PoolView]) -> Published:
    lanes = {"d/a": LaneView(1.0, 0.5, 0.5, 0.75), "d/b": LaneView(0.0, 0.0, 0.0, 2.0, True)}
    return Published(7, datetime(2026, 11, 30, 14, 0, tzinfo=UTC), lanes, views)


@settings(max_examples=examples(600), deadline=None)
@given(pools(FLOATS, COUNTS))
def test_pools_text_is_the_encoders_text(views: dict[str, PoolView]) -> None:
    assert pools_json(views) == encoder_text(views)
    value = published(views)
    text = published_json(value)
    assert json.loads(text) == json.loads(json.dumps(published_document(value)))
    assert published_from_document(json.loads(text)) == value


ODD_FLOATS = FLOATS | st.sampled_from([float("nan"), float("inf"), -float("inf"), 3, True])
ODD_COUNTS = COUNTS | st.sampled_from([True, False, 2.0])


@settings(max_examples=examples(600), deadline=None)
@given(pools(ODD_FLOATS, ODD_COUNTS))
def test_figures_left_to_the_encoder_are_written_as_it_writes_them(
    views: dict[str, PoolView],
) -> None:
    assert pools_json(views) == encoder_text(views)


def test_a_non_finite_figure_is_written_as_before() -> None:
    target = {"t": TargetView(1, 1, 0, 1, 3)}
    views = {
        "p": PoolView("gpu", 2.0, 1.0, 0.5, "steady", 1, target),
        "q": PoolView("gpu", 0.0, 4.0, float("inf"), "constrained", 3, target),
    }
    text = pools_json(views)
    assert '"pressure":Infinity' in text and '"pressure":0.5' in text
    assert text == encoder_text(views)


def test_a_name_that_is_not_a_string_is_written_as_before() -> None:
    views: dict[Any, PoolView] = {7: PoolView("gpu", 2.0, 1.0, 0.5, "steady", 0, {})}
    assert pools_json(views) == '{"7":' + encoder_text({"p": views[7]})[5:]
