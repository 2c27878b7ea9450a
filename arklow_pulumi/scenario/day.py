"""The built-in day: each lane's demand of the dev stack (stacks/Pulumi.dev.yaml) over 24 hours.

- **diurnal** lanes follow a cosine between a night trough and a peak hour, with 10% noise;
- the **noisy neighbour**: ``search/batch`` bursts far above its share of the GPU pool from 10:00
  to 12:00 (a reindex), while ``search/interactive`` and ``summarize/default`` keep their load;
- the **join**: ``reports`` runs in its own standalone GPU pool (4 units) until noon, when a
  second ``pulumi up`` makes it a member of ``shared-gpu``; its lane has work all day, more at
  night, so the held work before the join and the service after it both show.

The controller has been running before the day: :data:`WARM_UP_S` of ticks on the demand of
00:00 (:meth:`Day.at_start`, no noise) come first and are not recorded, so the day does not
open with every group at its minimum and a start-up pressure no day of a running controller
has.

Pure: demand is a function of the second of the day and a seeded generator. :data:`EPISODES`
names the day's windows for the report (its charts shade and label them).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field

HOUR = 3600.0
DAY_S = 24 * HOUR
JOIN_AT_S = 12 * HOUR
JOINING = ("reports", "shared-gpu")  # destination, pool
BURST_H = (10.0, 12.0)  # search/batch at 90
BACKFILL_H = (1.0, 5.0)  # ingest/backfill at 60
WARM_UP_S = 1 * HOUR  # ticks before 00:00, not recorded (launches take minutes)


@dataclass(frozen=True, slots=True)
class Event:
    """Something the report marks: at ``t`` (seconds into the day), until ``end`` for a window
    (``None``: a moment); ``what`` says it in full, ``label`` in a word or two on the charts."""

    t: float
    end: float | None
    what: str
    label: str


EPISODES = (
    Event(BACKFILL_H[0] * HOUR, BACKFILL_H[1] * HOUR, "ingest/backfill runs at 60", "backfill"),
    Event(
        BURST_H[0] * HOUR,
        BURST_H[1] * HOUR,
        "search/batch's demand bursts to about 90, above its limit, in shared-gpu "
        "(a noisy neighbour)",
        "burst",
    ),
)


def diurnal(trough: float, peak: float, peak_hour: float) -> Callable[[float], float]:
    def curve(t: float) -> float:
        phase = 2 * math.pi * (t / HOUR - peak_hour) / 24
        return trough + (peak - trough) * (1 + math.cos(phase)) / 2

    return curve


def burst(
    base: Callable[[float], float], level: float, start_h: float, end_h: float
) -> Callable[[float], float]:
    def curve(t: float) -> float:
        return level if start_h * HOUR <= t < end_h * HOUR else base(t)

    return curve


def windows(levels: list[tuple[float, float, float]], other: float) -> Callable[[float], float]:
    """``[(start_h, end_h, level), ...]``, ``other`` outside them."""

    def curve(t: float) -> float:
        hour = t / HOUR
        return next((lv for a, b, lv in levels if a <= hour < b), other)

    return curve


LANES: dict[str, Callable[[float], float]] = {
    "search/interactive": diurnal(2, 14, 14),
    "search/batch": burst(diurnal(4, 10, 16), 90, *BURST_H),
    "summarize/default": diurnal(3, 14, 13),
    "reports/nightly": windows([(0, 6, 7), (18, 24, 7)], 3),
    "ingest/stream": diurnal(8, 40, 11),
    "ingest/backfill": windows([(*BACKFILL_H, 60)], 6),
    "transcode/live": diurnal(3, 20, 20),
    "transcode/vod": diurnal(8, 14, 15),
}


@dataclass
class Day:
    """The day's demand per tick; ``noise`` is the relative spread (0.1: ±10%)."""

    tick_s: float = 300.0
    noise: float = 0.1
    seed: int = 7
    lanes: dict[str, Callable[[float], float]] = field(default_factory=lambda: dict(LANES))

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    @property
    def ticks(self) -> int:
        return int(DAY_S // self.tick_s)

    def at_start(self) -> dict[str, float]:
        """Each lane's demand at 00:00 without noise (the warm-up's)."""
        return {lane: round(curve(0.0), 2) for lane, curve in self.lanes.items()}

    def demand(self, t: float) -> dict[str, float]:
        out = {}
        for lane, curve in self.lanes.items():
            jitter = 1 + self._rng.uniform(-self.noise, self.noise)
            out[lane] = round(max(0.0, curve(t) * jitter), 2)
        return out
