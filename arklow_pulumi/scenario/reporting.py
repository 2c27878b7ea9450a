"""The day in numbers (a summary for the terminal, ``summary.json`` for programs) and in
pictures (``index.html`` with the charts of :mod:`.charts`). Nothing here reads a store or a cloud.

``summary.json`` holds named records only (no bare arrays of numbers): the run's provenance, the
day's figures per lane and per pool, the events, and ``timeline``, one record per tick with every
lane, pool and scale target as the controller published them (the README lists the fields).
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arklow_pulumi.extras import require
from arklow_pulumi.scenario import charts
from arklow_pulumi.scenario.charts import clock, desired_label, event_text
from arklow_pulumi.scenario.recording import LaneFigures, PoolFigures, Recording
from arklow_pulumi.text_tables import table

if TYPE_CHECKING:
    from matplotlib.figure import Figure


@dataclass(frozen=True, slots=True)
class Provenance:
    """What the page and ``summary.json`` say the run was."""

    day: datetime  # the simulated day's start, UTC
    generated: datetime  # when the run ended, UTC
    version: str  # arklow-pulumi's
    commit: str | None  # the checkout's, when it is a git checkout
    modified: bool  # the checkout had changes not committed
    stack: str
    topology_file: str  # the stack config holding arklow:topology, relative to the project

    def version_text(self) -> str:
        if self.commit is None:
            return f"arklow-pulumi {self.version}"
        changed = " with local changes" if self.modified else ""
        return f"arklow-pulumi {self.version}, commit {self.commit}{changed}"


def _f(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def lane_rows(lanes: dict[str, LaneFigures]) -> list[list[str]]:
    return [
        [
            name,
            _f(f.demand),
            _f(f.served),
            _f(f.held_pct, 2),
            _f(f.mean_admission),
            _f(f.peak_demand),
        ]
        for name, f in lanes.items()
    ]


def pool_rows(pools: dict[str, PoolFigures]) -> list[list[str]]:
    rows = []
    for name, f in pools.items():
        replicas = "-" if f.replicas is None else "{} / {:.1f} / {}".format(*f.replicas)
        rows.append(
            [
                name,
                f.resource,
                _f(f.mean_pressure, 2),
                _f(f.peak_pressure, 2),
                str(f.constrained_ticks),
                replicas,
                str(f.scale_actions),
            ]
        )
    return rows


LANE_HEADERS = [
    "lane",
    "demand (unit-h)",
    "served (unit-h)",
    "held %",
    "mean admission",
    "peak reported demand",
]
POOL_HEADERS = [
    "pool",
    "resource",
    "mean pressure",
    "peak pressure",
    "constrained ticks",
    "replicas min / mean / max",
    "scale actions",
]


def summary_text(
    rec: Recording, lanes: dict[str, LaneFigures], pools: dict[str, PoolFigures]
) -> str:
    lines = [f"LANES (one simulated day, {len(rec.times)} ticks of {rec.tick_s:.0f}s)"]
    lines += table(LANE_HEADERS, lane_rows(lanes), right={1, 2, 3, 4, 5})
    lines += ["", "POOLS"]
    lines += table(POOL_HEADERS, pool_rows(pools), right={2, 3, 4, 5, 6})
    if rec.events:
        lines += ["", "EVENTS"]
        lines += [event_text(e) for e in rec.events]
    return "\n".join(lines)


# file -> (title, caption, figure)
CHARTS: dict[str, tuple[str, str, Callable[[Recording], Figure]]] = {
    "lanes.png": (
        "Lanes: demand, admission and held work",
        "Each lane with the pool(s) it draws from. One unit of a lane's work takes what its axis "
        "says (its cost in each resource).",
        charts.lanes_figure,
    ),
    "targets.png": (
        "Scale targets: desired and in-service replicas",
        "For a group with its own autoscaler, desired is the autoscaler's minimum: Arklow moves "
        "the minimum, the autoscaler runs at least that many, and after the minimum falls it "
        "keeps the higher count for its 10-minute stabilization period.",
        charts.targets_figure,
    ),
    "pools.png": (
        "Pools: demand against capacity",
        "In each pool's resource units. Capacity is static capacity plus in-service replicas "
        "times units per replica.",
        charts.pools_figure,
    ),
    "pressure.png": (
        "Pool pressure",
        "Above 1 a pool is constrained: its members want more than it holds.",
        charts.pressure_figure,
    ),
}


def write_report(
    rec: Recording,
    lanes: dict[str, LaneFigures],
    pools: dict[str, PoolFigures],
    directory: Path,
    notes: list[str],
    source: Provenance,
) -> Path:
    require("charts", "the main job's report (its charts)")
    directory.mkdir(parents=True, exist_ok=True)
    for file, (_title, _caption, draw) in CHARTS.items():
        draw(rec).savefig(directory / file, dpi=90)
    document = rounded(summary_document(rec, lanes, pools, source))
    (directory / "summary.json").write_text(json.dumps(document, indent=1))
    index = directory / "index.html"
    index.write_text(_html(rec, lanes, pools, notes, source))
    return index


DIGITS = 3  # decimals of every figure in summary.json (the tables print fewer)


def rounded(value: Any) -> Any:
    """``value`` with each float rounded to :data:`DIGITS` decimals, inside lists and dicts
    too (1.1639999999999997 reads 1.164; whole numbers stay as they are)."""
    if isinstance(value, float):
        return round(value, DIGITS)
    if isinstance(value, dict):
        return {key: rounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [rounded(item) for item in value]
    return value


def summary_document(
    rec: Recording,
    lanes: dict[str, LaneFigures],
    pools: dict[str, PoolFigures],
    source: Provenance,
) -> dict[str, Any]:
    """The day for programs, every record with named fields (see the README's main job)."""
    return {
        "date": source.day.date().isoformat(),
        "generated": source.generated.isoformat(timespec="seconds"),
        "version": source.version,
        "commit": source.commit,
        "stack": source.stack,
        "topology_file": source.topology_file,
        "tick_s": rec.tick_s,
        "lanes": {
            name: {
                "demand": f.demand,
                "served": f.served,
                "held": f.held,
                "held_pct": f.held_pct,
                "mean_admission": f.mean_admission,
                "peak_demand": f.peak_demand,
            }
            for name, f in lanes.items()
        },
        "pools": {
            name: {
                "resource": f.resource,
                "mean_pressure": f.mean_pressure,
                "peak_pressure": f.peak_pressure,
                "constrained_ticks": f.constrained_ticks,
                "replicas": None
                if f.replicas is None
                else dict(zip(("min", "mean", "max"), f.replicas, strict=True)),
                "scale_actions": f.scale_actions,
            }
            for name, f in pools.items()
        },
        "events": [{"t": e.t, "end": e.end, "what": e.what} for e in rec.events],
        "timeline": [_tick_record(rec, i) for i in range(len(rec.times))],
    }


def _tick_record(rec: Recording, i: int) -> dict[str, Any]:
    t = rec.times[i]
    layout = rec.layout_at(t)
    lanes = {
        name: {
            "demand": v.demand,
            "within_limit": v.allocation + v.held,
            "allocation": v.allocation,
            "held": v.held,
            "admission": v.admission,
            "stale": v.stale,
            "pools": list(layout.lane_pools.get(name, ())),
        }
        for name, series in rec.lanes.items()
        if (v := series[i]) is not None
    }
    pools, targets = {}, {}
    for name, series in rec.pools.items():
        if (pv := series[i]) is None:
            continue
        pools[name] = {
            "resource": pv.resource,
            "capacity": pv.capacity,
            "demand": pv.demand,
            "pressure": pv.pressure,
            "state": pv.state,
            "desired_replicas": pv.desired_replicas,
        }
        for target, tv in pv.targets.items():
            info = layout.targets.get(target)
            targets[target] = {
                "pool": name,
                "desired": tv.desired,
                "in_service": tv.in_service,
                "pending": tv.pending,
                "min": tv.min,
                "max": tv.max,
                "autoscaled": bool(info is not None and info.autoscaled),
            }
    return {"t": t, "clock": clock(t), "lanes": lanes, "pools": pools, "targets": targets}


def _html_table(headers: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _html(
    rec: Recording,
    lanes: dict[str, LaneFigures],
    pools: dict[str, PoolFigures],
    notes: list[str],
    source: Provenance,
) -> str:
    e = html.escape
    day = source.day.strftime("%A %-d %B %Y")
    events = "".join(f"<li>{e(event_text(ev))}</li>" for ev in rec.events)
    autoscaled = sorted(
        {n for _, lay in rec.layouts for n, info in lay.targets.items() if info.autoscaled}
    )
    meaning = (
        f"<p>For {e(', '.join(autoscaled))} (a group with its own autoscaler), "
        f"{e(desired_label(rec.target_info(autoscaled[0])))}.</p>"
        if autoscaled
        else ""
    )
    figures = "".join(
        f"<figure id='{e(file.removesuffix('.png'))}'><h2>{e(title)}</h2>"
        f"<img src='{e(file)}' alt='{e(title)}'><figcaption>{e(caption)}</figcaption></figure>"
        for file, (title, caption, _draw) in CHARTS.items()
    )
    notes_html = "".join(f"<li><code>{e(n)}</code></li>" for n in notes)
    facts = "".join(
        f"<dt>{e(term)}</dt><dd>{text}</dd>"
        for term, text in (
            ("Date", f"{e(day)} (simulated, UTC): {len(rec.times)} ticks of {rec.tick_s:.0f} s"),
            (
                "Topology file",
                f"<code>{e(source.topology_file)}</code> (stack {e(source.stack)}; "
                "the events below change it)",
            ),
            ("Version", e(source.version_text())),
            ("Generated", e(source.generated.strftime("%Y-%m-%d %H:%M UTC"))),
        )
    )
    title = f"Arklow: one simulated day ({source.day.date().isoformat()})"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{e(title)}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; max-width: 1200px; }}
table {{ border-collapse: collapse; margin: 1em 0; }}
th, td {{ border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: right; }}
th:first-child, td:first-child {{ text-align: left; }}
dl.run {{ display: grid; grid-template-columns: max-content auto; gap: 0.2em 1em; }}
dl.run dt {{ font-weight: bold; }}
figure {{ margin: 2em 0; }}
figcaption {{ color: #444; }}
img {{ max-width: 100%; }}
</style></head><body>
<h1>Arklow: one simulated day on local clouds</h1>
<dl class="run">{facts}</dl>
<p>Lane figures in unit-hours of each lane's work: demand = Σ min(demand, limit), served = Σ
allocation, held = demand − served. Pool demand and capacity are in the pool's resource units.</p>
{meaning}
<h2>Lanes</h2>{_html_table(LANE_HEADERS, lane_rows(lanes))}
<h2>Pools</h2>{_html_table(POOL_HEADERS, pool_rows(pools))}
<h2>Events</h2><ul>{events}</ul>
{figures}
<h2>Inspect the run</h2><ul>{notes_html}</ul>
</body></html>
"""
