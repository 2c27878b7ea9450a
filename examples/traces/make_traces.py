"""Write the example demand traces (deterministic): ``python examples/traces/make_traces.py``.

Demand per lane is a diurnal curve with noise, one row per lane every five minutes (a value
holds until the next row); noisy lanes add bursts far above the pool's size.
"""

from __future__ import annotations

import csv
import math
import random
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).parent
STEP = 300  # seconds between a lane's rows
Curve = Callable[[float], float]


def diurnal(low: float, high: float, peak_hour: float = 14.0) -> Curve:
    def at(hours: float) -> float:
        phase = math.cos((hours % 24 - peak_hour) / 24 * 2 * math.pi)
        return low + (high - low) * (phase + 1) / 2

    return at


def burst(base: Curve, start: float, end: float, level: float) -> Curve:
    return lambda hours: level if start <= hours % 24 < end else base(hours)


def write(path: Path, lanes: dict[str, Curve], days: int, seed: int) -> None:
    rng = random.Random(seed)
    with path.open("w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle, lineterminator="\n")
        out.writerow(["time", "lane", "demand"])
        for t in range(0, days * 86400 + 1, STEP):
            for lane, curve in lanes.items():
                value = max(0.0, curve(t / 3600) * rng.uniform(0.9, 1.1))
                out.writerow([t, lane, round(value, 2)])


GPU_DAY: dict[str, Curve] = {
    "search/interactive": diurnal(2, 6),
    "search/batch": diurnal(4, 14, peak_hour=3),
    "chat/live": diurnal(3, 16),
    "etl/backfill": burst(diurnal(2, 8, peak_hour=1), 11, 14, 120),
}

FLEET: dict[str, Curve] = {
    "search/interactive": diurnal(2, 8),
    "chat/live": diurnal(2, 10),
    "vision/thumbnails": diurnal(1, 5, peak_hour=10),
    "speech/transcribe": diurnal(1, 6, peak_hour=16),
    "training/sweeps": burst(diurnal(4, 20, peak_hour=2), 9, 13, 140),
    "billing/invoices": diurnal(1, 4, peak_hour=9),
    "indexer/crawl": burst(diurnal(6, 24, peak_hour=4), 15, 18, 110),
    "indexer/summaries": diurnal(1, 4),
    "alerts/page": diurnal(0.5, 2),
    "reports/nightly": burst(diurnal(0, 1), 1, 4, 10),
    "audit/scan": diurnal(0.5, 1.5),
}

if __name__ == "__main__":
    write(HERE / "gpu_day.csv", GPU_DAY, days=1, seed=1)
    write(HERE / "fleet.csv", FLEET, days=2, seed=2)
