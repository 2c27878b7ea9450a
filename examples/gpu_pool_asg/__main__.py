"""A GPU pool on one Auto Scaling group, shared by three destinations (topology.yaml, in Python).

``pulumi up`` checks that the group ``gpu-workers`` exists in us-east-1 with bounds that hold
[2, 16]: against real AWS, or the local clouds of ``arklow dev clouds`` (run from the repository
root: they hold the dev stack's groups and every example's, this one with ``MaxSize`` 16).
"""

import pulumi

from arklow_pulumi import AwsAutoScalingGroup, Destination, Lane, Pool, PoolMembership, ScaleTarget

gpu = Pool("shared-gpu", "gpu", headroom=0.2)

destinations = {
    "search": Destination(
        "search",
        resources=["gpu"],
        lanes=[Lane("interactive", limit=16, weight=4), Lane("batch", limit=32, weight=1)],
    ),
    "summarize": Destination(
        "summarize",
        resources=["gpu"],
        lanes=[Lane("default", limit=12, weight=2, cost={"gpu": 2})],
    ),
    "embeddings": Destination(
        "embeddings", resources=["gpu"], lanes=[Lane("bulk", limit=64, weight=1)]
    ),
}

memberships = [
    PoolMembership(f"shared-gpu:{name}", destination=d, pool=gpu)
    for name, d in destinations.items()
]

workers = ScaleTarget(
    "gpu-workers",
    pool=gpu,
    group=AwsAutoScalingGroup("gpu-workers", "us-east-1"),
    min_replicas=2,
    max_replicas=16,
    units_per_replica=8,
)

pulumi.export("members", gpu.members)
