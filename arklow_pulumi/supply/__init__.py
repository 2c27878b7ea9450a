"""Supply bindings: the groups whose replica counts change a pool's real capacity.

One :class:`Supply` protocol (describe many groups, set one group's size) with three bindings:
``aws.AwsAsgSupply`` (boto3), ``gcp.GcpMigSupply`` (google-cloud-compute) and
:class:`InMemorySupply`. Importing this package imports no cloud SDK: the bindings import theirs
on first use. The pure core never imports this package.
"""

from __future__ import annotations

from arklow_pulumi.supply.contract import Supply, describe_one
from arklow_pulumi.supply.errors import (
    GroupNotFound,
    OutOfBounds,
    PermanentSupplyError,
    PolicyConflict,
    SupplyError,
    TemporarySupplyError,
)
from arklow_pulumi.supply.groups import GroupState, Plan, ReplicaLimits, SetResult
from arklow_pulumi.supply.memory import InMemorySupply
from arklow_pulumi.supply.planning import plan_change
from arklow_pulumi.supply.reconciling import PassReport, reconcile_pass
from arklow_pulumi.supply.retrying import RetryPolicy
from arklow_pulumi.supply.selecting import EndpointConfig, supply_for
from arklow_pulumi.supply.verifying import verify_target

__all__ = [
    "EndpointConfig",
    "GroupNotFound",
    "GroupState",
    "InMemorySupply",
    "OutOfBounds",
    "PassReport",
    "PermanentSupplyError",
    "Plan",
    "PolicyConflict",
    "ReplicaLimits",
    "RetryPolicy",
    "SetResult",
    "Supply",
    "SupplyError",
    "TemporarySupplyError",
    "describe_one",
    "plan_change",
    "reconcile_pass",
    "supply_for",
    "verify_target",
]
