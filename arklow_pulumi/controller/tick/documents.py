"""A published tick as a JSON document and back: the runtime store keeps it in this form, and the
HTTP answers of docs/api.md are views of the
:class:`~arklow_pulumi.controller.ports.Published` value (``/v1/admission``: ``tick``, ``time``,
``lanes``; ``/v1/pools``: ``tick``, ``pools``), rendered by :func:`lane_view_document` and
:func:`pool_view_document`.

Lanes carry one field beyond the contract's four, ``stale``: the lane had no report fresher than
the TTL, so its last admission was kept.

Every tick stores its document, and a text of 10,000 lanes' numbers is most of a tick's writing
(a float's decimal text costs about a microsecond), so the stored document keeps the lanes
*packed*: ``lane_keys``, the lanes in order, and ``lane_numbers``, base64 of little-endian
float64s, five per lane (demand, allocation, held, admission, stale as 0 or 1): exact to the bit
and made in C. Pools stay plain JSON. :func:`published_from_document` also reads the earlier form
(``lanes``: one object per lane), so a store written before keeps serving after an upgrade.
"""

from __future__ import annotations

import base64
import json
import sys
from array import array
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from itertools import chain
from json.encoder import encode_basestring_ascii
from typing import Any

from arklow_pulumi.controller.ports import (
    LaneColumns,
    LaneView,
    PoolView,
    Published,
    TargetView,
)
from arklow_pulumi.topology_documents import picked

LANE_FIELDS = len(LaneView._fields)  # demand, allocation, held, admission, stale


def published_json(published: Published) -> str:
    """The stored form (see the module doc) as the JSON text the store keeps (the lane keys' text
    is made once per list of lanes: every tick of one topology has the same; the pools' text is
    written directly, see :func:`pools_json`)."""
    head = json.dumps({"tick": published.tick, "time": published.time.isoformat()})
    return (
        f'{head[:-1]},"lane_keys":{_keys_json(tuple(published.lanes))},'
        f'"lane_numbers":"{_packed(published.lanes)}",'
        f'"pools":{pools_json(published.pools)}}}'
    )


class _Unusual(Exception):
    """A pool figure the direct text does not write (not a plain finite float or int)."""


def pools_json(pools: Mapping[str, PoolView]) -> str:
    """``json.dumps({name: pool_view_document(pool) ...}, separators=(",", ":"))``, the same text to
    the character, written directly: a tick publishes 1,000 pools and more, and the dictionaries
    plus the generic encoder cost several times the text itself. Names and strings are escaped by
    the encoder's own function, plain floats written as ``float.__repr__`` and ints as
    ``int.__repr__``, as the encoder writes them. Anything else (a NaN or infinite figure, which
    the encoder writes as ``NaN`` or ``Infinity``; a bool, ``None`` or a subclass where a
    number is expected; a name that is not a string) goes through the encoder as before."""
    try:
        return "{" + ",".join([f"{_text(name)}:{_pool_json(p)}" for name, p in pools.items()]) + "}"
    except (_Unusual, TypeError):
        documents = {name: pool_view_document(pool) for name, pool in pools.items()}
        return json.dumps(documents, separators=(",", ":"))


_text = encode_basestring_ascii  # the encoder's own escaping of a string (ensure_ascii)

# A pool's capacity changes only when its groups do: its text, by value, is kept (a float's
# decimal text costs about a microsecond; a lookup, a twentieth of that). Two unequal floats
# never have the same text and two equal ones other than 0.0 and -0.0 have the same bits.
_CAPACITY_TEXT: dict[float, str] = {}
_CAPACITY_TEXTS = 20_000  # then started again: a few MB at most


def _pool_json(pool: PoolView) -> str:
    capacity, demand, pressure = pool.capacity, pool.demand, pool.pressure
    desired = pool.desired_replicas
    # x - x == 0.0 is False for NaN and the infinities
    if not (
        type(capacity) is float
        and type(demand) is float
        and type(desired) is int
        and capacity - capacity == 0.0
        and demand - demand == 0.0
    ):
        raise _Unusual
    capacity_text = _CAPACITY_TEXT.get(capacity)
    if capacity_text is None:
        capacity_text = repr(capacity)
        if capacity:  # never 0.0: -0.0 is equal to it, and written "-0.0"
            if len(_CAPACITY_TEXT) >= _CAPACITY_TEXTS:
                _CAPACITY_TEXT.clear()
            _CAPACITY_TEXT[capacity] = capacity_text
    if pressure is None:
        pressure_text = "null"
    elif type(pressure) is float and pressure - pressure == 0.0:
        pressure_text = repr(pressure)
    else:
        raise _Unusual
    targets = []
    for name, t in pool.targets.items():
        want, serving, pending, low, high = t.desired, t.in_service, t.pending, t.min, t.max
        if not (
            type(want) is int
            and type(serving) is int
            and type(pending) is int
            and type(low) is int
            and type(high) is int
        ):
            raise _Unusual
        targets.append(
            f'{_text(name)}:{{"desired":{want},"in_service":{serving},"pending":{pending},'
            f'"min":{low},"max":{high}}}'
        )
    return (
        f'{{"resource":{_text(pool.resource)},"capacity":{capacity_text},"demand":{demand!r},'
        f'"pressure":{pressure_text},"state":{_text(pool.state)},'
        f'"desired_replicas":{desired},"targets":{{{",".join(targets)}}}}}'
    )


@lru_cache(maxsize=4)
def _keys_json(keys: tuple[str, ...]) -> str:
    return json.dumps(keys, separators=(",", ":"))


def _packed(lanes: Mapping[str, LaneView]) -> str:
    if isinstance(lanes, LaneColumns):
        stale = lanes.stale
        flags = [1.0 if key in stale else 0.0 for key in lanes] if stale else [0.0] * len(lanes)
        numbers = array("d", [0.0]) * (LANE_FIELDS * len(lanes))
        for k, column in enumerate((*lanes.columns(), flags)):
            numbers[k::LANE_FIELDS] = array("d", column)
    else:
        numbers = array("d", chain.from_iterable(lanes.values()))  # a bool packs as 0.0 or 1.0
    if sys.byteorder != "little":
        numbers.byteswap()
    return base64.b64encode(numbers.tobytes()).decode("ascii")


def _unpacked(keys: Sequence[str], text: str) -> LaneColumns:
    numbers = array("d")
    numbers.frombytes(base64.b64decode(text))
    if sys.byteorder != "little":
        numbers.byteswap()
    if len(numbers) != LANE_FIELDS * len(keys):
        raise ValueError(f"{len(numbers)} packed numbers for {len(keys)} lanes")
    n = LANE_FIELDS
    demand, allocation, held, admission, flags = (numbers[k::n] for k in range(n))
    stale = [key for key, flag in zip(keys, flags, strict=True) if flag != 0.0]
    return LaneColumns(keys, demand, allocation, held, admission, stale)


def lane_view_document(lane: LaneView) -> dict[str, Any]:
    return {
        "demand": lane.demand,
        "allocation": lane.allocation,
        "held": lane.held,
        "admission": lane.admission,
        "stale": lane.stale,
    }


POOL_VIEW_FIELDS = ("resource", "capacity", "demand", "pressure", "state", "desired_replicas")
TARGET_VIEW_FIELDS = ("desired", "in_service", "pending", "min", "max")


def pool_view_document(pool: PoolView) -> dict[str, Any]:
    targets = {name: picked(t, TARGET_VIEW_FIELDS) for name, t in pool.targets.items()}
    return {**picked(pool, POOL_VIEW_FIELDS), "targets": targets}


def published_from_document(doc: Mapping[str, Any]) -> Published:
    return Published(
        tick=int(doc["tick"]),
        time=datetime.fromisoformat(doc["time"]).astimezone(UTC),
        lanes=_lanes(doc),
        pools={name: _pool(value) for name, value in doc["pools"].items()},
    )


def _lanes(doc: Mapping[str, Any]) -> Mapping[str, LaneView]:
    if "lane_keys" in doc:
        return _unpacked(doc["lane_keys"], doc["lane_numbers"])
    return {key: _lane(value) for key, value in doc["lanes"].items()}


def _lane(doc: Mapping[str, Any]) -> LaneView:
    return LaneView(
        demand=float(doc["demand"]),
        allocation=float(doc["allocation"]),
        held=float(doc["held"]),
        admission=float(doc["admission"]),
        stale=bool(doc.get("stale", False)),
    )


def _pool(doc: Mapping[str, Any]) -> PoolView:
    pressure = doc["pressure"]
    return PoolView(
        resource=doc["resource"],
        capacity=float(doc["capacity"]),
        demand=float(doc["demand"]),
        pressure=None if pressure is None else float(pressure),
        state=doc["state"],
        desired_replicas=int(doc["desired_replicas"]),
        targets={
            name: TargetView(
                desired=int(t["desired"]),
                in_service=int(t["in_service"]),
                pending=int(t["pending"]),
                min=int(t["min"]),
                max=int(t["max"]),
            )
            for name, t in doc.get("targets", {}).items()
        },
    )
