"""The field table of each topology value: what every field is, declared once on the value.

Each field of :class:`~arklow_pulumi.core.topology.Lane`, ``Destination``, ``Pool``,
``ScaleTarget``, ``GroupRef`` and :class:`~arklow_pulumi.core.policy.ScalePolicy` is declared
with :func:`table_field`, which records its :data:`Form` (and, for a number, the rule of
:mod:`arklow_pulumi.core.limits` its range is checked with; for a store column of another name,
that name). :func:`table` reads it back. Everything that handles the fields one by one walks
this table instead of naming them: the plain documents and the store's columns
(:mod:`arklow_pulumi.topology_documents`), the resources' Pulumi inputs (the providers), the
what-if change report (:mod:`arklow_pulumi.simulation.describing`) and the checks of one object
(:mod:`arklow_pulumi.core.validating`). The simulator's unit key is the frozen value itself. A
field declared without a form fails at import, so a new field cannot be forgotten silently.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, cast

Form = Literal[
    "key",  # the object's name: its identity in its parent, its row, its resource
    "parent",  # the name of the object it belongs to (a lane's destination): not its own data
    "number",  # a float in the range its ``rule`` checks
    "count",  # an int in the range its ``rule`` checks
    "name",  # a name (core.limits.name_problem), required
    "optional_name",  # a name or None
    "kind",  # a target kind (aws_asg, gcp_mig)
    "flag",  # a bool
    "names",  # a tuple of names (a list in documents)
    "amounts",  # a mapping name -> number ({} in documents when empty)
    "costs",  # a mapping name -> number (None in documents when empty)
    "policy",  # a ScalePolicy (only the fields that differ from the defaults in documents)
    "group",  # a GroupRef (its own document; its own columns in the scale target's row)
    "owned",  # values of their own table kept in the object's document (a destination's lanes)
    "related",  # values of their own table with rows of their own (a pool's scale targets)
    "rules",  # set by the topology rules, never declared (a standalone pool's owner)
    "observed",  # read from the cloud, never declared (a target's in-service replicas)
]

# The forms a user declares: a resource's Pulumi inputs, a topology file's fields.
_NOT_DECLARED: frozenset[Form] = frozenset({"key", "parent", "related", "rules", "observed"})
# The forms of an object's own document (its key and relations are its caller's).
_NOT_IN_DOCUMENT: frozenset[Form] = frozenset({"key", "parent", "related", "rules"})

Rule = Callable[[Any], "str | None"]

_META = "arklow_field"


@dataclass(frozen=True, slots=True)
class FieldInfo:
    """One row of a value's field table."""

    name: str
    form: Form
    column: str  # its store column (the field's own name unless declared otherwise)
    rule: Rule | None  # the range rule of a number or count (core.limits); None otherwise

    @property
    def declared(self) -> bool:
        """A field a user declares: a Pulumi input, a field of the topology file."""
        return self.form not in _NOT_DECLARED

    @property
    def documented(self) -> bool:
        """A field of the object's own document (and of the stored row)."""
        return self.form not in _NOT_IN_DOCUMENT


def table_field(
    form: Form,
    *,
    default: Any = dataclasses.MISSING,
    rule: Rule | None = None,
    column: str | None = None,
) -> Any:
    """A dataclass field with its table entry (``default`` as :func:`dataclasses.field`'s)."""
    return dataclasses.field(default=default, metadata={_META: (form, rule, column)})


_TABLES: dict[type, tuple[FieldInfo, ...]] = {}


def table(cls: type) -> tuple[FieldInfo, ...]:
    """The field table of a topology value's class, in the order of its fields."""
    found = _TABLES.get(cls)
    if found is None:
        found = _TABLES[cls] = tuple(_info(cls, f) for f in dataclasses.fields(cls))
    return found


def _info(cls: type, f: dataclasses.Field[Any]) -> FieldInfo:
    meta = f.metadata.get(_META)
    if meta is None:
        raise TypeError(f"{cls.__name__}.{f.name} is declared without table_field(form)")
    form, rule, column = meta
    return FieldInfo(f.name, cast(Form, form), column or f.name, rule)


def declared(cls: type) -> tuple[FieldInfo, ...]:
    """The fields of ``cls`` a user declares, in order."""
    return tuple(f for f in table(cls) if f.declared)
