"""The day in numbers (a summary for the terminal) and in pictures (``index.html`` with PNG
charts: per lane demand vs admission and held work; per target desired vs in-service replicas;
pool pressure). matplotlib draws off-screen (Agg); nothing here reads a store or a cloud."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from arklow_pulumi.scenario.recording import LaneFigures, PoolFigures, Recording
from arklow_pulumi.text_tables import table

HOUR = 3600.0


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
    "peak demand",
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
        lines += [f"{_clock(t)}  {what}" for t, what in rec.events]
    return "\n".join(lines)


def _clock(t: float) -> str:
    return f"{int(t // HOUR):02d}:{int(t % HOUR // 60):02d}"


# -- charts ------------------------------------------------------------------------------------


def _hours(rec: Recording) -> list[float]:
    return [t / HOUR for t in rec.times]


def _mark_events(ax: object, rec: Recording) -> None:
    for t, _what in rec.events:
        ax.axvline(t / HOUR, color="grey", linestyle=":", linewidth=1)  # type: ignore[attr-defined]


def lanes_chart(rec: Recording, path: Path) -> None:
    import matplotlib.pyplot as plt

    names = sorted(rec.lanes)
    cols = 2
    rows = (len(names) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(12, 2.6 * rows), sharex=True, squeeze=False)
    x = _hours(rec)
    for ax, name in zip(axes.flat, names, strict=False):
        series = rec.lanes[name]
        nan = float("nan")
        wanted = [v.allocation + v.held if v else nan for v in series]
        ax.plot(x, wanted, label="demand (≤ limit)", color="tab:blue", linewidth=1.2)
        ax.plot(
            x,
            [v.admission if v else nan for v in series],
            label="admission",
            color="tab:green",
            linewidth=1.2,
        )
        ax.fill_between(
            x,
            [v.held if v else 0.0 for v in series],
            color="tab:red",
            alpha=0.35,
            label="held",
            step="mid",
        )
        _mark_events(ax, rec)
        ax.set_title(name, fontsize=10)
        ax.set_xlim(0, 24)
        ax.set_ylabel("units")
    for ax in list(axes.flat)[len(names) :]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("hour of the day")
    axes.flat[0].legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def targets_chart(rec: Recording, path: Path) -> None:
    import matplotlib.pyplot as plt

    series = [
        (pool, target, values)
        for pool in sorted(rec.pools)
        for target, values in rec.target_series(pool).items()
    ]
    fig, axes = plt.subplots(
        len(series) or 1, 1, figsize=(12, 2.6 * max(1, len(series))), sharex=True, squeeze=False
    )
    x = _hours(rec)
    nan = float("nan")
    for ax, (pool, target, values) in zip(axes.flat, series, strict=False):
        ax.step(
            x,
            [v[0] if v else nan for v in values],
            where="post",
            label="desired",
            color="tab:orange",
        )
        ax.step(
            x,
            [v[1] if v else nan for v in values],
            where="post",
            label="in service",
            color="tab:blue",
            linestyle="--",
        )
        _mark_events(ax, rec)
        ax.set_title(f"{target} (pool {pool})", fontsize=10)
        ax.set_ylabel("replicas")
        ax.set_xlim(0, 24)
        ax.legend(fontsize=8, loc="upper left")
    axes.flat[-1].set_xlabel("hour of the day")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def pressure_chart(rec: Recording, path: Path) -> None:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(12, 3.6))
    x = _hours(rec)
    nan = float("nan")
    for name in sorted(rec.pools):
        values = [v.pressure if v and v.pressure is not None else nan for v in rec.pools[name]]
        ax.plot(x, values, label=name, linewidth=1.2)
    ax.axhline(1.0, color="black", linewidth=0.8)
    _mark_events(ax, rec)
    ax.set_xlim(0, 24)
    ax.set_xlabel("hour of the day")
    ax.set_ylabel("pressure (demand / capacity)")
    ax.legend(fontsize=8, loc="upper left", ncol=3)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


CHARTS = {
    "lanes.png": ("Lanes: demand vs admission, held work", lanes_chart),
    "targets.png": ("Scale targets: desired vs in-service replicas", targets_chart),
    "pressure.png": ("Pool pressure", pressure_chart),
}


def write_report(
    rec: Recording,
    lanes: dict[str, LaneFigures],
    pools: dict[str, PoolFigures],
    directory: Path,
    notes: list[str],
) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    directory.mkdir(parents=True, exist_ok=True)
    for file, (_title, draw) in CHARTS.items():
        draw(rec, directory / file)
    (directory / "summary.json").write_text(json.dumps(summary_document(rec, lanes, pools)))
    index = directory / "index.html"
    index.write_text(_html(rec, lanes, pools, notes))
    return index


def summary_document(
    rec: Recording, lanes: dict[str, LaneFigures], pools: dict[str, PoolFigures]
) -> dict[str, Any]:
    """For programs: the figures, the events, and per tick each lane's ``[demand ≤ limit,
    allocation, held, admission]`` and each target's ``[desired, in_service, min, max]``."""
    timeline = []
    for i, t in enumerate(rec.times):
        tick_lanes = {
            name: [v.allocation + v.held, v.allocation, v.held, v.admission]
            for name, series in rec.lanes.items()
            if (v := series[i]) is not None
        }
        tick_targets = {
            name: [tv.desired, tv.in_service, tv.min, tv.max]
            for series in rec.pools.values()
            if (pv := series[i]) is not None
            for name, tv in pv.targets.items()
        }
        tick_pools = sorted(name for name, series in rec.pools.items() if series[i] is not None)
        timeline.append({"t": t, "lanes": tick_lanes, "targets": tick_targets, "pools": tick_pools})
    return {
        "tick_s": rec.tick_s,
        "lanes": {
            name: {
                "demand": f.demand,
                "served": f.served,
                "held": f.held,
                "held_pct": f.held_pct,
                "mean_admission": f.mean_admission,
            }
            for name, f in lanes.items()
        },
        "pools": {
            name: {
                "resource": f.resource,
                "mean_pressure": f.mean_pressure,
                "peak_pressure": f.peak_pressure,
                "replicas": None if f.replicas is None else list(f.replicas),
                "scale_actions": f.scale_actions,
            }
            for name, f in pools.items()
        },
        "events": [{"t": t, "what": what} for t, what in rec.events],
        "timeline": timeline,
    }


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
) -> str:
    events = "".join(f"<li>{_clock(t)} — {html.escape(w)}</li>" for t, w in rec.events)
    charts = "".join(
        f"<h2>{html.escape(title)}</h2><img src='{file}' alt='{html.escape(title)}'>"
        for file, (title, _draw) in CHARTS.items()
    )
    notes_html = "".join(f"<li>{html.escape(n)}</li>" for n in notes)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Arklow: one simulated day</title>
<style>
body {{ font-family: sans-serif; margin: 2em; max-width: 1200px; }}
table {{ border-collapse: collapse; margin: 1em 0; }}
th, td {{ border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: right; }}
th:first-child, td:first-child {{ text-align: left; }}
img {{ max-width: 100%; }}
</style></head><body>
<h1>Arklow: one simulated day on local clouds</h1>
<p>{len(rec.times)} controller ticks of {rec.tick_s:.0f} s (simulated clock). Lane figures in
unit-hours: demand = Σ min(demand, limit), served = Σ allocation, held = demand − served.</p>
<ul>{notes_html}</ul>
<h2>Lanes</h2>{_html_table(LANE_HEADERS, lane_rows(lanes))}
<h2>Pools</h2>{_html_table(POOL_HEADERS, pool_rows(pools))}
<h2>Events</h2><ul>{events}</ul>
{charts}
</body></html>
"""
