"""``arklow simulate --ticks-csv``: every tick of every policy, one row per pool, target and lane.

Columns (:data:`HEADER`); a field that does not apply to a row's kind is empty:

- ``pool``: ``resource``; ``capacity`` (static + in-service units); ``demand`` (Σ e × cost
  over its lanes), ``served`` (Σ allocation × cost), ``held`` (Σ (e − allocation) × cost),
  ``admitted`` (Σ admission × cost), all in units of its resource; ``replicas`` (in service),
  ``pending`` (launched, not yet in service, as the tick observed them), ``desired`` (the count
  the tick's decision set) summed over its targets (0 without targets);
- ``target`` (named ``<pool>/<target>``): ``resource``, ``capacity`` (its in-service replicas ×
  units per replica), ``replicas``, ``pending``, ``desired``, ``reason`` (why the tick's
  decision set it: one of ``core.policy.REASONS``, docs/scale-policy.md);
- ``lane``: ``demand`` (e = min(demand, limit)), ``served`` (allocation), ``held``
  (e − allocation), ``admitted`` (admission), in work units.

Rows are in time order; within a tick by policy (in the order asked), then pools, targets and
lanes, each kind sorted by name (by code point, as Python compares strings). Numbers are the
shortest text that reads back to the same value (``repr``), integral values without a
fraction; a name with a comma or a quote is quoted as CSV quotes it. A unit's rows are
formatted again only when its decision is renewed (its figures repeat until then), so a tick
costs one string join per policy.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TextIO

from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.core.topology import ScaleTarget
from arklow_pulumi.simulation.figures import pool_units
from arklow_pulumi.simulation.stepping import UnitRun
from arklow_pulumi.simulation.tracing import lane_cell

HEADER = (
    "policy,time,kind,name,resource,capacity,demand,served,held,admitted,replicas,pending,desired,"
    "reason"
)
POOL, TARGET, LANE = "pool", "target", "lane"


def text(x: float) -> str:
    """A number as the CSV writes it: integral values without a fraction, else ``repr``."""
    if x == int(x) and abs(x) < 2**53:
        return str(int(x))
    return repr(x)


def _quoted(name: str) -> str:
    """A name as its cell: neutralised where a spreadsheet would read a formula (as a trace's
    lane cells, :func:`~arklow_pulumi.simulation.tracing.lane_cell`), quoted as CSV quotes."""
    out = io.StringIO()
    csv.writer(out, lineterminator="").writerow([lane_cell(name)])
    return out.getvalue()


def _target(pool: str, target: ScaleTarget) -> str:
    return f"{pool}/{target.name}"


def _heads(r: UnitRun) -> tuple[list[str], list[str], list[str]]:
    """The start of each of a run's rows (``kind,name,``): its pools, targets and lanes."""
    unit = r.unit
    return (
        [f"{POOL},{_quoted(name)}," for name in unit.pool_names],
        [f"{TARGET},{_quoted(_target(pool, t))}," for pool, t in unit.targets],
        [f"{LANE},{_quoted(key)}," for key in unit.lane_keys],
    )


class TickRecorder:
    """Writes the CSV to ``path`` (opened by :meth:`place`, once the run is known to start)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.out: TextIO | None = None
        self.policies: list[tuple[str, list[str]]] = []  # per scenario: name, its rows' tails
        # per run: its rows' places (scenario, position) and what each row is (kind, index)
        self.rows: dict[UnitRun, list[tuple[int, int, str, int]]] = {}
        self.dirty: dict[UnitRun, None] = {}
        self.heads: dict[UnitRun, tuple[list[str], list[str], list[str]]] = {}  # see _heads

    def __enter__(self) -> TickRecorder:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self.out is not None:
            self.out.close()

    def place(self, names: Sequence[str], members: Mapping[str, Sequence[UnitRun]]) -> None:
        order = {POOL: 0, TARGET: 1, LANE: 2}
        for s, name in enumerate(names):
            rows: list[tuple[str, str, UnitRun, int]] = []
            for r in members[name]:
                if r not in self.heads:
                    self.heads[r] = _heads(r)
                unit = r.unit
                rows += [(POOL, n, r, p) for p, n in enumerate(unit.pool_names)]
                rows += [
                    (TARGET, _target(pool, t), r, j) for j, (pool, t) in enumerate(unit.targets)
                ]
                rows += [(LANE, key, r, i) for i, key in enumerate(unit.lane_keys)]
            rows.sort(key=lambda row: (order[row[0]], row[1]))
            for position, (kind, _head, r, index) in enumerate(rows):
                self.rows.setdefault(r, []).append((s, position, kind, index))
            self.policies.append((name, [""] * len(rows)))  # every run is renewed on tick 0
        try:
            self.out = self.path.open("w", encoding="utf-8", newline="")
        except OSError as exc:
            raise InvalidInput.one(
                f"ticks file {str(self.path)!r}", "(file)", exc.strerror or str(exc)
            ) from exc
        self.out.write(HEADER + "\n")

    def renewed(self, run: UnitRun) -> None:
        self.dirty[run] = None

    def tick(self, k: int, now: float) -> None:
        for r in self.dirty:
            self._format(r)
        self.dirty.clear()
        assert self.out is not None
        t = text(now)
        for name, tails in self.policies:
            prefix = f"{name},{t},"
            self.out.write(prefix + ("\n" + prefix).join(tails) + "\n")

    def _format(self, r: UnitRun) -> None:
        pools, targets, lanes = self.heads[r]
        unit = r.unit
        m = len(unit.pool_names)
        figures = pool_units(r.e, r.alloc, r.admit, unit.lane_pools, m)
        demand_units, served_units, held_units, admitted_units = figures
        lane_rows = {}
        for i, (e, a, x) in enumerate(zip(r.e, r.alloc, r.admit, strict=True)):
            held = e - a if e > a else 0.0
            lane_rows[i] = f"{lanes[i]},,{text(e)},{text(a)},{text(held)},{text(x)},,,,"
        pending, desired = [0] * m, [0] * m
        target_rows = {}
        for j, ((in_service, waiting), want, why, (_pool, target)) in enumerate(
            zip(r.seen, r.desired, r.reasons, unit.targets, strict=True)
        ):
            p = r.pool_of_target[j]
            pending[p] += waiting
            desired[p] += want
            units = in_service * target.units_per_replica
            target_rows[j] = (
                f"{targets[j]}{r.resources[p]},{text(units)},,,,,{in_service},{waiting},{want},"
                f"{why}"
            )
        pool_rows = {
            p: f"{pools[p]}{r.resources[p]},{text(r.capacity[p])},{text(demand_units[p])},"
            f"{text(served_units[p])},{text(held_units[p])},{text(admitted_units[p])},"
            f"{r.in_service[p]},{pending[p]},{desired[p]},"
            for p in range(m)
        }
        made = {POOL: pool_rows, TARGET: target_rows, LANE: lane_rows}
        for s, position, kind, index in self.rows[r]:
            self.policies[s][1][position] = made[kind][index]
