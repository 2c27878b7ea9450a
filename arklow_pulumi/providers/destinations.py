"""The provider of ``Destination``: a destination with its lanes (T1 on create)."""

from __future__ import annotations

from typing import Any

from arklow_pulumi.core.errors import Problem
from arklow_pulumi.core.topology import Destination
from arklow_pulumi.core.validating import destination_problems
from arklow_pulumi.providers.declaring import DeclaredObjectProvider, fields_of
from arklow_pulumi.providers.storing import service, stored_name
from arklow_pulumi.reading.spec import DestinationSpec, destination_from_spec
from arklow_pulumi.topology_documents import destination_document

# The resource's plain inputs: the fields a destination declares (core.fields).
FIELDS = fields_of(Destination)


class DestinationProvider(DeclaredObjectProvider):
    value = Destination
    spec = DestinationSpec
    collection = "destinations"
    identity = ("arklow_name",)
    from_spec = staticmethod(destination_from_spec)

    @staticmethod
    def problems(value: Any) -> list[Problem]:
        return destination_problems(value, fields_checked=True)

    def write(self, store: Any, value: Any, claim: Any, created: bool) -> Any:
        write = service.create_destination if created else service.update_destination
        return service.destination_view(write(store, value, claim), value.name)

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
