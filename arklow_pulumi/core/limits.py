"""Every field's range and the name rule, each with its message: the one home of the field rules.

The schema's models (:mod:`arklow_pulumi.reading.spec`) check each field of a document with the
functions here, and :mod:`arklow_pulumi.core.validating` checks objects built in code (the
store's rows, the providers' inputs) with the same functions, so a field breaks the same rule
with the same words on every path. Each ``*_problem`` function returns ``None`` when the value
keeps the rule, else the message (one line, the value echoed back).

Every number has a documented range, so that no sum, product or ``ceil`` the engine computes
(``Σ e × cost × (1 + headroom)``, ``demand / capacity``, ``needed / units_per_replica``) can
overflow or turn into NaN, and every output stays strict JSON:

- replica counts (``min_replicas``, ``max_replicas``, ``replicas``, step sizes): integers in
  [0, 1,000,000] (steps from 1);
- amounts of units (``limit``, demand, ``capacity``, ``standalone_capacity``): in [0, 1e12]; a
  capacity is 0 or at least 1e-9, so that pressure stays finite;
- ``units_per_replica``: in [1e-6, 1e12]; ``weight`` and ``cost``: in [1e-6, 1e6];
- ``headroom``: a fraction in [0, 100]; a percentage in [0, 100], a tolerance in [0, 1].

Names (destinations, lanes, resources, pools, scale targets, groups, regions, zones, projects,
members) follow one rule, the same on every path and every store backend
(:func:`name_problem`): 1 to 255 characters, all printable (``str.isprintable``: no control,
format, separator other than the space, or unassigned characters), no space at either end, and
in Unicode NFC (``é`` as one code point, U+00E9, not ``e`` followed by a combining accent,
U+0065 U+0301: the two look alike and would otherwise be two destinations). Whatever this rule
accepts reads back unchanged from every file the project writes (traces, tokens files, JSON).
"""

from __future__ import annotations

import unicodedata
from typing import Literal

MAX_NAME_LENGTH = 255
MAX_COUNT = 1_000_000
MAX_UNITS = 1e12
MIN_CAPACITY = 1e-9
MIN_FACTOR, MAX_FACTOR = 1e-6, 1e6
MIN_UNITS_PER_REPLICA = 1e-6
MAX_HEADROOM = 100.0

# The ranges of the rules below, closed, as (low, high): each rule's function and the schema's
# constraints (arklow_pulumi.reading.spec, checked in pydantic-core) are both made from these.
UNITS_RANGE = (0.0, MAX_UNITS)  # an amount of units (the HTTP API's schema publishes it too)
CAPACITY_RANGE = (0.0, MAX_UNITS)  # and nothing between 0 and MIN_CAPACITY
FACTOR_RANGE = (MIN_FACTOR, MAX_FACTOR)
UNITS_PER_REPLICA_RANGE = (MIN_UNITS_PER_REPLICA, MAX_UNITS)
HEADROOM_RANGE = (0.0, MAX_HEADROOM)
PERCENT_RANGE = (0.0, 100.0)
FRACTION_RANGE = (0.0, 1.0)
COUNT_RANGE = (0, MAX_COUNT)
STEP_RANGE = (1, MAX_COUNT)

#: The names of :func:`name_problem` that are all ASCII, as a regular expression (the same in
#: Python's ``re`` and Rust's ``regex``): 1 to 255 printable ASCII characters, no space at either
#: end. ASCII text is always in NFC. The schema accepts these names without calling the function.
ASCII_NAME_PATTERN = rf"^[!-~](?:[ -~]{{0,{MAX_NAME_LENGTH - 2}}}[!-~])?$"

TargetKind = Literal["aws_asg", "gcp_mig"]
TARGET_KINDS: tuple[TargetKind, ...] = ("aws_asg", "gcp_mig")
DEFAULT_HEADROOM = 0.1
# A lane's weight when none is given, and its cost of a resource its ``cost`` does not name.
DEFAULT_WEIGHT = 1.0
DEFAULT_COST = 1.0


def name_problem(value: str) -> str | None:
    """The name rule: 1 to 255 printable characters, no space at either end, in Unicode NFC."""
    if (
        0 < len(value) <= MAX_NAME_LENGTH
        and value.isprintable()
        and value[0] != " "
        and value[-1] != " "
        and (value.isascii() or unicodedata.is_normalized("NFC", value))
    ):
        return None
    if not 1 <= len(value) <= MAX_NAME_LENGTH:
        return f"must be 1 to {MAX_NAME_LENGTH} characters long (got {len(value)})"
    bad = next((c for c in value if not c.isprintable()), None)
    if bad is not None:
        return f"must contain only printable characters (found U+{ord(bad):04X})"
    if value[0] == " " or value[-1] == " ":
        return f"must not begin or end with a space (got {value!r:.300})"
    given, composed = _first_unnormalized(value)
    return (
        f"must be in Unicode NFC: {given!r} ({_code_points(given)}) looks like {composed!r} "
        f"({_code_points(composed)}) but is another name; write {composed!r}"
    )


def _first_unnormalized(value: str) -> tuple[str, str]:
    """The first run of characters (a starter and the marks that combine with it, or two such
    runs: U+1100 U+1161 compose into one syllable) that NFC changes, and what NFC makes of it."""
    starters = (i for i, c in enumerate(value) if not unicodedata.combining(c))
    starts = sorted({0, len(value), *starters})
    for width in (1, 2):
        for k in range(len(starts) - width):
            run = value[starts[k] : starts[k + width]]
            composed = unicodedata.normalize("NFC", run)
            if composed != run:
                return run, composed
    return value, unicodedata.normalize("NFC", value)


def _code_points(text: str) -> str:
    return " ".join(f"U+{ord(c):04X}" for c in text)


def _bound(value: float) -> str:
    """A bound as people write it: 0.000001, 1000000000000, 0.5 (not 1e-06, 1e+12)."""
    return f"{value:f}".rstrip("0").rstrip(".") if value != int(value) else str(int(value))


def _echo(value: float) -> str:
    """A value as it was most likely written: 30000000 (not 30000000.0), -1, 0.5, 1e+200."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return f"{value!r:.40}"


def range_problem(value: float, low: float, high: float) -> str | None:
    """A finite number in [low, high]."""
    if low <= value <= high:  # False for NaN too
        return None
    if value != value or value in (float("inf"), float("-inf")):
        return f"must be a finite number (got {value!r})"
    if value < low:
        return f"must be greater than or equal to {_bound(low)} (got {_echo(value)})"
    return f"must be less than or equal to {_bound(high)} (got {_echo(value)})"


def units_problem(value: float) -> str | None:
    """An amount of units: a lane's ``limit``, a demand."""
    return range_problem(value, *UNITS_RANGE)


def capacity_problem(value: float) -> str | None:
    """A static capacity: 0, or at least 1e-9 (so that pressure stays finite), at most 1e12."""
    if 0 < value < MIN_CAPACITY:
        return f"must be 0 or at least {MIN_CAPACITY:g} (got {value!r:.40})"
    return range_problem(value, *CAPACITY_RANGE)


def factor_problem(value: float) -> str | None:
    """A lane's ``weight`` or ``cost``."""
    return range_problem(value, *FACTOR_RANGE)


def units_per_replica_problem(value: float) -> str | None:
    return range_problem(value, *UNITS_PER_REPLICA_RANGE)


def headroom_problem(value: float) -> str | None:
    return range_problem(value, *HEADROOM_RANGE)


def percent_problem(value: float) -> str | None:
    return range_problem(value, *PERCENT_RANGE)


def fraction_problem(value: float) -> str | None:
    return range_problem(value, *FRACTION_RANGE)


def count_problem(value: int, low: int = COUNT_RANGE[0]) -> str | None:
    """A replica count (``low`` 0) or a step (``low`` 1): an integer up to 1,000,000."""
    if low <= value <= MAX_COUNT:
        return None
    if value < low:
        return f"must be greater than or equal to {low} (got {value})"
    return f"must be less than or equal to {MAX_COUNT} (got {value!s:.40})"


def step_problem(value: int) -> str | None:
    return count_problem(value, low=STEP_RANGE[0])
