"""Topology values as plain documents (JSON-ready dicts) and store rows, and back: one shape per
value, derived from its field table (:mod:`arklow_pulumi.core.fields`).

Shared by the store's rows (:mod:`arklow_pulumi.store.snapshots`), the providers' inputs and
outputs (:mod:`arklow_pulumi.providers`) and ``arklow topology show``. The published tick the HTTP
API serves (lane admission, pool state) is not a topology value: its documents are
:mod:`arklow_pulumi.controller.tick.documents`.

A document holds the value's own fields (``FieldInfo.documented`` of its field table): not its
name, which is its caller's key (a lane's document, an element of a list, has it), nor its
relations. A lane's ``cost`` is ``None`` when it has none; a pool's ``scale_policy`` holds only
the fields that differ from the defaults, ``None`` when none do (``core.policy.policy_document``).
A store row holds the same under each field's column, a scale target's group in columns of its
own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from arklow_pulumi.core import topology as core
from arklow_pulumi.core.fields import FieldInfo, table
from arklow_pulumi.core.policy import ScalePolicy, policy_document
from arklow_pulumi.core.topology import EMPTY, GroupRef, Lane, frozen_map

__all__ = [
    "destination_document",
    "document",
    "group_document",
    "lane_document",
    "lane_from_document",
    "picked",
    "pool_document",
    "row_values",
    "target_document",
    "value_from_document",
    "value_from_row",
]

T = TypeVar("T")
PolicyReader = Callable[[Mapping[str, Any] | None], ScalePolicy]


def _encoded(info: FieldInfo, value: Any) -> Any:
    form = info.form
    if form == "names":
        return list(value)
    if form == "amounts":
        return dict(value)
    if form == "costs":
        return dict(value) or None
    if form == "policy":
        return policy_document(value)
    if form == "group":
        return document(value, with_key=True)
    if form == "owned":
        return [document(item, with_key=True) for item in value]
    return value


def document(value: Any, with_key: bool = False) -> dict[str, Any]:
    """A topology value's own fields as a plain document; ``with_key``: its name too."""
    return {
        info.name: _encoded(info, getattr(value, info.name))
        for info in table(type(value))
        if info.documented or (with_key and info.form == "key")
    }


def lane_document(lane: Lane) -> dict[str, Any]:
    return document(lane, with_key=True)


def destination_document(dest: core.Destination) -> dict[str, Any]:
    """A destination's own data (its name is the caller's key: ``name`` or ``arklow_name``)."""
    return document(dest)


def pool_document(pool: core.Pool) -> dict[str, Any]:
    """A pool's own data; its members and targets are relations, added by the caller."""
    return document(pool)


def group_document(group: GroupRef) -> dict[str, Any]:
    return document(group, with_key=True)


def target_document(target: core.ScaleTarget) -> dict[str, Any]:
    """A scale target's own data (its name and pool are the caller's)."""
    return document(target)


def lane_from_document(destination: str, doc: Mapping[str, Any]) -> Lane:
    return value_from_document(Lane, doc, destination=destination)


def picked(value: object, names: Iterable[str]) -> dict[str, Any]:
    """``{name: value.name}`` for each of ``names``: a value's plain fields as a document."""
    return {name: getattr(value, name) for name in names}


# -- store rows -------------------------------------------------------------------------------


def row_values(value: Any) -> dict[str, Any]:
    """A topology value's columns: its name and its documented fields, a group's as columns of
    their own; its relations and its parent are the caller's."""
    out: dict[str, Any] = {}
    for info in table(type(value)):
        if info.form in ("parent", "related"):
            continue
        field = getattr(value, info.name)
        if info.form == "group":
            out.update(row_values(field))
        else:
            out[info.column] = field if info.form == "rules" else _encoded(info, field)
    return out


def value_from_row(cls: type[T], row: Any, policy: PolicyReader, **given: Any) -> T:
    """The value of ``cls`` a store row holds (``row``: its columns as attributes); ``given``
    holds what the row does not (relations, a parent), ``policy`` reads a stored policy."""
    values: dict[str, Any] = {}
    for info in table(cls):
        if info.name in given:
            values[info.name] = given[info.name]
        elif info.form == "group":
            values[info.name] = value_from_row(GroupRef, row, policy)
        else:
            values[info.name] = _decoded(info, getattr(row, info.column), policy, row.name)
    return cls(**values)


def value_from_document(
    cls: type[T], doc: Mapping[str, Any], policy: PolicyReader | None = None, **given: Any
) -> T:
    """The value of ``cls`` a checked document describes (the inputs a provider's ``check``
    returned: numbers may come as floats), its name under ``name``; a field it does not hold
    keeps its default. ``policy`` reads a scale policy (default: as it is, already checked)."""
    values: dict[str, Any] = {}
    for info in table(cls):
        if info.name in given:
            values[info.name] = given[info.name]
        elif doc.get(info.name) is not None or info.form == "costs":
            found = doc.get(info.name)
            values[info.name] = _decoded(info, found, policy or _policy_value, doc.get("name"))
    return cls(**values)


def _policy_value(doc: Mapping[str, Any] | None) -> ScalePolicy:
    return value_from_document(ScalePolicy, doc or {})


def _decoded(info: FieldInfo, value: Any, policy: PolicyReader, name: Any) -> Any:
    form = info.form
    if form == "count" or (form == "observed" and value is not None):
        return int(value)
    if form == "names":
        return tuple(value)
    if form in ("amounts", "costs"):
        return frozen_map(value) if value else EMPTY
    if form == "policy":
        return policy(value)
    if form == "group":
        return value_from_document(GroupRef, value)
    if form == "owned":
        return tuple(lane_from_document(name, doc) for doc in value)
    return value
