"""``Pool``: one declared supply of one resource, shared by its members."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, overload

import pulumi
import pulumi.dynamic

from arklow_pulumi.core.limits import DEFAULT_HEADROOM
from arklow_pulumi.providers.pools import FIELDS, PoolProvider
from arklow_pulumi.providers.settling import pool_outputs
from arklow_pulumi.resources import registry
from arklow_pulumi.resources.options import options, owner_inputs, resource_args, store_input
from arklow_pulumi.resources.settling import settled


@dataclass
class PoolArgs:
    resource: pulumi.Input[str]
    capacity: pulumi.Input[float] = 0.0
    headroom: pulumi.Input[float] = DEFAULT_HEADROOM
    arklow_name: pulumi.Input[str] | None = None
    store: pulumi.Input[str] | None = None
    # The controller's scale policy (docs/scale-policy.md); fields left out keep defaults.
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
    store: pulumi.Output[str]

    @overload
    def __init__(
        self, resource_name: str, args: PoolArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None: ...

    @overload
    def __init__(
        self,
        resource_name: str,
        resource: pulumi.Input[str] = ...,
        capacity: pulumi.Input[float] = 0.0,
        headroom: pulumi.Input[float] = DEFAULT_HEADROOM,
        *,
        arklow_name: pulumi.Input[str] | None = None,
        store: pulumi.Input[str] | None = None,
        scale_policy: pulumi.Input[Mapping[str, Any]] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None: ...

    def __init__(self, resource_name: str, *args: Any, **kwargs: Any) -> None:
        """``Pool(name, PoolArgs(...), opts)`` or ``Pool(name, resource, capacity, headroom,
        *, arklow_name, store, scale_policy, opts)`` (see :func:`~.options.resource_args`)."""
        spec, opts = resource_args("Pool", resource_name, PoolArgs, 3, args, kwargs)
        arklow_name = registry.register(
            "Pool", resource_name, self, spec.arklow_name, pool_resource=spec.resource
        )
        props: dict[str, Any] = {
            "arklow_name": arklow_name,
            **{name: getattr(spec, name) for name in FIELDS},
            "store": store_input(spec.store),
            **owner_inputs("Pool", resource_name, opts),
            "standalone": None,
            "members": None,
            "scale_targets": None,
        }
        super().__init__(PoolProvider(), resource_name, props, options(opts))
        registry.track(self, props["owner_urn"])

    # Settled outputs: as the store holds them once the update is done (resources/settling.py).
    @property
    def members(self) -> pulumi.Output[list[str]]:
        """The destinations in the pool."""
        return settled(self, "members", pool_outputs)

    @property
    def standalone(self) -> pulumi.Output[bool]:
        """True while the pool is a destination's own pool with no other member."""
        return settled(self, "standalone", pool_outputs)

    @property
    def scale_targets(self) -> pulumi.Output[list[str]]:
        """The names of the scale targets attached to the pool."""
        return settled(self, "scale_targets", pool_outputs)
