"""Turn raw data (parsed YAML, stack config, resource inputs) into specs, or into named problems.

Pydantic reports a location such as ``('pools', 2, 'scale_targets', 0, 'min_replicas')``; people
need ``pool 'gpu', scale target 'asg-a': field 'min_replicas'``. The raw data is walked along the
location to find each object's name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from arklow_pulumi.core.errors import InvalidInput, Problem
from arklow_pulumi.reading.spec import RULE_ERROR, DemandSpec, TopologySpec

_LABELS = {
    "destinations": "destination",
    "lanes": "lane",
    "pools": "pool",
    "scale_targets": "scale target",
    "members": "member",
    "resources": "resource",
}

_NAME_LISTS = ("resources", "members")  # lists of names: an element is a field, not an object

M = TypeVar("M", bound=BaseModel)


def parse_topology(raw: object, source: str = "topology") -> TopologySpec:
    """Validate raw topology data field by field; raise :class:`InvalidInput` per problem."""
    return _parse(TopologySpec, raw, source)


def parse_demand(raw: object, source: str = "demand") -> DemandSpec:
    """Validate a raw demand report; raise :class:`InvalidInput` naming each problem."""
    return _parse(DemandSpec, raw, source)


def parse_model(model: type[M], raw: object, source: str) -> M:
    """Validate raw data against any spec model, with problems named like the topology's."""
    return _parse(model, raw, source)


def _parse(model: type[M], raw: object, source: str) -> M:
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise InvalidInput.one(source, "(document)", f"expected a mapping, got {_kind(raw)}")
    try:
        return model.model_validate(dict(raw))
    except ValidationError as exc:
        raise InvalidInput(_problem(source, raw, err) for err in exc.errors()) from exc


def _problem(source: str, raw: Any, err: Mapping[str, Any]) -> Problem:
    loc: Sequence[str | int] = err["loc"]
    objects: list[str] = []
    fields: list[str] = []
    node: Any = raw
    i = 0
    while i < len(loc):
        key = loc[i]
        child = _child(node, key)
        label = _LABELS.get(str(key))
        nxt = loc[i + 1] if i + 1 < len(loc) else None
        if label and isinstance(nxt, int) and isinstance(child, list) and key not in _NAME_LISTS:
            element = child[nxt] if nxt < len(child) else None
            objects.append(f"{label} {_name_of(element, nxt)}")
            node = element
            i += 2
            continue
        fields.append(str(key) if len(str(key)) <= 300 else _short(key, 300))
        node = child
        i += 1
    obj = ", ".join(objects) if objects else source
    field = ".".join(fields) if fields else "(object)"
    return Problem(obj, field, _message(err))


def _child(node: Any, key: str | int) -> Any:
    if isinstance(node, Mapping):
        return node.get(key)
    if isinstance(node, list) and isinstance(key, int) and key < len(node):
        return node[key]
    return None


def _name_of(element: Any, index: int) -> str:
    if isinstance(element, Mapping) and isinstance(element.get("name"), str):
        return _short(element["name"], 300)
    return f"#{index + 1}"


def _message(err: Mapping[str, Any]) -> str:
    from arklow_pulumi.reading.yaml_values import Yaml11Scalar  # PyYAML: only when a problem

    msg = str(err["msg"])
    if err.get("type") == "missing":
        return "is required"
    if err.get("type") == "extra_forbidden":
        return "is not a known field"
    if err.get("type") == RULE_ERROR:  # a field rule: its own words (core.limits)
        return str(err["ctx"]["rule"](err["input"]))
    if err.get("type") == "value_error":  # our own checks: their text says what was wrong
        return msg.removeprefix("Value error, ")
    value = err.get("input")
    if isinstance(value, Yaml11Scalar):  # 1:30, 017, 0o17, yes, on, ... where it is not text
        want = "true or false" if "bool" in str(err.get("type")) else "the number you mean"
        return (
            f"{msg[0].lower()}{msg[1:]} (got {_short(value)} at line {value.line}: "
            f"{value.reading}; write {want})"
        )
    if isinstance(value, (str, int, float, bool)) or value is None:
        return f"{msg[0].lower()}{msg[1:]} (got {_short(value)})"
    return f"{msg[0].lower()}{msg[1:]}"


def _short(value: object, limit: int = 60) -> str:
    """A value as it is echoed back: its repr, shortened (a name can be long, an integer can
    have hundreds of digits)."""
    text = repr(value) if not isinstance(value, int) or abs(value) < 10**limit else "a huge number"
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def _kind(value: object) -> str:
    for kind, name in ((bool, "a boolean"), (list, "a list"), (str, "a string")):
        if isinstance(value, kind):
            return name
    return "a number" if isinstance(value, (int, float)) else type(value).__name__
