"""The provider of ``Destination``: a destination with its lanes (T1 on create)."""

from __future__ import annotations

from typing import Any

from arklow_pulumi.core.errors import Problem
from arklow_pulumi.core.topology import Destination
from arklow_pulumi.core.validating import destination_problems
from arklow_pulumi.providers.declaring import DeclaredObjectProvider, StoreCalls, fields_of
from arklow_pulumi.providers.storing import service
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

    @staticmethod
    def services() -> StoreCalls:
        return StoreCalls(
            service.create_destination,
            service.update_destination,
            service.destination_view,
            service.delete_destination,
            service.get_destination,
        )

    @staticmethod
    def document(view: service.DestinationView) -> dict[str, Any]:
        dest = view.destination
        return {
            "arklow_name": dest.name,
            **destination_document(dest),
            "pools": view.pools,
            "standalone_pools": view.standalone_pools,
        }
