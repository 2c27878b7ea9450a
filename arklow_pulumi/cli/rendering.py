"""Render results for machines (JSON, the stable contract) and for people (aligned tables)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence

from arklow_pulumi.core.allocating import Allocation, LaneResult, LaneResults


def number(value: float | None) -> float | int | None:
    """Integral floats print as integers; everything else as is."""
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def allocation_document(result: Allocation) -> dict[str, object]:
    return {
        "lanes": {
            key: {
                "demand": number(lane.demand),
                "allocation": number(lane.allocation),
                "held": number(lane.held),
                "admission": number(lane.admission),
            }
            for key, lane in result.lanes.items()
        },
        "pools": {
            name: {
                "resource": pool.resource,
                "capacity": number(pool.capacity),
                "demand": number(pool.demand),
                "pressure": number(pool.pressure),
                "state": pool.state,
                "desired_replicas": pool.desired_total,
            }
            for name, pool in result.pools.items()
        },
    }


def allocation_json(result: Allocation) -> str:
    """The JSON contract, one lane or pool per line: readable, and fast for 100,000 lanes
    (``json.dumps`` with an indent falls back to the pure-Python encoder). Strict JSON: a value
    that is not finite raises instead of printing ``Infinity`` or ``NaN``."""
    rows = list(_lane_rows(result.lanes))
    # each distinct number's text, made once (demands, limits and zeros repeat across lanes;
    # 0.0 and -0.0 are one key and both print as 0)
    distinct: set[float] = set().union(*list(zip(*rows, strict=True))[1:]) if rows else set()
    num = {v: _json_number(v) for v in distinct}
    lanes = [
        f'    {_key(key)}: {{"demand": {num[demand]}, "allocation": {num[allocation]}, '
        f'"held": {num[held]}, "admission": {num[admission]}}}'
        for key, demand, allocation, held, admission in rows
    ]
    pools = [
        f'    {_key(name)}: {{"resource": {_key(pool.resource)}, '
        f'"capacity": {_json_number(pool.capacity)}, "demand": {_json_number(pool.demand)}, '
        f'"pressure": {_json_number(pool.pressure)}, "state": "{pool.state}", '
        f'"desired_replicas": {pool.desired_total}}}'
        for name, pool in result.pools.items()
    ]
    return "{\n" + ",\n".join([_section("lanes", lanes), _section("pools", pools)]) + "\n}"


_key = json.encoder.encode_basestring_ascii


def _section(name: str, entries: list[str]) -> str:
    if not entries:
        return f'  "{name}": {{}}'
    return f'  "{name}": {{\n' + ",\n".join(entries) + "\n  }"


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


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.2e}"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: set[int]) -> list[str]:
    widths = [
        max(len(h), *(len(r[k]) for r in rows)) if rows else len(h) for k, h in enumerate(headers)
    ]

    def line(cells: Sequence[str]) -> str:
        parts = [
            c.rjust(w) if k in right else c.ljust(w)
            for k, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    return [line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)]


def allocation_table(result: Allocation, color: bool = False) -> str:
    pool_rows = [
        [
            name,
            p.resource,
            p.state,
            _fmt(p.capacity),
            _fmt(p.demand),
            _fmt(p.pressure),
            str(p.desired_total),
        ]
        for name, p in result.pools.items()
    ]
    lane_rows = [
        [
            key,
            _fmt(lane.demand),
            _fmt(lane.allocation),
            _fmt(lane.admission),
            _fmt(lane.held),
            "HELD" if lane.held > 0 else "",
        ]
        for key, lane in result.lanes.items()
    ]
    out = ["POOLS"]
    out += table(
        ["pool", "resource", "state", "capacity", "demand", "pressure", "replicas"],
        pool_rows,
        right={3, 4, 5, 6},
    )
    out += ["", "LANES"]
    lines = table(
        ["lane", "demand", "allocation", "admission", "held", ""], lane_rows, right={1, 2, 3, 4}
    )
    held = sum(1 for lane in result.lanes.values() if lane.held > 0)
    if color:
        lines = [f"\x1b[1;31m{line}\x1b[0m" if line.endswith("HELD") else line for line in lines]
    out += lines
    out += ["", f"{held} of {len(result.lanes)} lanes have work held back by pool sharing"]
    return "\n".join(out)
