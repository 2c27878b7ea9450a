"""A replay's results as text at full precision, for tests that compare two ways of running it."""

from __future__ import annotations

from arklow_pulumi.simulation.simulating import RunResult


def figures_text(results: dict[str, RunResult], *, series: bool = False) -> str:
    """Every figure of every policy's run (and, with ``series``, every series point) as text."""
    figures = {
        name: (
            r.lanes,
            r.pools,
            r.resources,
            r.served_ratio,
            r.utilization,
            r.replica_hours,
            r.scale_actions,
            r.peak_replicas,
        )
        for name, r in results.items()
    }
    text = repr(figures)
    return text + repr({name: r.series for name, r in results.items()}) if series else text
