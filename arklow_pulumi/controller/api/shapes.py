"""JSON shapes: small declarative descriptions of a JSON value that both check a value and write
its JSON Schema, so the rule the API applies and the rule its OpenAPI document publishes are one
object (:mod:`.bodies` declares the API's bodies with them, :mod:`.openapi` publishes them).

A check returns ``None`` when the value keeps the shape, else what the value must be, worded as
:mod:`arklow_pulumi.core.limits` words its rules (``must be a number``); the caller names the
field and the item. A :class:`Text` pattern is applied as JSON Schema applies ``pattern`` (a
search of the pattern as written, so it carries its own anchors), and a :class:`Number`'s range
is :func:`~arklow_pulumi.core.limits.range_problem` over the bounds the schema states.

Answers are shaped after the values they render: :func:`record_of` reads a dataclass's or named
tuple's field types (``float | None``, ``Literal[...]``, ``Mapping[str, View]``) into shapes.
"""

from __future__ import annotations

import re
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, Union, get_args, get_origin, get_type_hints

from arklow_pulumi.core.limits import range_problem

JsonSchema = dict[str, Any]

__all__ = [
    "Choice",
    "Flag",
    "Items",
    "JsonSchema",
    "Named",
    "Nullable",
    "Number",
    "Record",
    "Shape",
    "Table",
    "Text",
    "record_of",
]


class Shape(Protocol):
    def schema(self) -> JsonSchema: ...


def _with(schema: JsonSchema, **optional: object) -> JsonSchema:
    """``schema`` plus each keyword that is not ``None`` (``max_length`` as ``maxLength``)."""
    for key, value in optional.items():
        if value is not None:
            head, *rest = key.split("_")
            schema[head + "".join(word.title() for word in rest)] = value
    return schema


def _anything(value: str) -> object:
    return value


@dataclass(frozen=True, slots=True)
class Text:
    """A JSON string. ``what`` is how a refusal names the rule (``must be <what>``)."""

    pattern: str | None = None
    what: str = "a string"
    min_length: int | None = None
    max_length: int | None = None
    format: str | None = None
    description: str | None = None
    _search: Callable[[str], object] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        search = re.compile(self.pattern).search if self.pattern is not None else _anything
        object.__setattr__(self, "_search", search)

    def schema(self) -> JsonSchema:
        return _with(
            {"type": "string"},
            pattern=self.pattern,
            min_length=self.min_length,
            max_length=self.max_length,
            format=self.format,
            description=self.description,
        )

    def problem(self, value: object) -> str | None:
        if isinstance(value, str) and self._search(value) is not None and self._fits(value):
            return None
        return f"must be {self.what}"

    def _fits(self, value: str) -> bool:
        low, high = self.min_length, self.max_length
        return (low is None or len(value) >= low) and (high is None or len(value) <= high)


@dataclass(frozen=True, slots=True)
class Number:
    """A JSON number (never a boolean), an integer when ``integer``; in [low, high] when given."""

    low: float | None = None
    high: float | None = None
    integer: bool = False
    description: str | None = None

    def schema(self) -> JsonSchema:
        return _with(
            {"type": "integer" if self.integer else "number"},
            minimum=self.low,
            maximum=self.high,
            description=self.description,
        )

    def type_problem(self, value: object) -> str | None:
        kinds = int if self.integer else (int, float)
        if isinstance(value, bool) or not isinstance(value, kinds):
            return "must be an integer" if self.integer else "must be a number"
        return None

    def range_problem(self, value: float) -> str | None:
        low = -float("inf") if self.low is None else self.low
        high = float("inf") if self.high is None else self.high
        return range_problem(value, low, high)


@dataclass(frozen=True, slots=True)
class Flag:
    description: str | None = None

    def schema(self) -> JsonSchema:
        return _with({"type": "boolean"}, description=self.description)


@dataclass(frozen=True, slots=True)
class Choice:
    """One of a few strings."""

    values: tuple[str, ...]
    description: str | None = None

    def schema(self) -> JsonSchema:
        return _with({"type": "string", "enum": list(self.values)}, description=self.description)


@dataclass(frozen=True, slots=True)
class Nullable:
    """``shape`` or ``null``."""

    shape: Shape
    description: str | None = None

    def schema(self) -> JsonSchema:
        inner = self.shape.schema()
        if isinstance(inner.get("type"), str) and "enum" not in inner:
            return _with({**inner, "type": [inner["type"], "null"]}, description=self.description)
        return _with({"anyOf": [inner, {"type": "null"}]}, description=self.description)


@dataclass(frozen=True, slots=True)
class Record:
    """A JSON object with exactly these fields (every one required unless ``optional``): the
    schema says ``additionalProperties: false``, and :meth:`unknown` finds the extra keys."""

    fields: Mapping[str, Shape]
    optional: frozenset[str] = frozenset()
    description: str | None = None
    _required: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_required", frozenset(self.fields) - self.optional)

    def schema(self) -> JsonSchema:
        return _with(
            {
                "type": "object",
                "required": [name for name in self.fields if name not in self.optional],
                "properties": {name: shape.schema() for name, shape in self.fields.items()},
                "additionalProperties": False,
            },
            description=self.description,
        )

    def outline(self) -> str:
        """The fields as a refusal lists them: ``{"lane", "demand"}``."""
        return "{" + ", ".join(f'"{name}"' for name in self.fields) + "}"

    def unknown(self, doc: Mapping[Any, Any]) -> list[str]:
        """The keys of ``doc`` that are not fields, sorted."""
        return sorted(str(key) for key in doc if key not in self.fields)

    def document(self, **values: object) -> dict[str, object]:
        """An answer of this shape: the fields in their declared order. Raises ``TypeError`` when
        ``values`` lack a required field or hold one that is not declared (a handler and the
        published schema disagreeing is a bug to find in tests, never a silent drift)."""
        names = values.keys()
        if not self._required <= names or not names <= self.fields.keys():
            missing = sorted(self._required - names)
            extra = sorted(names - self.fields.keys())
            raise TypeError(f"not this record's fields: missing {missing}, undeclared {extra}")
        return {name: values[name] for name in self.fields if name in values}


@dataclass(frozen=True, slots=True)
class Table:
    """A JSON object keyed by name: every value of ``values``'s shape."""

    values: Shape
    keys: Text | None = None
    description: str | None = None

    def schema(self) -> JsonSchema:
        schema: JsonSchema = {"type": "object", "additionalProperties": self.values.schema()}
        if self.keys is not None:
            schema["propertyNames"] = self.keys.schema()
        return _with(schema, description=self.description)


@dataclass(frozen=True, slots=True)
class Items:
    """A JSON array."""

    item: Shape
    max_items: int | None = None

    def schema(self) -> JsonSchema:
        return _with({"type": "array", "items": self.item.schema()}, max_items=self.max_items)


@dataclass(frozen=True, slots=True)
class Named:
    """A shape published once under ``components/schemas/<name>`` and referred to by name."""

    name: str
    shape: Shape

    def schema(self) -> JsonSchema:
        return {"$ref": f"#/components/schemas/{self.name}"}

    def definition(self) -> JsonSchema:
        return self.shape.schema()


def record_of(
    kind: type,
    names: Iterable[str] | None = None,
    known: Mapping[type, Shape] | None = None,
    descriptions: Mapping[str, str] | None = None,
) -> Record:
    """The record of a dataclass or named tuple's fields (``names``: those, in that order), each
    shaped after its type; ``known`` gives the shapes of nested value types."""
    hints = get_type_hints(kind)
    described = descriptions or {}
    fields = {}
    for name in names if names is not None else hints:
        shape = _shape_of(hints[name], known or {})
        if name in described:
            shape = _described(shape, described[name])
        fields[name] = shape
    return Record(fields)


def _shape_of(hint: object, known: Mapping[type, Shape]) -> Shape:
    simple: dict[object, Shape] = {
        bool: Flag(),
        int: Number(integer=True),
        float: Number(),
        str: Text(),
    }
    if hint in simple:
        return simple[hint]
    if isinstance(hint, type) and hint in known:
        return known[hint]
    origin, args = get_origin(hint), get_args(hint)
    if origin is Literal and all(isinstance(arg, str) for arg in args):
        return Choice(tuple(args))
    if origin in (Union, types.UnionType) and type(None) in args and len(args) == 2:
        (inner,) = (arg for arg in args if arg is not type(None))
        return Nullable(_shape_of(inner, known))
    if origin in (Mapping, dict) and args and args[0] is str:
        return Table(_shape_of(args[1], known))
    raise TypeError(f"no JSON shape for {hint!r}")


def _described(shape: Shape, text: str) -> Shape:
    if not hasattr(shape, "description"):
        raise TypeError(f"{shape!r} takes no description")
    return replace(shape, description=text)  # type: ignore[type-var]
