"""For tests that compare two ways of running one replay: its results as text at full precision,
and a count of the worker processes it started."""

from __future__ import annotations

from typing import Any

import pytest

from arklow_pulumi.simulation import simulating
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


def forks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the worker processes started by :func:`run` (one entry per parallel run)."""
    started: list[int] = []
    real = simulating.stream_forked

    def spy(task: Any, count: int, consume: Any) -> Any:
        started.append(count)
        return real(task, count, consume)

    monkeypatch.setattr(simulating, "stream_forked", spy)
    return started
