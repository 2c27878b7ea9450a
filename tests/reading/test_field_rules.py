"""The schema's field rules run in pydantic-core (issue 29, item 9): constraints made from the
constants of :mod:`arklow_pulumi.core.limits` accept a value without calling the rule's function.
They must accept nothing the function refuses (else a bad value would get through), and for a
plain range exactly what it accepts (else a good value would pay for a call into Python)."""

from __future__ import annotations

import math
import re
from typing import Any, get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError
from pydantic_core import SchemaValidator

from arklow_pulumi.core.limits import ASCII_NAME_PATTERN, MAX_NAME_LENGTH, name_problem
from arklow_pulumi.reading import spec

RULES = {
    alias: get_args(getattr(spec, alias))[1]
    for alias in (
        "Name",
        "NonNegative",
        "Capacity",
        "Factor",
        "UnitsPerReplica",
        "Headroom",
        "Count",
        "Step",
        "Percent",
        "Fraction",
    )
}
RANGES = [alias for alias in RULES if alias not in ("Name", "Capacity")]


def accepts(alias: str, value: Any) -> bool:
    return SchemaValidator(RULES[alias].accept).isinstance_python(value)


def edges(alias: str) -> list[Any]:
    """The values at and around each bound of a rule's range."""
    rule = RULES[alias]
    low, high = rule.accept.get("ge"), rule.accept.get("le")
    out: list[Any] = [0, -0.0, math.nan, math.inf, -math.inf]
    for bound in (low, high):
        if isinstance(bound, int):
            out += [bound - 1, bound, bound + 1]
        elif isinstance(bound, float):
            out += [math.nextafter(bound, -math.inf), bound, math.nextafter(bound, math.inf)]
    return out


@pytest.mark.parametrize("alias", [a for a in RULES if a != "Name"])
def test_constraints_accept_only_what_the_rule_accepts_at_the_edges(alias: str) -> None:
    rule = RULES[alias]
    for value in edges(alias):
        value = float(value) if rule.base["type"] == "float" else value
        if isinstance(value, float) and rule.base["type"] == "int":
            continue
        if accepts(alias, value):
            assert rule.problem(value) is None, (alias, value)
        elif alias in RANGES:
            assert rule.problem(value) is not None, (alias, value)


@pytest.mark.parametrize("alias", RANGES)
@given(
    value=st.floats(allow_nan=True, allow_infinity=True)
    | st.integers(min_value=-(2**70), max_value=2**70)
)
def test_a_range_is_the_rule_exactly(alias: str, value: float) -> None:
    if RULES[alias].base["type"] == "float":
        value = float(value)
    elif not isinstance(value, int):
        return
    assert accepts(alias, value) == (RULES[alias].problem(value) is None)


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=MAX_NAME_LENGTH + 3))
def test_the_name_pattern_is_the_rule_on_ascii(text: str) -> None:
    assert (re.fullmatch(ASCII_NAME_PATTERN, text) is not None) == (name_problem(text) is None)
    assert accepts("Name", text) == (name_problem(text) is None)


@given(st.text(max_size=8).filter(lambda t: not t.isascii()))
def test_the_name_pattern_leaves_every_other_name_to_the_rule(text: str) -> None:
    assert not accepts("Name", text)


def test_a_value_the_constraints_leave_is_decided_by_the_rule() -> None:
    """0 is a capacity the constraints leave to the function (nothing lies between 0 and 1e-9)."""
    pool = {"name": "p", "resource": "r"}
    assert spec.PoolSpec.model_validate({**pool, "capacity": 0}).capacity == 0
    with pytest.raises(ValidationError) as refused:
        spec.PoolSpec.model_validate({**pool, "capacity": 5e-324})
    (error,) = refused.value.errors()
    assert error["type"] == spec.RULE_ERROR
    assert error["ctx"]["rule"](error["input"]) == "must be 0 or at least 1e-09 (got 5e-324)"
