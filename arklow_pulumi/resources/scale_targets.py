"""``ScaleTarget``: binds a pool to an ASG or MIG whose replica count changes its supply."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, overload

import pulumi
import pulumi.dynamic

from arklow_pulumi.providers.scale_targets import FIELDS, ScaleTargetProvider
from arklow_pulumi.resources import registry
from arklow_pulumi.resources.options import (
    options,
    owner_inputs,
    reference,
    resource_args,
    store_input,
)
from arklow_pulumi.resources.values import GroupReference, group_input


@dataclass
class ScaleTargetArgs:
    pool: Any  # a pool name, an Output of one, or a Pool
    group: GroupReference
    min_replicas: pulumi.Input[int]
    max_replicas: pulumi.Input[int]
    units_per_replica: pulumi.Input[float]
    override_policies: pulumi.Input[bool] = False
    arklow_name: pulumi.Input[str] | None = None
    store: pulumi.Input[str] | None = None


class ScaleTarget(pulumi.dynamic.Resource, module="arklow", name="ScaleTarget"):
    """Each replica of ``group`` adds ``units_per_replica`` to ``pool``; the controller keeps the
    group within ``[min_replicas, max_replicas]``. Create checks that the group exists and that
    those bounds fit inside the group's own."""

    arklow_name: pulumi.Output[str]
    pool: pulumi.Output[str]
    group: pulumi.Output[dict[str, Any]]
    min_replicas: pulumi.Output[int]
    max_replicas: pulumi.Output[int]
    units_per_replica: pulumi.Output[float]
    override_policies: pulumi.Output[bool]
    replicas: pulumi.Output[int]
    store: pulumi.Output[str]

    @overload
    def __init__(
        self,
        resource_name: str,
        args: ScaleTargetArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None: ...

    @overload
    def __init__(
        self,
        resource_name: str,
        pool: Any = ...,
        group: GroupReference = ...,
        min_replicas: pulumi.Input[int] = ...,
        max_replicas: pulumi.Input[int] = ...,
        units_per_replica: pulumi.Input[float] = ...,
        *,
        override_policies: pulumi.Input[bool] = False,
        arklow_name: pulumi.Input[str] | None = None,
        store: pulumi.Input[str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None: ...

    def __init__(self, resource_name: str, *args: Any, **kwargs: Any) -> None:
        """``ScaleTarget(name, ScaleTargetArgs(...), opts)`` or ``ScaleTarget(name, pool, group,
        min_replicas, max_replicas, units_per_replica, *, override_policies, arklow_name, store,
        opts)`` (see :func:`~.options.resource_args`)."""
        spec, opts = resource_args("ScaleTarget", resource_name, ScaleTargetArgs, 5, args, kwargs)
        arklow_name = registry.register("ScaleTarget", resource_name, self, spec.arklow_name)
        pool_name, deps = reference(spec.pool)
        props: dict[str, Any] = {
            "arklow_name": arklow_name,
            "pool": pool_name,
            **{name: getattr(spec, name) for name in FIELDS},
            "group": group_input(spec.group),
            "store": store_input(spec.store),
            **owner_inputs("ScaleTarget", resource_name, opts),
            "replicas": None,
        }
        super().__init__(ScaleTargetProvider(), resource_name, props, options(opts, deps))
        registry.track(self, props["owner_urn"])
