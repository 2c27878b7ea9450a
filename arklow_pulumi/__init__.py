"""Arklow capacity pools as code.

The Pulumi resources are imported lazily, on first attribute access, so that ``import
arklow_pulumi.core`` and ``arklow allocate`` never import Pulumi::

    from arklow_pulumi import Destination, Lane, Pool, PoolMembership, ScaleTarget
    from arklow_pulumi import AwsAutoScalingGroup, GcpManagedInstanceGroup
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from arklow_pulumi.resources import (
        AwsAutoScalingGroup,
        Destination,
        DestinationArgs,
        GcpManagedInstanceGroup,
        Lane,
        Pool,
        PoolArgs,
        PoolMembership,
        PoolMembershipArgs,
        ScaleTarget,
        ScaleTargetArgs,
    )

__all__ = [
    "AwsAutoScalingGroup",
    "Destination",
    "DestinationArgs",
    "GcpManagedInstanceGroup",
    "Lane",
    "Pool",
    "PoolArgs",
    "PoolMembership",
    "PoolMembershipArgs",
    "ScaleTarget",
    "ScaleTargetArgs",
]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'arklow_pulumi' has no attribute {name!r}")
    value = getattr(importlib.import_module("arklow_pulumi.resources"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
