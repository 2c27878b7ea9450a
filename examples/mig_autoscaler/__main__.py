"""A CPU pool on a regional MIG with its own autoscaler (topology.yaml, in Python).

``pulumi up`` checks that ``cpu-workers`` exists in arklow-dev/europe-west1 and that
``max_replicas`` (20) is not above the autoscaler's ``maxNumReplicas``. ``arklow dev clouds``
(run from the repository root) holds it, with an autoscaler (``dev-clouds.yaml`` beside this
file), and prints the ``ARKLOW_GCP_COMPUTE_ENDPOINT`` that points the GCP binding at it; against
the real API, use application default credentials.
"""

import pulumi

from arklow_pulumi import (
    Destination,
    GcpManagedInstanceGroup,
    Lane,
    Pool,
    PoolMembership,
    ScaleTarget,
)

cpu = Pool("cpu-europe", "cpu", headroom=0.15)

ingest = Destination(
    "ingest",
    resources=["cpu"],
    lanes=[Lane("stream", limit=40, weight=3), Lane("backfill", limit=120)],
)
transcode = Destination(
    "transcode",
    resources=["cpu"],
    lanes=[Lane("vod", limit=60, weight=2, cost={"cpu": 2})],
)
memberships = [
    PoolMembership(f"cpu-europe:{name}", destination=d, pool=cpu)
    for name, d in {"ingest": ingest, "transcode": transcode}.items()
]

workers = ScaleTarget(
    "cpu-workers",
    pool=cpu,
    group=GcpManagedInstanceGroup("arklow-dev", "cpu-workers", region="europe-west1"),
    min_replicas=2,
    max_replicas=20,
    units_per_replica=16,
)

pulumi.export("members", cpu.members)
