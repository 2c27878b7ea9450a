"""The Pulumi resources: Destination, Pool, PoolMembership, ScaleTarget, and the value types their
arguments take (Lane, AwsAutoScalingGroup, GcpManagedInstanceGroup)."""

from arklow_pulumi.resources.destinations import Destination, DestinationArgs
from arklow_pulumi.resources.memberships import PoolMembership, PoolMembershipArgs
from arklow_pulumi.resources.pools import Pool, PoolArgs
from arklow_pulumi.resources.scale_targets import ScaleTarget, ScaleTargetArgs
from arklow_pulumi.resources.values import AwsAutoScalingGroup, GcpManagedInstanceGroup, Lane

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
