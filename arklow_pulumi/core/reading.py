"""Read topology and demand documents straight into core values, without the pydantic models.

The fast route of ``arklow allocate`` and ``arklow validate``: importing pydantic and building the
spec models costs more than a whole 10,000-lane allocation, and validating through them builds
every object twice. This reader walks the parsed document once, checks each field against the
same rules as :mod:`arklow_pulumi.core.spec` (types strict as the models', the ranges of
:mod:`arklow_pulumi.core.limits`, the name rule, ``null`` meaning a field's default, no unknown
field) and builds the :class:`~arklow_pulumi.core.topology.Topology` directly; the rules that span
objects are then checked by :func:`~arklow_pulumi.core.building.assemble_topology`, the same code
as for specs.

It has no messages of its own. On anything it does not accept with certainty it returns ``None``,
and the caller reads the document through the models, which name every problem
(:mod:`arklow_pulumi.loading`). So it cannot disagree with the models about what is wrong, and
``tests/core/test_reading.py`` holds it to them, value for value, about what is right.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from arklow_pulumi.core.building import Declared, assemble_topology, owner_of
from arklow_pulumi.core.limits import (
    DEFAULT_HEADROOM,
    MAX_COUNT,
    MAX_FACTOR,
    MAX_HEADROOM,
    MAX_NAME_LENGTH,
    MAX_UNITS,
    MIN_CAPACITY,
    MIN_FACTOR,
    MIN_UNITS_PER_REPLICA,
    TARGET_KINDS,
)
from arklow_pulumi.core.native import load_compiled
from arklow_pulumi.core.policy import DEFAULT_POLICY, ScalePolicy
from arklow_pulumi.core.topology import (
    EMPTY,
    Destination,
    GroupRef,
    Lane,
    Pool,
    ScaleTarget,
    Topology,
    frozen_map,
)
from arklow_pulumi.core.validating import destination_head_is_plain, lanes_are_plain

__all__ = ["read_demand", "read_topology"]

_TOPOLOGY = frozenset({"destinations", "pools"})
_DESTINATION = frozenset({"name", "resources", "lanes", "standalone_capacity"})
_LANE = frozenset({"name", "limit", "weight", "cost"})
_POOL = frozenset(
    {"name", "resource", "capacity", "headroom", "members", "scale_targets", "scale_policy"}
)
_TARGET = frozenset(
    {
        "kind",
        "name",
        "group",
        "region",
        "zone",
        "project",
        "min_replicas",
        "max_replicas",
        "units_per_replica",
        "replicas",
        "override_policies",
    }
)
_POLICY = frozenset(
    {
        "max_step_up",
        "max_step_up_percent",
        "scale_down_window_s",
        "max_step_down",
        "max_step_down_percent",
        "tolerance",
    }
)
_DEMAND = frozenset({"lanes"})


# ``Lane(...)`` spelled out for the reader's loop: the frozen dataclass's ``__init__`` makes one
# ``object.__setattr__`` call per field; setting the slots directly builds the same object in a
# third of the time. ``tests/core/test_reading.py`` checks these are all of Lane's fields.
LANE_FIELDS = ("destination", "name", "limit", "weight", "cost")
_SET_DESTINATION, _SET_NAME, _SET_LIMIT, _SET_WEIGHT, _SET_COST = (
    Lane.__dict__[field].__set__ for field in LANE_FIELDS
)


_LANE_SETTERS = tuple(Lane.__dict__[field] for field in LANE_FIELDS)
_NATIVE_LIMITS = (MAX_NAME_LENGTH, MAX_UNITS, MIN_FACTOR, MAX_FACTOR)


_native = load_compiled("arklow_pulumi.core._reading")
NATIVE: bool = _native is not None
"""Whether lanes are read by the compiled loop (else by :func:`_lanes`)."""


class _Defer(Exception):
    """Not plainly valid: the models read this document and say what is wrong."""


def read_topology(raw: object) -> Topology | None:
    """The topology of a parsed document, or ``None`` if a field is not plainly valid (read it
    through :func:`~arklow_pulumi.core.parsing.parse_topology` then). Raises
    :class:`~arklow_pulumi.core.errors.InvalidInput` when every field is valid but a rule that
    spans objects is broken, as :func:`~arklow_pulumi.core.building.build_topology` does."""
    try:
        doc = _object(raw if raw is not None else {}, _TOPOLOGY)
        read = [_destination(d) for d in _list(doc.get("destinations"))]
        declared = [_pool(p) for p in _list(doc.get("pools"))]
    except _Defer:
        return None
    destinations = [destination for destination, _plain in read]
    plain = all([plain for _destination, plain in read])
    return assemble_topology(destinations, declared, destinations_plain=plain)


def read_demand(raw: object) -> dict[str, float] | None:
    """The lanes' demand of a parsed demand report, or ``None`` if it is not plainly valid (read
    it through :func:`~arklow_pulumi.core.parsing.parse_demand` then)."""
    try:
        doc = _object(raw if raw is not None else {}, _DEMAND)
        lanes = doc.get("lanes")
        if lanes is None:
            return {}
        if type(lanes) is not dict:
            raise _Defer
        out: dict[str, float] = {}
        for key, value in lanes.items():
            if type(key) is not str:
                raise _Defer
            out[key] = _units(value)
        return out
    except _Defer:
        return None


# -- fields -----------------------------------------------------------------------------------


def _object(value: object, fields: frozenset[str]) -> dict[str, Any]:
    if type(value) is not dict or not value.keys() <= fields:
        raise _Defer
    return value


def _list(value: object) -> list[Any]:
    if value is None:
        return []
    if type(value) is not list:
        raise _Defer
    return value


def _name(value: object) -> str:
    if type(value) is str and 0 < len(value) <= MAX_NAME_LENGTH and value.isprintable():
        return value
    raise _Defer


def _optional_name(value: object) -> str | None:
    return None if value is None else _name(value)


def _names(value: object) -> list[str]:
    return [_name(v) for v in _list(value)]


def _number(value: object, low: float, high: float) -> float:
    kind = type(value)
    if (kind is float or kind is int) and low <= value <= high:  # type: ignore[operator]
        return float(value)  # type: ignore[arg-type]
    raise _Defer  # a bool, a string, NaN, an infinity, out of range


def _units(value: object) -> float:
    return _number(value, 0.0, MAX_UNITS)


def _capacity(value: object) -> float:
    capacity = _units(value)
    if 0 < capacity < MIN_CAPACITY:
        raise _Defer
    return capacity


def _count(value: object, low: int = 0) -> int:
    if type(value) is int and low <= value <= MAX_COUNT:
        return value
    raise _Defer


def _or_default(value: object, default: Any, read: Callable[[object], Any]) -> Any:
    return default if value is None else read(value)


def _mapping(value: object, read: Callable[[object], float]) -> dict[str, float]:
    if value is None:
        return {}
    if type(value) is not dict:
        raise _Defer
    return {_name(k): read(v) for k, v in value.items()}


# -- objects ----------------------------------------------------------------------------------


def _destination(value: object) -> tuple[Destination, bool]:
    """The destination, and whether
    :func:`~arklow_pulumi.core.validating.destination_is_plain` holds of it (checked while its
    lanes are read)."""
    if type(value) is not dict or not value.keys() <= _DESTINATION:
        raise _Defer
    get = value.get
    name: Any = get("name")
    if not (type(name) is str and 0 < len(name) <= MAX_NAME_LENGTH and name.isprintable()):
        raise _Defer
    resources = tuple(_names(get("resources")))
    capacity = get("standalone_capacity")
    if capacity is None or (type(capacity) is dict and not capacity):
        standalone = EMPTY
    else:
        standalone = frozen_map(_mapping(capacity, _capacity))
    if _native is not None:
        read = _native.read_lanes(
            name, get("lanes"), resources, Lane, _LANE_SETTERS, EMPTY, _NATIVE_LIMITS
        )
        if read is None:
            raise _Defer
        lanes, plain = read
    else:
        lanes = _lanes(name, get("lanes"))
        plain = lanes_are_plain(lanes, set(resources))
    destination = Destination(name, resources, lanes, standalone)
    return destination, plain and destination_head_is_plain(name, resources, standalone)


def _lanes(destination: str, value: object) -> tuple[Lane, ...]:
    """A destination's lanes: the same checks as the helpers above, written out in one loop
    (a topology can have 100,000 lanes)."""
    lanes: list[Lane] = []
    append_lane = lanes.append
    new = object.__new__
    set_destination, set_name, set_limit, set_weight, set_cost = (
        _SET_DESTINATION,
        _SET_NAME,
        _SET_LIMIT,
        _SET_WEIGHT,
        _SET_COST,
    )
    for doc in _list(value):
        if type(doc) is not dict or not doc.keys() <= _LANE:
            raise _Defer
        get = doc.get
        name: Any = get("name")
        limit: Any = get("limit")
        weight: Any = get("weight")
        cost: Any = get("cost")
        if not (type(name) is str and 0 < len(name) <= MAX_NAME_LENGTH and name.isprintable()):
            raise _Defer
        kind = type(limit)
        if not ((kind is float or kind is int) and 0.0 <= limit <= MAX_UNITS):
            raise _Defer
        if kind is int:
            limit = float(limit)
        if weight is None:
            weight = 1.0
        else:
            kind = type(weight)
            if not ((kind is float or kind is int) and MIN_FACTOR <= weight <= MAX_FACTOR):
                raise _Defer
            if kind is int:
                weight = float(weight)
        lane = new(Lane)
        set_destination(lane, destination)
        set_name(lane, name)
        set_limit(lane, limit)
        set_weight(lane, weight)
        set_cost(lane, EMPTY if cost is None else _costs(cost))
        append_lane(lane)
    return tuple(lanes)


def _costs(value: object) -> Mapping[str, float]:
    if type(value) is not dict:
        raise _Defer
    if not value:
        return EMPTY
    costs: dict[str, float] = {}
    for resource, cost in value.items():
        if not (
            type(resource) is str
            and 0 < len(resource) <= MAX_NAME_LENGTH
            and resource.isprintable()
        ):
            raise _Defer
        kind = type(cost)
        if not ((kind is float or kind is int) and MIN_FACTOR <= cost <= MAX_FACTOR):
            raise _Defer
        costs[resource] = float(cost) if kind is int else cost
    return MappingProxyType(costs)


def _pool(value: object) -> Declared:
    doc = _object(value, _POOL)
    get = doc.get
    name, resource = _name(get("name")), _name(get("resource"))
    members = _names(get("members"))
    pool = Pool(
        name=name,
        resource=resource,
        capacity=_or_default(get("capacity"), 0.0, _capacity),
        headroom=_or_default(get("headroom"), DEFAULT_HEADROOM, _headroom),
        scale_targets=tuple(_target(t) for t in _list(get("scale_targets"))),
        owner=owner_of(name, resource, members),
        scale_policy=_or_default(get("scale_policy"), DEFAULT_POLICY, _policy),
    )
    return pool, members


def _headroom(value: object) -> float:
    return _number(value, 0.0, MAX_HEADROOM)


def _target(value: object) -> ScaleTarget:
    doc = _object(value, _TARGET)
    get = doc.get
    kind = get("kind")
    if type(kind) is not str or kind not in TARGET_KINDS:
        raise _Defer
    name = _name(get("name"))
    min_replicas = _count(get("min_replicas"))
    override = get("override_policies")
    if override is not None and type(override) is not bool:
        raise _Defer
    group = GroupRef(
        kind=kind,  # one of TARGET_KINDS, checked above
        name=_optional_name(get("group")) or name,
        region=_optional_name(get("region")),
        zone=_optional_name(get("zone")),
        project=_optional_name(get("project")),
    )
    return ScaleTarget(
        name=name,
        group=group,
        min_replicas=min_replicas,
        max_replicas=_count(get("max_replicas")),
        units_per_replica=_number(get("units_per_replica"), MIN_UNITS_PER_REPLICA, MAX_UNITS),
        replicas=_or_default(get("replicas"), min_replicas, _count),
        override_policies=bool(override),
    )


def _policy(value: object) -> ScalePolicy:
    doc = _object(value, _POLICY)
    get = doc.get
    d = DEFAULT_POLICY
    return ScalePolicy(
        max_step_up=_or_default(get("max_step_up"), d.max_step_up, _step),
        max_step_up_percent=_or_default(get("max_step_up_percent"), d.max_step_up_percent, _units),
        scale_down_window_s=_or_default(get("scale_down_window_s"), d.scale_down_window_s, _units),
        max_step_down=_or_default(get("max_step_down"), d.max_step_down, _step),
        max_step_down_percent=_or_default(
            get("max_step_down_percent"), d.max_step_down_percent, _percent
        ),
        tolerance=_or_default(get("tolerance"), d.tolerance, _fraction),
    )


def _step(value: object) -> int:
    return _count(value, low=1)


def _percent(value: object) -> float:
    return _number(value, 0.0, 100.0)


def _fraction(value: object) -> float:
    return _number(value, 0.0, 1.0)
