"""Inputs of long replays (tests/simulation/test_bounded.py, bench/bench_replay_memory.py): a
topology of five lanes in two pools with scale targets, and traces of any number of ticks."""

from __future__ import annotations

import random
from typing import Any

from tests.builders import dest, lane, pool, target

FIVE: dict[str, Any] = {
    "destinations": [
        dest("search", ["gpu"], lane("interactive", 16, 3), lane("batch", 48)),
        dest("chat", ["gpu"], lane("live", 32)),
        dest("etl", ["gpu", "cpu"], lane("backfill", 64, gpu=1, cpu=2), lane("scan", 20)),
    ],
    "pools": [
        pool(
            "gpu-east",
            "gpu",
            ["search", "chat", "etl"],
            scale_targets=[target("gpu-asg", 2, 8, 16, 2, region="us-east-1")],
        ),
        pool(
            "cpu-pool",
            "cpu",
            ["etl"],
            8,
            scale_targets=[target("cpu-asg", 1, 10, 8, 1, region="us-east-1")],
        ),
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
