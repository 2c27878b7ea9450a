"""Supply bindings: the groups whose replica counts change a pool's real capacity.

One :class:`Supply` protocol (describe many groups, apply a plan) with three bindings:
``aws.AwsAsgSupply`` (boto3), ``gcp.GcpMigSupply`` (google-cloud-compute) and
:class:`InMemorySupply`; a :class:`SupplyRouter` sends each group to the binding of its kind.
Every write goes through one path, :func:`reconcile_pass`: observe, plan (pure:
:func:`plan_pass`, :func:`plan_change`), apply.
Importing this package imports no cloud SDK: the bindings import theirs on first use. The pure
core never imports this package.
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
from arklow_pulumi.supply.planning import PassPlan, plan_change, plan_pass
from arklow_pulumi.supply.reconciling import PassReport, reconcile_pass
from arklow_pulumi.supply.retrying import RetryPolicy
from arklow_pulumi.supply.routing import SupplyRouter, router_from_env
from arklow_pulumi.supply.selecting import EndpointConfig, supply_for
from arklow_pulumi.supply.verifying import verify_target

__all__ = [
    "EndpointConfig",
    "GroupNotFound",
    "GroupState",
    "InMemorySupply",
    "OutOfBounds",
    "PassPlan",
    "PassReport",
    "PermanentSupplyError",
    "Plan",
    "PolicyConflict",
    "ReplicaLimits",
    "RetryPolicy",
    "SetResult",
    "Supply",
    "SupplyError",
    "SupplyRouter",
    "TemporarySupplyError",
    "describe_one",
    "plan_change",
    "plan_pass",
    "reconcile_pass",
    "router_from_env",
    "supply_for",
    "verify_target",
]
