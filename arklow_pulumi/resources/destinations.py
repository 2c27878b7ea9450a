"""``Destination``: where work goes, the resources it draws from, and its lanes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

import pulumi
import pulumi.dynamic

from arklow_pulumi.providers.destinations import FIELDS, DestinationProvider
from arklow_pulumi.providers.settling import destination_outputs
from arklow_pulumi.resources import registry
from arklow_pulumi.resources.options import options, owner_inputs, resource_args, store_input
from arklow_pulumi.resources.settling import settled
from arklow_pulumi.resources.values import Lane, lane_input


@dataclass
class DestinationArgs:
    resources: pulumi.Input[Sequence[pulumi.Input[str]]] = field(default_factory=list)
    lanes: Sequence[Lane | Mapping[str, Any]] = field(default_factory=list)
    standalone_capacity: pulumi.Input[Mapping[str, pulumi.Input[float]]] | None = None
    arklow_name: pulumi.Input[str] | None = None
    store: pulumi.Input[str] | None = None


class Destination(pulumi.dynamic.Resource, module="arklow", name="Destination"):
    """A destination. It starts in a standalone pool of its own for each resource (T1);
    ``standalone_capacity`` sets those pools' static capacity."""

    arklow_name: pulumi.Output[str]
    resources: pulumi.Output[list[str]]
    lanes: pulumi.Output[list[dict[str, Any]]]
    standalone_capacity: pulumi.Output[dict[str, float]]
    store: pulumi.Output[str]

    @overload
    def __init__(
        self,
        resource_name: str,
        args: DestinationArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None: ...

    @overload
    def __init__(
        self,
        resource_name: str,
        resources: pulumi.Input[Sequence[pulumi.Input[str]]] | None = None,
        lanes: Sequence[Lane | Mapping[str, Any]] | None = None,
        standalone_capacity: pulumi.Input[Mapping[str, pulumi.Input[float]]] | None = None,
        *,
        arklow_name: pulumi.Input[str] | None = None,
        store: pulumi.Input[str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None: ...

    def __init__(self, resource_name: str, *args: Any, **kwargs: Any) -> None:
        """``Destination(name, DestinationArgs(...), opts)`` or ``Destination(name, resources,
        lanes, standalone_capacity, *, arklow_name, store, opts)`` (see
        :func:`~.options.resource_args`)."""
        spec, opts = resource_args("Destination", resource_name, DestinationArgs, 3, args, kwargs)
        arklow_name = registry.register(
            "Destination", resource_name, self, spec.arklow_name, resources=spec.resources
        )
        props: dict[str, Any] = {
            "arklow_name": arklow_name,
            **{name: getattr(spec, name) for name in FIELDS},
            "lanes": [lane_input(lane) for lane in spec.lanes],
            "standalone_capacity": spec.standalone_capacity or {},
            "store": store_input(spec.store),
            **owner_inputs("Destination", resource_name, opts),
            "pools": None,
            "standalone_pools": None,
        }
        super().__init__(DestinationProvider(), resource_name, props, options(opts))
        registry.track(self, props["owner_urn"])

    # Settled outputs: as the store holds them once the update is done (resources/settling.py).
    @property
    def pools(self) -> pulumi.Output[dict[str, str]]:
        """``{resource: pool}``: the pool the destination is in, for each resource."""
        return settled(self, "pools", destination_outputs)

    @property
    def standalone_pools(self) -> pulumi.Output[dict[str, str]]:
        """``{resource: pool}``: the destination's own pool (``<d>/<r>``), for each resource it
        is still in it, whether or not others joined it (T7)."""
        return settled(self, "standalone_pools", destination_outputs)
