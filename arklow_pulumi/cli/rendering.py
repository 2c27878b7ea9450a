"""Render results for machines (JSON, the stable contract) and for people (aligned tables).

``arklow allocate`` prints one line per lane, 100,000 of them at the largest size measured: the
lane text is made once per distinct number (:func:`_lanes_json`) and joined once.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from arklow_pulumi.core.allocating import Allocation, LaneResult, LaneResults
from arklow_pulumi.text_tables import figure, table


def number(value: float | None) -> float | int | None:
    """Integral floats print as integers; everything else as is."""
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def allocation_json(result: Allocation) -> str:
    """The JSON contract, one lane or pool per line: readable, and fast for 100,000 lanes
    (``json.dumps`` with an indent falls back to the pure-Python encoder). Strict JSON: a value
    that is not finite raises instead of printing ``Infinity`` or ``NaN``."""
    lanes = _lanes_json(result.lanes)
    pools = [
        f'    {_key(name)}: {{"resource": {_key(pool.resource)}, '
        f'"capacity": {_json_number(pool.capacity)}, "demand": {_json_number(pool.demand)}, '
        f'"pressure": {_json_number(pool.pressure)}, "state": "{pool.state}", '
        f'"desired_replicas": {pool.desired_total}}}'
        for name, pool in result.pools.items()
    ]
    # one join: the lane text is megabytes, each concatenation would copy it again
    return "".join(
        ["{\n", *_section("lanes", lanes), ",\n", *_section("pools", ",\n".join(pools)), "\n}"]
    )


def _lanes_json(lanes: Mapping[str, LaneResult]) -> str:
    """The lane entries of :func:`allocation_json`, joined."""
    rows = list(_lane_rows(lanes))
    # each distinct number's text, made once (demands, limits and zeros repeat across lanes;
    # 0.0 and -0.0 are one key and both print as 0)
    distinct: set[float] = set().union(*list(zip(*rows, strict=True))[1:]) if rows else set()
    num = {v: _json_number(v) for v in distinct}
    return ",\n".join(
        f'    {_key(key)}: {{"demand": {num[demand]}, "allocation": {num[allocation]}, '
        f'"held": {num[held]}, "admission": {num[admission]}}}'
        for key, demand, allocation, held, admission in rows
    )


_key = json.encoder.encode_basestring_ascii


def _section(name: str, body: str) -> list[str]:
    """The parts of a section of entries already joined (no entry is empty text)."""
    if not body:
        return [f'  "{name}": {{}}']
    return [f'  "{name}": {{\n', body, "\n  }"]


def _lane_rows(
    lanes: Mapping[str, LaneResult],
) -> Iterable[tuple[str, float, float, float, float]]:
    if isinstance(lanes, LaneResults):
        return lanes.rows()
    return (
        (key, lane.demand, lane.allocation, lane.held, lane.admission)
        for key, lane in lanes.items()
    )


def _json_number(value: float | None) -> str:
    """A number as strict JSON: integral floats as integers (as :func:`number`), else the
    shortest repr; NaN and infinities raise."""
    if value is None:
        return "null"
    if type(value) is int:  # (int.is_integer is Python 3.12's)
        return str(value)
    if value - value != 0:  # NaN or an infinity
        raise ValueError(f"not a finite number: {value!r}")
    if value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(value)


def allocation_table(result: Allocation, color: bool = False) -> str:
    pool_rows = [
        [
            name,
            p.resource,
            p.state,
            figure(p.capacity),
            figure(p.demand),
            figure(p.pressure),
            str(p.desired_total),
        ]
        for name, p in result.pools.items()
    ]
    out = ["POOLS"]
    out += table(
        ["pool", "resource", "state", "capacity", "demand", "pressure", "desired replicas"],
        pool_rows,
        right={3, 4, 5, 6},
    )
    text, held_count = _lanes_table(result.lanes, color)
    out += ["", "LANES", text]
    out += ["", f"{held_count} of {len(result.lanes)} lanes have work held back by pool sharing"]
    return "\n".join(out)


def _lanes_table(lanes: Mapping[str, LaneResult], color: bool) -> tuple[str, int]:
    """The LANES table of :func:`allocation_table` (lines joined) and how many lanes hold work
    back."""
    lane_rows = [
        [
            key,
            figure(lane.demand),
            figure(lane.allocation),
            figure(lane.admission),
            figure(lane.held),
            "HELD" if lane.held > 0 else "",
        ]
        for key, lane in lanes.items()
    ]
    lines = table(
        ["lane", "demand", "allocation", "admission", "held", "status"],
        lane_rows,
        right={1, 2, 3, 4},
    )
    held = sum(1 for lane in lanes.values() if lane.held > 0)
    if color:
        lines = [f"\x1b[1;31m{line}\x1b[0m" if line.endswith("HELD") else line for line in lines]
    return "\n".join(lines), held
