"""The report's charts, drawn from a :class:`Recording` with matplotlib's object API (no pyplot,
no display): each function returns a :class:`~matplotlib.figure.Figure` that the report saves.

Every chart reads the same way: hours of the simulated day along the bottom, the day's events
(:attr:`Recording.events`: windows shaded, moments dashed) marked on every panel and named along
its top edge, each panel titled with what it shows (a lane with its pools, a target with its kind
and pool, a pool with its resource), units that name the resource, and a legend outside the
plotting area so that it never covers data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from arklow_pulumi.controller.ports import PoolView
from arklow_pulumi.scenario.day import DAY_S, HOUR, Event
from arklow_pulumi.scenario.recording import Recording, TargetInfo

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

NAN = float("nan")
# Events in colours the series do not use (they take matplotlib's first five), dark enough that
# their labels read on white (a contrast of at least 4.5:1)
EVENT_COLORS = ("#6b6b00", "#8c3b0c", "#5a3d8a", "#0b6b75", "#8a1f5a")
# A pool whose capacity is this many times its peak demand is drawn to its demand's scale
# (capacity named in the panel): on one axis both would be flat lines
FAR_ABOVE = 4.0
KINDS = {"aws_asg": "AWS Auto Scaling group", "gcp_mig": "GCP managed instance group"}


def clock(t: float) -> str:
    t = min(t, DAY_S)
    return f"{int(t // HOUR):02d}:{int(t % HOUR // 60):02d}"


def event_text(event: Event) -> str:
    when = clock(event.t) if event.end is None else f"{clock(event.t)}–{clock(event.end)}"
    return f"{when} {event.what}"


def desired_label(info: TargetInfo | None) -> str:
    if info is not None and info.autoscaled:
        return "desired = the autoscaler's minimum, set by Arklow (its autoscaler may run more)"
    return "desired = the group's target size, set by Arklow"


def names_text(changes: Sequence[tuple[float, tuple[str, ...]]], one: str, many: str) -> str:
    """``pool shared-gpu``; ``pools a, b``; ``pool reports/gpu; from 12:00 shared-gpu``."""
    parts: list[str] = []
    for since, names in changes:
        listed = ", ".join(names) or "none"
        parts.append(listed if not parts else f"from {clock(since)} {listed}")
    several = any(len(names) > 1 for _, names in changes)
    return f"{many if several else one} " + "; ".join(parts)


def unit_text(costs: Mapping[str, float]) -> str:
    """What one unit of a lane's work takes: ``1 gpu``, ``2 gpu + 1 llm-quota``."""
    return " + ".join(f"{cost:g} {resource}" for resource, cost in costs.items()) or "?"


# -- the figures --------------------------------------------------------------------------------


def lanes_figure(rec: Recording) -> Figure:
    """Per lane: demand (≤ limit), admission and held work, in units of the lane's work."""
    names = sorted(rec.lanes)
    cols = 2
    rows = max(1, (len(names) + cols - 1) // cols)
    fig, axes = _figure(rows, cols, height=2.5)
    x = _hours(rec)
    last = rec.layouts[-1][1] if rec.layouts else None
    for ax, name in zip(axes, names, strict=False):
        series = rec.lanes[name]
        within = [v.allocation + v.held if v else NAN for v in series]
        reported = [v.demand if v else NAN for v in series]
        if any(r > w + 1e-9 for r, w in zip(reported, within, strict=True)):
            ax.plot(
                x,
                reported,
                color="tab:blue",
                linewidth=0.9,
                linestyle=":",
                label="reported demand (above the limit: the lane's own queue)",
            )
        ax.plot(x, within, color="tab:blue", linewidth=1.2, label="demand (≤ the lane's limit)")
        ax.plot(
            x,
            [v.admission if v else NAN for v in series],
            color="tab:green",
            linewidth=1.2,
            label="admission (what the lane may run)",
        )
        ax.fill_between(
            x,
            [v.held if v else 0.0 for v in series],
            step="mid",
            color="tab:red",
            alpha=0.35,
            linewidth=0,
            label="held (demand the pools could not serve)",
        )
        pools = names_text(rec.lane_pools(name), "pool", "pools")
        ax.set_title(f"{name} — {pools}", fontsize=9, pad=11)
        costs = last.lane_costs.get(name, {}) if last is not None else {}
        ax.set_ylabel(f"units of work\n(1 = {unit_text(costs)})", fontsize=8)
        _mark_events(ax, rec.events)
    for ax in axes[len(names) :]:
        ax.set_visible(False)
    _legend_on_top(fig, axes, rec.events, ncols=3)
    return fig


def targets_figure(rec: Recording) -> Figure:
    """Per scale target: the desired count Arklow set and the replicas in service. Desired of a
    group with its own autoscaler is the autoscaler's minimum, drawn (and named) apart."""
    series = [
        (pool, target, values)
        for pool in sorted(rec.pools)
        for target, values in rec.target_series(pool).items()
    ]
    fig, axes = _figure(max(1, len(series)), 1, height=2.3)
    x = _hours(rec)
    for ax, (pool, target, values) in zip(axes, series, strict=False):
        info = rec.target_info(target)
        scaled = info is not None and info.autoscaled
        kind = KINDS.get(info.kind, info.kind) if info is not None else "group"
        ax.step(
            x,
            [v[0] if v else NAN for v in values],
            where="post",
            color="tab:red" if scaled else "tab:orange",
            label=desired_label(info),
        )
        ax.step(
            x,
            [v[1] if v else NAN for v in values],
            where="post",
            color="tab:blue",
            linestyle="--",
            label="in service (the group's running replicas)",
        )
        what = f"{kind} with its own autoscaler: desired = its minimum" if scaled else kind
        ax.set_title(f"{target} — {what}; pool {pool}", fontsize=9, pad=11)
        unit = f"{info.units_per_replica:g} {info.resource} units" if info is not None else "?"
        ax.set_ylabel(f"replicas\n(1 = {unit})", fontsize=8)
        _mark_events(ax, rec.events)
    _legend_on_top(fig, axes, rec.events, ncols=2)
    return fig


def pools_figure(rec: Recording) -> Figure:
    """Per pool: what its members want (Σ min(demand, limit) × cost) against its capacity."""
    names = sorted(rec.pools)
    fig, axes = _figure(max(1, len(names)), 1, height=2.0)
    x = _hours(rec)
    for ax, name in zip(axes, names, strict=False):
        views = rec.pools[name]
        resource = next((v.resource for v in views if v is not None), "?")
        ax.step(
            x,
            [v.capacity if v else NAN for v in views],
            where="post",
            color="black",
            linewidth=1.0,
            label="capacity (static + in-service replicas)",
        )
        ax.plot(
            x,
            [v.demand if v else NAN for v in views],
            color="tab:blue",
            linewidth=1.2,
            label="demand (Σ min(demand, limit) × cost)",
        )
        members = names_text(rec.pool_members(name), "member", "members")
        ax.set_title(f"pool {name} ({resource}) — {members}", fontsize=9, pad=11)
        ax.set_ylabel(f"{resource} units", fontsize=8)
        _scale_to_demand(ax, views)
        _mark_events(ax, rec.events)
    _legend_on_top(fig, axes, rec.events, ncols=2)
    return fig


def _scale_to_demand(ax: Axes, views: Sequence[PoolView | None]) -> None:
    """A pool whose capacity is far above its demand all day (a provider quota): the axis
    follows the demand, and the capacity, off the scale, is named in the panel."""
    seen = [v for v in views if v is not None]
    peak = max((v.demand for v in seen), default=0.0)
    low = min((v.capacity for v in seen), default=0.0)
    if peak <= 0 or low < FAR_ABOVE * peak:
        return
    ax.set_ylim(0, peak * 1.3)
    high = max(v.capacity for v in seen)
    text = f"{low:g}" if high == low else f"{low:g} to {high:g}"
    ax.text(
        0.01,
        0.95,
        f"capacity {text}, above this scale: the demand never nears it",
        transform=ax.transAxes,
        ha="left",
        va="top",
        fontsize=8,
    )


def pressure_figure(rec: Recording) -> Figure:
    """Every pool's pressure (demand / capacity) on one panel, with the line where it is 1."""
    fig, axes = _figure(1, 1, height=3.6)
    ax = axes[0]
    x = _hours(rec)
    for name in sorted(rec.pools):
        values = [v.pressure if v and v.pressure is not None else NAN for v in rec.pools[name]]
        ax.plot(x, values, linewidth=1.2, label=f"pool {name}")
    ax.axhline(1.0, color="black", linewidth=0.9)
    ax.annotate(
        "pressure 1:\ndemand = capacity",
        xy=(1.0, 1.0),
        xycoords=("axes fraction", "data"),
        xytext=(4, 0),
        textcoords="offset points",
        va="center",
        ha="left",
        fontsize=8,
    )
    ax.set_title(
        "pool pressure: demand / capacity, each in its pool's resource", fontsize=9, pad=11
    )
    ax.set_ylabel("pressure (ratio)", fontsize=8)
    _mark_events(ax, rec.events)
    _legend_on_top(fig, axes, rec.events, ncols=4)
    return fig


# -- shared parts -------------------------------------------------------------------------------


def _figure(rows: int, cols: int, height: float) -> tuple[Figure, list[Axes]]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(13, height * rows + 1.2), layout="constrained")
    grid = fig.subplots(rows, cols, sharex=True, squeeze=False)
    axes = list(grid.flat)
    ticks = list(range(0, 25, 3))
    for ax in axes:
        ax.set_xlim(0, 24)
        ax.set_xticks(ticks, [f"{h:02d}:00" for h in ticks])
        ax.tick_params(labelsize=8, labelbottom=True)
        ax.grid(axis="y", color="#e5e5e5", linewidth=0.6)
    for ax in grid[-1]:
        ax.set_xlabel("time of the simulated day (UTC)", fontsize=8)
    return fig, axes


def _hours(rec: Recording) -> list[float]:
    return [t / HOUR for t in rec.times]


def _mark_events(ax: Axes, events: Sequence[Event]) -> None:
    """Windows shaded, moments dashed, each named just above the panel's top edge (a window's
    name ends where it ends, a moment's starts where it happens, so neighbours do not collide)."""
    edge = ax.get_xaxis_transform()  # x in data, y in axes fraction
    for event, color in zip(events, _colors(events), strict=True):
        if event.end is None:
            ax.axvline(event.t / HOUR, color=color, linestyle="--", linewidth=1)
            at, align = event.t, "left"
        else:
            ax.axvspan(event.t / HOUR, event.end / HOUR, color=color, alpha=0.15, linewidth=0)
            at, align = event.end, "right"
        ax.text(
            at / HOUR,
            1.01,
            f" {event.label} ",
            transform=edge,
            ha=align,
            va="bottom",
            fontsize=7,
            color=color,
            clip_on=False,
        )


def _colors(events: Sequence[Event]) -> list[str]:
    return [EVENT_COLORS[i % len(EVENT_COLORS)] for i in range(len(events))]


def _legend_on_top(fig: Figure, axes: Sequence[Axes], events: Sequence[Event], ncols: int) -> None:
    """One legend above every panel: each distinct series of ``axes``, then the events, each in
    full."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    entries: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            entries.setdefault(label, handle)
    for event, color in zip(events, _colors(events), strict=True):
        if event.end is None:
            entries[event_text(event)] = Line2D([], [], color=color, linestyle="--", linewidth=1)
        else:
            entries[event_text(event)] = Patch(color=color, alpha=0.3, linewidth=0)
    if entries:
        fig.legend(
            list(entries.values()),
            list(entries),
            loc="outside upper center",
            ncols=ncols,
            fontsize=8,
            frameon=False,
        )
