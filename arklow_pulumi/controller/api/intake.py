"""Validation of one ``POST /v1/demand`` batch: whole batch first, then all or nothing.

Checks run in passes so that the answer does not depend on where a bad item sits and does not leak
the topology to a caller outside its scope: the shape of every item (422), then every lane against
the token's scope (403, before anyone learns whether a lane of another destination exists), then
every lane against the topology and every number (422). The first failing item of the first failing
pass is named. A lane reported twice in one batch counts once: the last value wins.

What a body, a report, a lane key and a demand must be is declared once in :mod:`.bodies` (the
OpenAPI document publishes the same shapes); the passes and the messages are this module's.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection
from dataclasses import dataclass

from arklow_pulumi.controller.api.auth import Scope
from arklow_pulumi.controller.api.bodies import DEMAND, LANE_KEY, REPORT, batch, echo
from arklow_pulumi.controller.ports import DemandReport
from arklow_pulumi.reading.text import DuplicateKey, parse_json

MAX_BODY_BYTES = 1024 * 1024
MAX_REPORTS = 10_000
_BATCH = batch(MAX_REPORTS)


@dataclass(eq=False)
class BatchRefused(Exception):
    """A refused batch: the HTTP status, a one-line message, and how many reports it held."""

    status: int
    message: str
    reports: int = 0
    item: int | None = None
    lane: str | None = None

    def __str__(self) -> str:
        return self.message


def decode_batch(body: bytes, max_reports: int = MAX_REPORTS) -> list[object]:
    """The ``reports`` list of a request body (400 when not JSON, 422 when not that shape)."""
    try:
        doc = parse_json(body.decode("utf-8"))  # bytes would be read as UTF-16/32 too
    except DuplicateKey as exc:  # JSON, but a document no reader of ours takes (as in files)
        raise BatchRefused(422, f"body: {exc}") from None
    except (ValueError, RecursionError) as exc:  # not JSON, not UTF-8, a number too long
        raise BatchRefused(400, f"body is not JSON: {_json_problem(exc)}") from None
    if not isinstance(doc, dict) or "reports" not in doc:
        raise BatchRefused(422, f'body must be an object {{"reports": [{REPORT.outline()}, ...]}}')
    extra = _BATCH.unknown(doc)
    if extra:
        raise BatchRefused(
            422, f"body: unknown field {echo(str(extra[0]))} (expected only reports)"
        )
    items = doc["reports"]
    if not isinstance(items, list):
        raise BatchRefused(422, "body: field 'reports' must be a list")
    if len(items) > max_reports:
        raise BatchRefused(
            413, f"batch of {len(items)} reports is over the limit of {max_reports}", len(items)
        )
    return items


def validate_batch(
    items: list[object], scope: Scope, known: Collection[str], token_name: str | None
) -> list[DemandReport]:
    """The batch as reports (deduplicated, last value wins) or :class:`BatchRefused`."""
    n = len(items)
    pairs = [_shape(i, item, n) for i, item in enumerate(items)]
    for i, (lane, _) in enumerate(pairs):
        if not scope.may_report_lane(lane):
            who = f"token {echo(token_name)} ({scope})" if token_name else f"scope {scope}"
            raise BatchRefused(
                403, f"reports[{i}]: lane {echo(lane)} is outside the scope of {who}", n, i, lane
            )
    for i, (lane, demand) in enumerate(pairs):
        if lane not in known:
            raise BatchRefused(
                422, f"reports[{i}]: lane {echo(lane)} is not in the topology", n, i, lane
            )
        problem = DEMAND.range_problem(demand)
        if problem is not None:
            raise BatchRefused(
                422, f"reports[{i}]: demand of lane {echo(lane)} {problem}", n, i, lane
            )
    last = dict(pairs)
    return [DemandReport(lane, demand) for lane, demand in last.items()]


def _shape(i: int, item: object, n: int) -> tuple[str, float]:
    if not isinstance(item, dict):
        raise BatchRefused(422, f"reports[{i}]: must be an object {REPORT.outline()}", n, i)
    lane = item.get("lane")
    problem = LANE_KEY.problem(lane)
    if problem is not None:
        raise BatchRefused(422, f"reports[{i}]: field 'lane' {problem}", n, i)
    assert isinstance(lane, str)  # the shape says so
    extra = REPORT.unknown(item)
    if extra:
        raise BatchRefused(422, f"reports[{i}]: unknown field {echo(str(extra[0]))}", n, i, lane)
    demand = item.get("demand")
    problem = DEMAND.type_problem(demand)
    if problem is not None:
        raise BatchRefused(
            422, f"reports[{i}]: field 'demand' of lane {echo(lane)} {problem}", n, i, lane
        )
    assert isinstance(demand, int | float)
    try:
        return lane, float(demand)
    except OverflowError:  # an integer too large for a float
        return lane, math.inf


def _json_problem(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at line {exc.lineno}, column {exc.colno}"
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if "digits" in str(exc):  # int() refuses over 4,300 digits (CPython's conversion limit)
        return "a number of over 4,300 digits"
    return "not valid JSON"
