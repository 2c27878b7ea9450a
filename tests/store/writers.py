"""A writer process for the concurrency tests: random rule-respecting changes against one store,
as two ``pulumi up`` runs of different stacks would make them."""

from __future__ import annotations

import random
from typing import Any

from arklow_pulumi.core.errors import TopologyRuleViolation
from arklow_pulumi.core.topology import Destination, Pool
from arklow_pulumi.store import StoreError, open_store
from arklow_pulumi.store import service as svc

SHARED = ("P1", "P2", "P3")
DESTINATIONS = tuple(f"d{i}" for i in range(8))


def _one(store: Any, rng: random.Random) -> None:
    op = rng.random()
    dest = rng.choice(DESTINATIONS)
    pool = rng.choice(SHARED)
    if op < 0.35:
        svc.join(store, dest, pool)
    elif op < 0.55:
        svc.leave(store, dest, pool)
    elif op < 0.65:
        svc.delete_pool(store, pool)
    elif op < 0.8:
        svc.create_pool(store, Pool(pool, "gpu", capacity=rng.choice((0.0, 4.0))))
    elif op < 0.9:
        svc.delete_destination(store, dest)
    else:
        svc.create_destination(store, Destination(dest, ("gpu", "cpu")))


def run(url: str, seed: int, operations: int, start: Any, results: Any) -> None:
    """Apply ``operations`` random changes; report (done, refused, unexpected errors)."""
    store = open_store(url)
    rng = random.Random(seed)
    start.wait()
    done = refused = 0
    unexpected: list[str] = []
    for _ in range(operations):
        try:
            _one(store, rng)
            done += 1
        except TopologyRuleViolation:
            refused += 1
        except StoreError as exc:  # a constraint caught a race the rules missed
            unexpected.append(str(exc))
    results.put((done, refused, unexpected))
