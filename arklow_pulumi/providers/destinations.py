"""The provider of ``Destination``: a destination with its lanes (T1 on create)."""

from __future__ import annotations

from typing import Any

from pulumi.dynamic import CheckResult, CreateResult, DiffResult, UpdateResult

from arklow_pulumi.core.fields import declared
from arklow_pulumi.core.topology import Destination
from arklow_pulumi.core.validating import destination_problems
from arklow_pulumi.providers.diffing import diff_inputs
from arklow_pulumi.providers.inputs import check_model, parse_in_topology
from arklow_pulumi.providers.storing import (
    NamedObjectProvider,
    service,
    stored_name,
)
from arklow_pulumi.reading.spec import DestinationSpec, destination_from_spec
from arklow_pulumi.topology_documents import destination_document, value_from_document

# The resource's inputs: its Arklow name and the fields a destination declares (core.fields).
FIELDS = tuple(f.name for f in declared(Destination))
INPUTS = ("arklow_name", *FIELDS)
IDENTITY = ("arklow_name",)


def _raw(props: dict[str, Any]) -> dict[str, Any]:
    return {"name": props.get("arklow_name"), **{name: props.get(name) for name in FIELDS}}


def _normalized(spec: DestinationSpec) -> dict[str, Any]:
    # An empty cost is no cost (the default, 1 per unit), as the outputs say: one shape.
    return {"arklow_name": spec.name, **destination_document(destination_from_spec(spec))}


def destination_of(checked: dict[str, Any]) -> Destination:
    """The destination that inputs returned by :meth:`DestinationProvider.check` describe:
    checked there, so this only converts; the store's rule checks it once more."""
    return value_from_document(Destination, {**checked, "name": checked["arklow_name"]})


class DestinationProvider(NamedObjectProvider):
    def check(self, _olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        return check_model(
            lambda raw: parse_in_topology(DestinationSpec, "destinations", raw),
            _raw(news),
            news,
            lambda spec: destination_problems(destination_from_spec(spec), fields_checked=True),
            _normalized,
        )

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        return diff_inputs(olds, news, INPUTS, IDENTITY)

    def create(self, props: dict[str, Any]) -> CreateResult:
        dest = destination_of(props)
        return self.created(
            props,
            lambda store, claim: service.destination_view(
                service.create_destination(store, dest, claim), dest.name
            ),
        )

    def update(self, id_: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        dest = destination_of(news)
        return self.updated(
            id_,
            news,
            lambda store, claim: service.destination_view(
                service.update_destination(store, dest, claim), dest.name
            ),
        )

    def delete(self, id_: str, props: dict[str, Any]) -> None:
        service.delete_destination(self.stored_store(props), stored_name(props, id_), id_)

    def view(self, store: Any, name: str) -> Any:
        return service.get_destination(store, name)

    @staticmethod
    def document(view: service.DestinationView) -> dict[str, Any]:
        dest = view.destination
        return {
            "arklow_name": dest.name,
            **destination_document(dest),
            "pools": view.pools,
            "standalone_pools": view.standalone_pools,
        }
