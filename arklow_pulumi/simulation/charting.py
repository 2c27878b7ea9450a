"""A PNG picture of a simulation: per resource, demand, served and capacity in *pool units*
(Σ e × cost over the lanes drawing from the resource's pools: a lane costing 10 llm units per
unit of work counts 10 there), each policy's served and capacity beside the demand (the same in
every policy), and each policy's in-service replicas of that resource's pools. matplotlib is
imported on first use (Agg backend, no display).

A replay of more ticks than the series hold points (:data:`.aggregating.CHART_POINTS`) is drawn
from buckets of consecutive ticks: each line is the buckets' means, and the demand and the
replicas have a light band up to each bucket's highest tick, so a short peak stays visible."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.extras import require
from arklow_pulumi.simulation.figures import RunResult


def _same_lines(
    results: Mapping[str, RunResult], resource: str
) -> list[tuple[list[str], RunResult]]:
    """The policies with a line for ``resource``, those whose served, capacity and replicas
    series are the same grouped (in the order given): a line drawn over an identical one would
    hide it, so each group is drawn once and named by every policy in it."""
    groups: dict[tuple[object, ...], tuple[list[str], RunResult]] = {}
    for name, r in results.items():
        series = r.series.resources.get(resource)
        if series is None or series.demand is None or series.capacity is None:
            continue  # not a resource of this policy, or a run made without detail
        key = (tuple(series.served or ()), tuple(series.capacity), tuple(series.replicas))
        groups.setdefault(key, ([], r))[0].append(name)
    return list(groups.values())


def _x_label(results: Mapping[str, RunResult]) -> str:
    buckets = {r.series.bucket for r in results.values()}
    bucket = max(buckets, default=1)
    if bucket == 1:
        return "hours since the trace's start"
    return (
        f"hours since the trace's start (each point the mean of {bucket:,} ticks; "
        "the bands reach each bucket's highest)"
    )


def write_chart(results: Mapping[str, RunResult], path: Path) -> None:
    require("charts", "option '--chart'")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    resources = list(dict.fromkeys(name for r in results.values() for name in r.resources))
    rows = max(1, 2 * len(resources))
    fig, axes = plt.subplots(rows, 1, figsize=(11, 2.6 * rows), sharex=True, squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, resource in enumerate(resources):
        units, replicas = axes[2 * k, 0], axes[2 * k + 1, 0]
        shown = False
        for n, (names, r) in enumerate(_same_lines(results, resource)):
            series = r.series.resources[resource]
            assert series.demand is not None and series.capacity is not None
            hours = [t / 3600 for t in r.series.times]
            color = colors[n % len(colors)]
            highs = r.series.highs.resources[resource] if r.series.highs is not None else None
            if not shown:
                units.plot(hours, series.demand, label="demand", lw=1.2, color="black")
                if highs is not None and highs.demand is not None:
                    units.fill_between(
                        hours, series.demand, highs.demand, color="black", alpha=0.12, lw=0
                    )
                shown = True
            figures = r.resources[resource]
            label = " = ".join(names)  # policies whose lines coincide share one, named by all
            units.plot(
                hours,
                series.served,
                lw=1,
                color=color,
                label=f"{label} served ({figures.utilization:.1%} of capacity)",
            )
            capacity = f"{label} capacity"
            units.plot(hours, series.capacity, lw=1, ls="--", color=color, label=capacity)
            replicas.plot(hours, series.replicas, lw=1, color=color, label=label)
            if highs is not None:
                replicas.fill_between(
                    hours, series.replicas, highs.replicas, color=color, alpha=0.15, lw=0
                )
        units.set_title(
            f"{resource}: demand, served and capacity in pool units (Σ work × cost)", fontsize=9
        )
        units.set_ylabel(f"{resource} units")
        units.legend(fontsize=6, loc="upper right", ncol=2)
        replicas.set_title(f"{resource}: in-service replicas", fontsize=9)
        replicas.set_ylabel("replicas")
        replicas.legend(fontsize=6, loc="upper right", ncol=2)
    axes[rows - 1, 0].set_xlabel(_x_label(results))
    fig.tight_layout()
    try:
        fig.savefig(path, format="png", dpi=90)
    except OSError as exc:
        raise InvalidInput.one(
            f"chart file {str(path)!r}", "(file)", exc.strerror or str(exc)
        ) from exc
    finally:
        plt.close(fig)
