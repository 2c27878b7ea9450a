"""The providers of the objects a topology declares whole (a destination, a pool): one object
of the topology, its inputs its declared fields (:mod:`arklow_pulumi.core.fields`), checked as
one element of a topology file and written by the store's rules.

A subclass names its value's class, its schema model and collection and its rules of one object,
and writes and shows it with the store service's functions (the service is imported on first
use, never by a preview's ``check``); ``check``, ``diff``, ``create`` and ``update`` are the same
for both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from pulumi.dynamic import CheckResult, CreateResult, DiffResult, UpdateResult
from pydantic import BaseModel

from arklow_pulumi.core.errors import Problem
from arklow_pulumi.core.fields import declared
from arklow_pulumi.providers.diffing import diff_inputs
from arklow_pulumi.providers.inputs import check_model, parse_in_topology
from arklow_pulumi.providers.storing import NamedObjectProvider, stored_name
from arklow_pulumi.topology_documents import document, value_from_document

if TYPE_CHECKING:
    from arklow_pulumi.store.engine import Store
    from arklow_pulumi.store.identity import Claim


class StoreCalls(NamedTuple):
    """The store service's functions that write, show and delete one kind of object."""

    create: Callable[..., Any]
    update: Callable[..., Any]
    view: Callable[..., Any]
    delete: Callable[..., None]
    get: Callable[..., Any]


def fields_of(value: type) -> tuple[str, ...]:
    """A resource's plain inputs: the fields its value declares (core.fields)."""
    return tuple(f.name for f in declared(value))


class DeclaredObjectProvider(NamedObjectProvider):
    value: ClassVar[type]
    spec: ClassVar[type[BaseModel]]
    collection: ClassVar[str]  # its list in a topology file ("destinations", "pools")
    identity: ClassVar[tuple[str, ...]]  # the inputs whose change replaces the object

    # What a subclass gives: its conversion, its rules of one object, its store's calls.
    @staticmethod
    def from_spec(spec: Any) -> Any:
        raise NotImplementedError

    @staticmethod
    def problems(value: Any) -> Iterable[Problem]:
        raise NotImplementedError

    @staticmethod
    def services() -> StoreCalls:
        """The store service's functions for the object (called here, so the service is
        imported on first use, never by a preview's ``check``)."""
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

    def _write(self, value: Any, created: bool) -> Callable[[Store, Claim], Any]:
        calls = self.services()
        write = calls.create if created else calls.update
        return lambda store, claim: calls.view(write(store, value, claim), value.name)

    def create(self, props: dict[str, Any]) -> CreateResult:
        return self.created(props, self._write(self._value(props), True))

    def update(self, id_: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        return self.updated(id_, news, self._write(self._value(news), False))

    def delete(self, id_: str, props: dict[str, Any]) -> None:
        self.services().delete(self.stored_store(props), stored_name(props, id_), id_)

    def view(self, store: Any, name: str) -> Any:
        return self.services().get(store, name)
