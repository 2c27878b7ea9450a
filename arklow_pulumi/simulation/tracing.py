"""The demand trace: CSV ``time,lane,demand``, rows sorted by time, a lane's demand holding until
its next row.

``time`` is seconds since the trace's start (a finite number in [0, :data:`MAX_TRACE_SECONDS`])
or an ISO 8601 timestamp, in which case the first row is the start (a timestamp without a zone is
UTC) and no row may be more than :data:`MAX_TRACE_SECONDS` after it; one trace uses one form.
``demand`` is a finite number in [0, 1e12]. Every problem is one
:class:`~arklow_pulumi.core.errors.InvalidInput` naming the file, the line and the field.

A lane cell that a spreadsheet would take for a formula is written with a ``'`` before it
(:func:`lane_cell`: a name beginning with ``=``, ``+``, ``-`` or ``@``, after any quotes), and
the reader takes one ``'`` off such a cell (:func:`lane_from_cell`), so every name the topology
accepts reads back exactly as it was written (:func:`format_trace` writes what
``arklow controller export-trace`` prints).

A replay is bounded before it starts (:func:`check_replay`): a tick is a finite number of seconds
of at least :data:`MIN_TICK_S`, and a run has at most ``max_ticks`` ticks (default
:data:`MAX_TICKS`; ``--max-ticks`` raises it), so no trace or option can make a run that only
ends when it is killed.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.core.limits import MAX_UNITS, units_problem
from arklow_pulumi.reading.files import MAX_TRACE_BYTES, open_input

HEADER = ("time", "lane", "demand")
MAX_TRACE_SECONDS = 1e10  # about 317 years after the trace's first row
MIN_TICK_S = 0.001
MAX_TICKS = 10_000_000
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$")
_UNIT_S = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
# a cell a spreadsheet reads as a formula: =, +, - or @ first, after any quotes
_FORMULA = re.compile(r"'*[=+\-@]")
_QUOTED_FORMULA = re.compile(r"'+[=+\-@]")


def lane_cell(name: str) -> str:
    """A lane key as a trace's CSV cell: with a ``'`` before it when a spreadsheet would read
    it as a formula (``=1+1/x``, ``@SUM(A1)/x``, ``'=x/y``), else as it is."""
    return f"'{name}" if _FORMULA.match(name) else name


def lane_from_cell(cell: str) -> str:
    """The lane key a trace's cell holds: :func:`lane_cell` undone (one ``'`` taken off a cell
    of quotes then a formula's first character; any other cell is the key itself)."""
    return cell[1:] if _QUOTED_FORMULA.match(cell) else cell


def format_trace(rows: list[tuple[float, str, float]]) -> str:
    """A trace's CSV text from (time, lane, demand) rows sorted by time: times in seconds since
    the first row, names through :func:`lane_cell`."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(HEADER)
    start = rows[0][0] if rows else 0.0
    for at, lane, demand in rows:
        writer.writerow([_number(round(at - start, 3)), lane_cell(lane), _number(demand)])
    return out.getvalue()


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def parse_duration(value: str) -> float:
    """Seconds in a history window such as ``7d``, ``12h`` or ``3600`` (``--since``)."""
    found = _DURATION.match(value)
    if found is None:
        raise InvalidInput.one(
            "option --since", "since", f"expected a duration like 7d, 12h or 3600, got {value!r}"
        )
    return float(found.group(1)) * _UNIT_S[found.group(2)]


@dataclass(frozen=True, slots=True)
class Trace:
    """Rows in file order: ``times[k]`` (seconds since the start), ``lanes[k]``, ``demands[k]``."""

    times: tuple[float, ...]
    lanes: tuple[str, ...]
    demands: tuple[float, ...]

    @property
    def end(self) -> float:
        return self.times[-1]

    def tick_count(self, tick: float) -> int:
        """Ticks at t = 0, tick, 2 × tick, … while t ≤ the last row's time."""
        return math.floor(self.end / tick + 1e-9) + 1


class _Rows:
    """Turns raw CSV rows into checked (seconds, lane, demand) values."""

    def __init__(self, source: str, known: Collection[str] | None) -> None:
        self.source = source
        self.known = known
        self.form: str | None = None  # "seconds" or "iso"
        self.start: datetime | None = None
        self.last = -math.inf

    def fail(self, line: int, field: str, message: str) -> InvalidInput:
        return InvalidInput.one(f"{self.source} line {line}", field, message)

    def row(self, line: int, cells: list[str]) -> tuple[float, str, float]:
        if len(cells) != 3:
            raise self.fail(line, "(row)", f"expected 3 fields time,lane,demand, got {len(cells)}")
        raw_time, cell, raw_demand = (c.strip() for c in cells)
        lane = lane_from_cell(cell)
        seconds = self.seconds(line, raw_time)
        if seconds < self.last:
            raise self.fail(
                line, "time", f"rows must be sorted by time ({raw_time!r} comes after a later row)"
            )
        self.last = seconds
        if self.known is not None and lane not in self.known:
            raise self.fail(line, "lane", f"no such lane in the topology ({lane!r})")
        return seconds, lane, self.demand(line, raw_demand)

    def seconds(self, line: int, raw: str) -> float:
        try:
            value = float(raw)
        except ValueError:
            return self.iso(line, raw)
        if self.form == "iso":
            raise self.fail(line, "time", f"mixes seconds ({raw!r}) with ISO 8601 times")
        self.form = "seconds"
        if not (math.isfinite(value) and 0 <= value <= MAX_TRACE_SECONDS):
            raise self.fail(
                line,
                "time",
                f"must be a finite number of seconds in [0, {MAX_TRACE_SECONDS:g}]"
                f" (got {raw!r:.40})",
            )
        return value

    def iso(self, line: int, raw: str) -> float:
        try:
            stamp = datetime.fromisoformat(raw)
        except ValueError:
            raise self.fail(
                line, "time", f"must be seconds or an ISO 8601 time (got {raw!r})"
            ) from None
        if self.form == "seconds":
            raise self.fail(line, "time", f"mixes an ISO 8601 time ({raw!r}) with seconds")
        self.form = "iso"
        if stamp.tzinfo is None:
            stamp = stamp.replace(tzinfo=UTC)
        if self.start is None:
            self.start = stamp
        seconds = (stamp - self.start).total_seconds()
        if seconds > MAX_TRACE_SECONDS:
            raise self.fail(
                line,
                "time",
                f"is {seconds:.4g} s after the trace's first row; at most {MAX_TRACE_SECONDS:g} s",
            )
        return seconds

    def demand(self, line: int, raw: str) -> float:
        try:
            value = float(raw)
        except ValueError:
            raise self.fail(line, "demand", f"must be a number (got {raw!r:.40})") from None
        problem = units_problem(value)  # the range of every demand and limit, with its words
        if problem is not None:
            raise self.fail(line, "demand", problem)
        return value


def parse_trace(
    lines: Iterable[str], source: str = "trace", known: Collection[str] | None = None
) -> Trace:
    """Check and read a trace; ``known`` (lane keys) refuses lanes outside the topology."""
    reader = csv.reader(lines, strict=True)
    rows = _Rows(source, known)
    times: list[float] = []
    lanes: list[str] = []
    demands: list[float] = []
    try:
        header = next(reader, None)
        if header is None or tuple(c.strip().lstrip("\ufeff") for c in header) != HEADER:
            got = ",".join(header) if header else "nothing"
            raise InvalidInput.one(
                f"{source} line 1", "(header)", f"expected 'time,lane,demand', got {got!r}"
            )
        # one string object per lane name, shared by its rows: less memory, and the simulator's
        # lookups by lane find the key itself
        names: dict[str, str] = {} if known is None else {k: k for k in known}
        for cells in reader:
            # Fast path for the common row (seconds, known lane, valid demand, in order); any
            # other row, good or bad, goes through the checks of ``_Rows.row``.
            if len(cells) == 3 and rows.form != "iso":
                try:
                    t, d = float(cells[0]), float(cells[2])
                except ValueError:
                    t = d = math.nan
                lane = cells[1].strip()
                if lane[:1] == "'":
                    lane = lane_from_cell(lane)
                name = names.get(lane)
                if name is None and known is None:
                    name = names[lane] = lane
                if (
                    name is not None
                    and rows.last <= t <= MAX_TRACE_SECONDS
                    and t >= 0
                    and 0 <= d <= MAX_UNITS
                ):
                    rows.last = t
                    rows.form = "seconds"
                    times.append(t)
                    lanes.append(name)
                    demands.append(d)
                    continue
            if not cells or cells == [""]:
                continue
            t, lane, d = rows.row(reader.line_num, cells)
            times.append(t)
            lanes.append(lane)
            demands.append(d)
    except csv.Error as exc:
        raise InvalidInput.one(
            f"{source} line {reader.line_num}", "(csv)", f"malformed CSV: {exc}"
        ) from exc
    if not times:
        raise InvalidInput.one(source, "(rows)", "the trace has no rows")
    return Trace(times=tuple(times), lanes=tuple(lanes), demands=tuple(demands))


def check_replay(trace: Trace, tick: float, max_ticks: int = MAX_TICKS) -> int:
    """The run's tick count, or :class:`InvalidInput` when the tick is not a finite number of
    seconds >= :data:`MIN_TICK_S` or the run would have more than ``max_ticks`` ticks."""
    if not (math.isfinite(tick) and tick >= MIN_TICK_S):
        raise InvalidInput.one(
            "option '--tick'",
            "tick",
            f"must be a finite number of seconds >= {MIN_TICK_S:g} (got {tick!r:.40})",
        )
    count = math.floor(trace.end / tick + 1e-9) + 1
    if count > max_ticks:
        raise InvalidInput.one(
            "option '--tick'",
            "tick",
            f"a {trace.end:g} s trace at a {tick:g} s tick is {count:,} ticks, over the maximum "
            f"of {max_ticks:,} (use a longer --tick, or raise the maximum with --max-ticks)",
        )
    return count


def read_trace(path: Path, known: Collection[str] | None = None) -> Trace:
    """Read a trace file (UTF-8 CSV, a regular file of at most
    :data:`~arklow_pulumi.reading.files.MAX_TRACE_BYTES`); an unreadable, special or oversized
    file is :class:`InvalidInput`."""
    source = f"trace {str(path)!r}"
    try:
        with (
            open_input(path, source, MAX_TRACE_BYTES) as raw,
            io.TextIOWrapper(raw, encoding="utf-8", newline="") as handle,
        ):
            return parse_trace(handle, source, known)
    except OSError as exc:
        raise InvalidInput.one(source, "(file)", exc.strerror or str(exc)) from exc
    except UnicodeDecodeError as exc:
        raise InvalidInput.one(source, "(file)", "is not UTF-8 text") from exc


def changes(trace: Trace, tick: float) -> Iterator[list[tuple[str, float]]]:
    """For each tick in turn, the rows that took effect since the previous tick (time ≤ t)."""
    k = 0
    n = len(trace.times)
    times, lanes, demands = trace.times, trace.lanes, trace.demands
    for index in range(trace.tick_count(tick)):
        now = index * tick
        limit = now + 1e-9 * max(1.0, now)
        batch: list[tuple[str, float]] = []
        while k < n and times[k] <= limit:
            batch.append((lanes[k], demands[k]))
            k += 1
        yield batch
