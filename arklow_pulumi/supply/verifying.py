"""Checks a ScaleTarget against its real group, for the Pulumi provider's create and read.

Returns problems as data (the provider turns them into a failure); an error reaching the cloud
propagates as the :class:`~arklow_pulumi.supply.errors.SupplyError` it is.
"""

from __future__ import annotations

from arklow_pulumi.core.errors import Problem
from arklow_pulumi.core.topology import ScaleTarget
from arklow_pulumi.supply.contract import Supply

# The Compute API's own ceiling on a MIG's target size.
MIG_MAX_SIZE = {"zone": 1000, "region": 2000}


def verify_target(target: ScaleTarget, supply: Supply) -> list[Problem]:
    """The group must exist, and [min_replicas, max_replicas] must fit in the group's own bounds.

    An ASG's own bounds are MinSize/MaxSize. A MIG's are the API's size ceiling and, when an
    autoscaler is attached, its maxNumReplicas (the group's own max, never raised by Arklow; the
    window's min is what a count moves, so it bounds nothing). Without an autoscaler only the
    API's size limit applies.
    """
    obj = f"scale target '{target.name}'"
    problems: list[Problem] = []
    if target.min_replicas > target.max_replicas:
        problems.append(
            Problem(
                obj,
                "min_replicas",
                f"min_replicas {target.min_replicas} is above max_replicas {target.max_replicas}",
            )
        )
    state = supply.describe([target.group], detail=False).get(target.group)
    if state is None:
        problems.append(Problem(obj, "group", f"group {target.group} does not exist"))
        return problems
    if target.kind == "gcp_mig":
        ceiling = MIG_MAX_SIZE["zone" if target.group.zone else "region"]
        if target.max_replicas > ceiling:
            problems.append(
                Problem(
                    obj,
                    "max_replicas",
                    f"max_replicas {target.max_replicas} is above the MIG size limit {ceiling}",
                )
            )
        if state.autoscaler and state.max is not None and target.max_replicas > state.max:
            problems.append(
                Problem(
                    obj,
                    "max_replicas",
                    f"max_replicas {target.max_replicas} is above the autoscaler's "
                    f"maxNumReplicas {state.max} (group {target.group})",
                )
            )
        return problems
    if state.min is not None and target.min_replicas < state.min:
        problems.append(
            Problem(
                obj,
                "min_replicas",
                f"min_replicas {target.min_replicas} is below the group's MinSize {state.min} "
                f"(group {target.group})",
            )
        )
    if state.max is not None and target.max_replicas > state.max:
        problems.append(
            Problem(
                obj,
                "max_replicas",
                f"max_replicas {target.max_replicas} is above the group's MaxSize {state.max} "
                f"(group {target.group})",
            )
        )
    return problems
