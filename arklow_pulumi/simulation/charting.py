"""A PNG picture of a simulation: per policy, capacity against demand and what was served over
time, and in-service replicas. matplotlib is imported on first use (Agg backend, no display)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.simulation.simulating import RunResult


def write_chart(results: Mapping[str, RunResult], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise InvalidInput.one(
            "option '--chart'", "chart", "needs matplotlib (pip install matplotlib)"
        ) from exc
    n = len(results)
    fig, axes = plt.subplots(n + 1, 1, figsize=(11, 2.6 * (n + 1)), sharex=True, squeeze=False)
    for ax, (name, r) in zip(axes[:n, 0], results.items(), strict=True):
        hours = [t / 3600 for t in r.series.times]
        ax.plot(hours, r.series.demand, label="demand (min(demand, limit))", lw=1)
        ax.plot(hours, r.series.served, label="served", lw=1)
        ax.plot(hours, r.series.capacity, label="capacity", lw=1, ls="--")
        ax.set_title(
            f"{name}: served {r.served_ratio:.1%}, utilization {r.utilization:.1%}, "
            f"{r.replica_hours:.0f} replica-hours, {r.scale_actions} scale actions",
            fontsize=9,
        )
        ax.set_ylabel("units")
        ax.legend(fontsize=7, loc="upper right")
    replicas = axes[n, 0]
    for name, r in results.items():
        replicas.plot([t / 3600 for t in r.series.times], r.series.replicas, label=name, lw=1)
    replicas.set_ylabel("in-service replicas")
    replicas.set_xlabel("hours since the trace's start")
    replicas.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    try:
        fig.savefig(path, format="png", dpi=90)
    except OSError as exc:
        raise InvalidInput.one(
            f"chart file {str(path)!r}", "(file)", exc.strerror or str(exc)
        ) from exc
    finally:
        plt.close(fig)
