"""``PoolMembership``: a destination draws the pool's resource from the pool."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, overload

import pulumi
import pulumi.dynamic

from arklow_pulumi.providers.memberships import PoolMembershipProvider
from arklow_pulumi.resources import registry
from arklow_pulumi.resources.options import (
    options,
    owner_inputs,
    reference,
    resource_args,
    store_input,
)


@dataclass
class PoolMembershipArgs:
    destination: Any  # a destination name, an Output of one, or a Destination
    pool: Any  # a pool name, an Output of one, or a Pool
    store: pulumi.Input[str] | None = None


class PoolMembership(pulumi.dynamic.Resource, module="arklow", name="PoolMembership"):
    """Destination ``destination`` joins ``pool`` for the pool's resource (T2, T3, T7).

    Its other pools are kept. Deleting the membership gives the destination a standalone pool for
    that resource back (T4). ``destination``/``pool`` may be names, Outputs, or the resources
    themselves (which then become dependencies).
    """

    destination: pulumi.Output[str]
    pool: pulumi.Output[str]
    resource: pulumi.Output[str]
    store: pulumi.Output[str]

    @overload
    def __init__(
        self,
        resource_name: str,
        args: PoolMembershipArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None: ...

    @overload
    def __init__(
        self,
        resource_name: str,
        destination: Any = ...,
        pool: Any = ...,
        *,
        store: pulumi.Input[str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None: ...

    def __init__(self, resource_name: str, *args: Any, **kwargs: Any) -> None:
        """``PoolMembership(name, PoolMembershipArgs(...), opts)`` or ``PoolMembership(name,
        destination, pool, *, store, opts)`` (see :func:`~.options.resource_args`)."""
        spec, opts = resource_args(
            "PoolMembership", resource_name, PoolMembershipArgs, 2, args, kwargs
        )
        dest_name, dest_deps = reference(spec.destination, kind="destination")
        pool_name, pool_deps = reference(spec.pool)
        pool_resource = registry.resource_of_pool(spec.pool)
        registry.register_membership(
            resource_name,
            registry.destination_name(spec.destination),
            pool_resource,
            registry.pool_name(spec.pool),
        )
        props: dict[str, Any] = {
            "destination": dest_name,
            "pool": pool_name,
            "store": store_input(spec.store),
            **owner_inputs("PoolMembership", resource_name, opts),
            "resource": None,
            # Hidden inputs for the preview-time T3 check (see providers/memberships.py).
            "destination_resources": _destination_resources(spec.destination),
            "pool_resource": pool_resource
            if pool_resource is not None
            else _output_resource(spec.pool),
        }
        opts = options(opts, [*dest_deps, *pool_deps])
        super().__init__(PoolMembershipProvider(), resource_name, props, opts)
        registry.track(self, props["owner_urn"])


def _destination_resources(destination: Any) -> Any:
    """What the destination draws from: the plain list it was declared with when the registry
    knows it, else the Destination's output, else None (the T3 check then waits for ``up``)."""
    entry = registry.declared(destination)
    if entry is None and isinstance(destination, str):
        entry = registry.named("Destination", destination)
    if entry is None or entry.kind != "Destination":
        return None
    if entry.resources is not None:
        return list(entry.resources)
    return entry.resource.resources  # type: ignore[attr-defined]


def _output_resource(pool: Any) -> Any:
    """A Pool declared with an Output resource: its ``resource`` output."""
    entry = registry.declared(pool)
    if entry is not None and entry.kind == "Pool":
        return entry.resource.resource  # type: ignore[attr-defined]
    return None
