"""Inputs of long replays (tests/simulation/test_bounded.py, bench/bench_replay_memory.py): a
topology of five lanes in two pools with scale targets, and traces of any number of ticks."""

from __future__ import annotations

import random
from typing import Any

FIVE: dict[str, Any] = {
    "destinations": [
        {
            "name": "search",
            "resources": ["gpu"],
            "lanes": [
                {"name": "interactive", "limit": 16, "weight": 3},
                {"name": "batch", "limit": 48},
            ],
        },
        {"name": "chat", "resources": ["gpu"], "lanes": [{"name": "live", "limit": 32}]},
        {
            "name": "etl",
            "resources": ["gpu", "cpu"],
            "lanes": [
                {"name": "backfill", "limit": 64, "cost": {"gpu": 1, "cpu": 2}},
                {"name": "scan", "limit": 20},
            ],
        },
    ],
    "pools": [
        {
            "name": "gpu-east",
            "resource": "gpu",
            "members": ["search", "chat", "etl"],
            "scale_targets": [
                {
                    "kind": "aws_asg",
                    "name": "gpu-asg",
                    "region": "us-east-1",
                    "min_replicas": 2,
                    "max_replicas": 8,
                    "units_per_replica": 16,
                    "replicas": 2,
                }
            ],
        },
        {
            "name": "cpu-pool",
            "resource": "cpu",
            "capacity": 8,
            "members": ["etl"],
            "scale_targets": [
                {
                    "kind": "aws_asg",
                    "name": "cpu-asg",
                    "region": "us-east-1",
                    "min_replicas": 1,
                    "max_replicas": 10,
                    "units_per_replica": 8,
                    "replicas": 1,
                }
            ],
        },
    ],
}
LANES = ["search/interactive", "search/batch", "chat/live", "etl/backfill", "etl/scan"]
TICK = 60.0


def noisy_rows(ticks: int, seed: int = 3, every: int = 12) -> list[str]:
    """A row every 1 to ``every`` ticks over ``ticks`` ticks, demand often above the pools'
    size."""
    rng = random.Random(seed)
    rows, t = ["time,lane,demand"], 0
    while t < (ticks - 1) * TICK:
        rows.append(f"{t},{rng.choice(LANES)},{rng.randint(0, 90)}")
        t += int(TICK) * rng.randint(1, every)
    rows.append(f"{(ticks - 1) * int(TICK)},chat/live,3")
    return rows


def three_rows(ticks: int) -> str:
    """The issue's shape: three rows, the last one ``ticks`` ticks in."""
    end = (ticks - 1) * int(TICK)
    return f"time,lane,demand\n0,search/batch,10\n3000,chat/live,20\n{end},etl/scan,5\n"
