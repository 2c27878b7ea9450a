"""The memory a replay will need, estimated before it starts, and the budget that refuses it
(``--max-memory``).

A replay keeps no per-tick state beyond a chunk of ticks and the chart's bounded series
(:mod:`.aggregating`), so what it needs follows from its inputs: the trace's rows (read whole),
the unit runs of every scenario (per lane, pool and target: demand, figures, groups, histories),
the series (at most :data:`~.aggregating.CHART_POINTS` points a column), the chunk buffers, and
the outputs asked for: the chart's drawing (``detail``), the ticks CSV's rows formatted per unit.
The constants are peaks measured on this project's benchmarks (``bench/bench_replay_memory.py``)
rounded up; the estimate is of the largest process of the run (a worker process steps a part of
the units, forked from this one, and holds no more).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.simulation.aggregating import chunk_ticks
from arklow_pulumi.simulation.columns import COUNTS, TOTALS, UNITS
from arklow_pulumi.simulation.sharding import Shard
from arklow_pulumi.simulation.stepping import UnitRun

MiB = 1024 * 1024
DEFAULT_BUDGET = 4096 * MiB
BASE_BYTES = 48 * MiB  # the interpreter, the package and the command (measured: 35 MiB)
TRACE_ROW_BYTES = 128  # one row of a trace as read (measured: 111 bytes)
LANE_BYTES = 6 * 1024  # per lane of a unit run (measured: 3.5-3.8 KiB)
POOL_BYTES = 8 * 1024
TARGET_BYTES = 4 * 1024
POINT_BYTES = 8  # one value of a series column or of a chunk (an array of doubles)
FOLD_BYTES = 40  # one value of a chunk while it is folded (a list of Python floats)
CHART_BYTES = 96 * MiB  # matplotlib and the figure (measured: 57 MiB)
CHART_RESOURCE_BYTES = (
    2 * MiB
)  # one policy's lines in one resource's panels (measured: under 1 MiB)
TICKS_ROW_BYTES = 256  # one row of the ticks CSV, as formatted and kept per unit
_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)
_UNIT = {"": 1, "k": 1024, "m": MiB, "g": 1024 * MiB, "t": 1024 * 1024 * MiB}


@dataclass(frozen=True, slots=True)
class Needs:
    """The estimate, in bytes, by part."""

    base: int
    trace: int
    units: int
    series: int
    outputs: int

    @property
    def total(self) -> int:
        return self.base + self.trace + self.units + self.series + self.outputs


def parse_size(text: str, option: str = "--max-memory") -> int:
    """Bytes in a size such as ``4G``, ``512M``, ``1.5GiB`` or ``1000000`` (binary multiples)."""
    found = _SIZE.match(text)
    size = 0.0
    if found is not None:
        size = float(found.group(1)) * _UNIT[found.group(2).lower()]
    if not (math.isfinite(size) and size >= MiB):
        raise InvalidInput.one(
            f"option '{option}'",
            option.lstrip("-"),
            f"must be a size of at least 1M, such as 512M or 4G (got {text!r:.40})",
        )
    return int(size)


def size_text(size: int) -> str:
    """``4.0 GiB``, ``310 MiB``: a size as the refusal prints it."""
    if size >= 1024 * MiB:
        return f"{size / (1024 * MiB):,.1f} GiB"
    return f"{math.ceil(size / MiB):,} MiB"


def needs(
    runs: Iterable[UnitRun],
    shards: Sequence[Shard],
    resources: Sequence[int],
    *,
    ticks: int,
    rows: int,
    bucket: int,
    detail: bool,
    recorded_rows: int = 0,
) -> Needs:
    """The estimate of a replay of ``ticks`` ticks over a trace of ``rows`` rows: its unit
    runs (each once), its shards, each scenario's count of ``resources`` (its series' columns),
    with the chart's drawing when ``detail``, and ``recorded_rows`` rows a tick in the ticks
    CSV."""
    units = 0
    for r in runs:
        unit = r.unit
        units += LANE_BYTES * len(unit.lane_keys) + POOL_BYTES * len(unit.pool_names)
        units += TARGET_BYTES * len(unit.targets)
    width = COUNTS + (UNITS if detail else 0)
    columns = [TOTALS + width * count for count in resources]
    points = math.ceil(ticks / bucket)
    # each column's points (and with buckets, their highs), and the times
    series = sum(POINT_BYTES * points * ((2 if bucket > 1 else 1) * c + 1) for c in columns)
    chunk = chunk_ticks(ticks)
    # the shards' chunk, kept, sent by a worker and taken in; one scenario's chunk being folded
    series += sum(3 * POINT_BYTES * chunk * sh.width * len(sh.scenarios) for sh in shards)
    series += FOLD_BYTES * chunk * 2 * max(columns, default=TOTALS)
    outputs = TICKS_ROW_BYTES * recorded_rows
    if detail:
        outputs += CHART_BYTES + CHART_RESOURCE_BYTES * sum(resources)
    return Needs(BASE_BYTES, TRACE_ROW_BYTES * rows, units, series, outputs)


def refuse_over(budget: int, estimate: Needs) -> None:
    """:class:`InvalidInput` naming the option and the estimate when it is over ``budget``."""
    if estimate.total <= budget:
        return
    parts = ", ".join(
        f"{name} {size_text(size)}"
        for name, size in (
            ("trace", estimate.trace),
            ("units", estimate.units),
            ("series", estimate.series),
            ("outputs", estimate.outputs),
        )
        if size >= MiB
    )
    raise InvalidInput.one(
        "option '--max-memory'",
        "max-memory",
        f"the replay would need about {size_text(estimate.total)}"
        f"{f' ({parts})' if parts else ''}, over the budget of {size_text(budget)} "
        "(raise --max-memory, or replay fewer policies or a shorter trace)",
    )
