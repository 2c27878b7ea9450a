"""``ScaleTarget``: binds a pool to an ASG or MIG whose replica count changes its supply."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi.dynamic

from arklow_pulumi.providers.scale_targets import ScaleTargetProvider
from arklow_pulumi.resources import registry
from arklow_pulumi.resources.options import options, owner_inputs, reference, store_input
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

    def __init__(
        self,
        resource_name: str,
        pool: Any = None,
        group: GroupReference | None = None,
        min_replicas: pulumi.Input[int] | None = None,
        max_replicas: pulumi.Input[int] | None = None,
        units_per_replica: pulumi.Input[float] | None = None,
        *,
        override_policies: pulumi.Input[bool] = False,
        arklow_name: pulumi.Input[str] | None = None,
        store: pulumi.Input[str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        if isinstance(pool, ScaleTargetArgs):
            args = pool
        else:
            missing = [
                key
                for key, value in (
                    ("pool", pool),
                    ("group", group),
                    ("min_replicas", min_replicas),
                    ("max_replicas", max_replicas),
                    ("units_per_replica", units_per_replica),
                )
                if value is None
            ]
            if missing:
                raise TypeError(f"ScaleTarget {resource_name!r}: {', '.join(missing)} required")
            assert group is not None and min_replicas is not None and max_replicas is not None
            assert units_per_replica is not None
            args = ScaleTargetArgs(
                pool,
                group,
                min_replicas,
                max_replicas,
                units_per_replica,
                override_policies,
                arklow_name,
                store,
            )
        arklow_name = args.arklow_name if args.arklow_name is not None else resource_name
        registry.register("ScaleTarget", resource_name, self, arklow_name)
        pool_name, deps = reference(args.pool)
        props: dict[str, Any] = {
            "arklow_name": arklow_name,
            "pool": pool_name,
            "group": group_input(args.group),
            "min_replicas": args.min_replicas,
            "max_replicas": args.max_replicas,
            "units_per_replica": args.units_per_replica,
            "override_policies": args.override_policies,
            "store": store_input(args.store),
            **owner_inputs("ScaleTarget", resource_name, opts),
            "replicas": None,
        }
        super().__init__(ScaleTargetProvider(), resource_name, props, options(opts, deps))
