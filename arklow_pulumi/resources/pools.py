"""``Pool``: one declared supply of one resource, shared by its members."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi.dynamic

from arklow_pulumi.core.limits import DEFAULT_HEADROOM
from arklow_pulumi.providers.pools import PoolProvider
from arklow_pulumi.resources import registry
from arklow_pulumi.resources.options import options, owner_inputs, store_input


@dataclass
class PoolArgs:
    resource: pulumi.Input[str]
    capacity: pulumi.Input[float] = 0.0
    headroom: pulumi.Input[float] = DEFAULT_HEADROOM
    arklow_name: pulumi.Input[str] | None = None
    store: pulumi.Input[str] | None = None
    # The controller's scale policy (DESIGN.md "Scale policy"); fields left out keep defaults.
    scale_policy: pulumi.Input[Mapping[str, Any]] | None = None


class Pool(pulumi.dynamic.Resource, module="arklow", name="Pool"):
    """A pool of ``resource`` with a static ``capacity`` (units) and a scale-up ``headroom``
    fraction. Members join through :class:`PoolMembership`; supply grows through
    :class:`ScaleTarget`. A pool with scale targets attached cannot be deleted (T6)."""

    arklow_name: pulumi.Output[str]
    resource: pulumi.Output[str]
    capacity: pulumi.Output[float]
    headroom: pulumi.Output[float]
    scale_policy: pulumi.Output[dict[str, Any] | None]
    standalone: pulumi.Output[bool]
    members: pulumi.Output[list[str]]
    scale_targets: pulumi.Output[list[str]]
    store: pulumi.Output[str]

    def __init__(
        self,
        resource_name: str,
        resource: PoolArgs | pulumi.Input[str] | None = None,
        capacity: pulumi.Input[float] = 0.0,
        headroom: pulumi.Input[float] = DEFAULT_HEADROOM,
        *,
        arklow_name: pulumi.Input[str] | None = None,
        store: pulumi.Input[str] | None = None,
        scale_policy: pulumi.Input[Mapping[str, Any]] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        if isinstance(resource, PoolArgs):
            args = resource
        else:
            if resource is None:
                raise TypeError(f"Pool {resource_name!r}: 'resource' is required")
            args = PoolArgs(resource, capacity, headroom, arklow_name, store, scale_policy)
        arklow_name = args.arklow_name if args.arklow_name is not None else resource_name
        registry.register("Pool", resource_name, self, arklow_name, pool_resource=args.resource)
        props: dict[str, Any] = {
            "arklow_name": arklow_name,
            "resource": args.resource,
            "capacity": args.capacity,
            "headroom": args.headroom,
            "scale_policy": args.scale_policy,
            "store": store_input(args.store),
            **owner_inputs("Pool", resource_name, opts),
            "standalone": None,
            "members": None,
            "scale_targets": None,
        }
        super().__init__(PoolProvider(), resource_name, props, options(opts))
