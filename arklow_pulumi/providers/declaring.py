"""The providers of the objects a topology declares whole (a destination, a pool): one object
of the topology, its inputs its declared fields (:mod:`arklow_pulumi.core.fields`), checked as
one element of a topology file and written by the store's rules.

A subclass names its value's class, its schema model and collection and its rules of one object,
and writes and shows it with the store service's functions (the service is imported on first
use, never by a preview's ``check``); ``check``, ``diff``, ``create`` and ``update`` are the same
for both.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar

from pulumi.dynamic import CheckResult, CreateResult, DiffResult, UpdateResult
from pydantic import BaseModel

from arklow_pulumi.core.errors import Problem
from arklow_pulumi.core.fields import declared
from arklow_pulumi.providers.diffing import diff_inputs
from arklow_pulumi.providers.inputs import check_model, parse_in_topology
from arklow_pulumi.providers.storing import NamedObjectProvider
from arklow_pulumi.topology_documents import document, value_from_document

if TYPE_CHECKING:
    from arklow_pulumi.store.engine import Store
    from arklow_pulumi.store.identity import Claim


def fields_of(value: type) -> tuple[str, ...]:
    """A resource's plain inputs: the fields its value declares (core.fields)."""
    return tuple(f.name for f in declared(value))


class DeclaredObjectProvider(NamedObjectProvider):
    value: ClassVar[type]
    spec: ClassVar[type[BaseModel]]
    collection: ClassVar[str]  # its list in a topology file ("destinations", "pools")
    identity: ClassVar[tuple[str, ...]]  # the inputs whose change replaces the object

    # What a subclass gives: its conversion, its rules of one object, its store writes.
    @staticmethod
    def from_spec(spec: Any) -> Any:
        raise NotImplementedError

    @staticmethod
    def problems(value: Any) -> Iterable[Problem]:
        raise NotImplementedError

    def write(self, store: Store, value: Any, claim: Claim, created: bool) -> Any:
        """Create (``created``) or update ``value`` in ``store``; the store's view of it."""
        raise NotImplementedError

    @classmethod
    def inputs(cls) -> tuple[str, ...]:
        return ("arklow_name", *fields_of(cls.value))

    def raw(self, props: dict[str, Any]) -> dict[str, Any]:
        """The inputs as an element of a topology file."""
        fields = fields_of(self.value)
        return {"name": props.get("arklow_name"), **{name: props.get(name) for name in fields}}

    def _normalized(self, spec: Any) -> dict[str, Any]:
        return {"arklow_name": spec.name, **document(self.from_spec(spec))}

    def _value(self, checked: dict[str, Any]) -> Any:
        """The value that inputs returned by :meth:`check` describe: checked there (the engine
        hands ``create``/``update`` exactly those), so this only converts; the store's rule
        checks it once more in its own transaction, against the topology it joins."""
        return value_from_document(self.value, {**checked, "name": checked["arklow_name"]})

    def check(self, _olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        return check_model(
            lambda raw: parse_in_topology(self.spec, self.collection, raw),
            self.raw(news),
            news,
            lambda spec: self.problems(self.from_spec(spec)),
            self._normalized,
        )

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        return diff_inputs(olds, news, self.inputs(), self.identity)

    def create(self, props: dict[str, Any]) -> CreateResult:
        value = self._value(props)
        return self.created(props, lambda store, claim: self.write(store, value, claim, True))

    def update(self, id_: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        value = self._value(news)
        return self.updated(id_, news, lambda store, claim: self.write(store, value, claim, False))
