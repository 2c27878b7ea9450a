"""Three destinations draw from one GPU cluster: one shared pool, with per-lane weights.

``search`` keeps interactive traffic ahead of its batch lane (weight 4 vs 1); ``summarize`` costs 2
GPU units per unit of work; ``embeddings`` also draws from a provider quota, which stays in its own
standalone pool. The store is the SQLite default, ``.arklow/arklow.db`` beside this Pulumi.yaml;
inspect it with ``arklow topology show``. The exports are what the store holds once the update is
done, the memberships of the same update included (``members`` and ``pools`` are settled
outputs: docs/store.md); ``pulumi refresh --run-program`` brings them back to the store after a
change made outside Pulumi.
"""

import pulumi

from arklow_pulumi import Destination, Lane, Pool, PoolMembership

gpu = Pool("shared-gpu", "gpu", capacity=64, headroom=0.2)

search = Destination(
    "search",
    resources=["gpu"],
    lanes=[Lane("interactive", limit=32, weight=4), Lane("batch", limit=128, weight=1)],
)
summarize = Destination(
    "summarize",
    resources=["gpu"],
    lanes=[Lane("default", limit=16, weight=2, cost={"gpu": 2})],
)
embeddings = Destination(
    "embeddings",
    resources=["gpu", "embedding-quota"],
    lanes=[Lane("bulk", limit=64, weight=1)],
    standalone_capacity={"embedding-quota": 500},
)
destinations = {"search": search, "summarize": summarize, "embeddings": embeddings}

memberships = [
    PoolMembership(f"shared-gpu:{name}", destination=d, pool=gpu)
    for name, d in destinations.items()
]

pulumi.export("members", gpu.members)
pulumi.export("pools", {name: d.pools for name, d in destinations.items()})
