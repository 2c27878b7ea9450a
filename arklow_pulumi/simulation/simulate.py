"""``simulate``: the chosen policies of one topology replayed side by side over one trace."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.core.topology import Topology
from arklow_pulumi.simulation.peaks import peak_demands
from arklow_pulumi.simulation.policies import ALL_POLICIES, POLICIES, REGISTRY, build
from arklow_pulumi.simulation.simulating import Recorder, RunResult, run
from arklow_pulumi.simulation.tracing import MAX_TICKS, Trace, check_replay

DEFAULT_TICK = 60.0
DEFAULT_LAUNCH_DELAY = 120.0
ALL = "all"  # --policies all: every policy, in the documented order


def parse_policies(raw: str) -> tuple[str, ...]:
    """``arklow,static`` → the policies in the order given, each once; ``all`` → every policy;
    unknown names refused."""
    names = [name.strip() for name in raw.split(",") if name.strip()]
    names = [p for name in names for p in (ALL_POLICIES if name == ALL else (name,))]
    unknown = [name for name in names if name not in REGISTRY]
    if unknown or not names:
        known = f"known: {', '.join(ALL_POLICIES)}, or {ALL}"
        raise InvalidInput.one(
            "option '--policies'",
            "policies",
            f"unknown policy {unknown[0]!r:.60} ({known})"
            if unknown
            else f"name at least one policy ({known})",
        )
    return tuple(dict.fromkeys(names))


def simulate(
    topo: Topology,
    trace: Trace,
    policies: Sequence[str] = POLICIES,
    tick: float = DEFAULT_TICK,
    launch_delay: float = DEFAULT_LAUNCH_DELAY,
    *,
    jobs: int | None = None,
    max_ticks: int = MAX_TICKS,
    admission: bool = True,
    recorder: Recorder | None = None,
    detail: bool = False,
    utilization: float | None = None,
    max_memory: int | None = None,
) -> dict[str, RunResult]:
    """Each policy's figures, keyed by policy in the order given; ``jobs`` caps the worker
    processes (default: the usable cores; the figures do not depend on it); ``recorder`` sees
    every tick (the run is then stepped in this process); ``detail`` keeps each resource's
    served units per tick (charts); ``utilization``: the ``cloud-autoscaler`` policy's target
    utilization (default: 1 / (1 + each pool's headroom)); a run estimated to need more than
    ``max_memory`` bytes is refused before it starts (:mod:`.budgeting`)."""
    check_replay(trace, tick, max_ticks)
    peaks: dict[Topology, Mapping[str, float]] = {}

    def peak(of: Topology) -> Mapping[str, float]:
        found = peaks.get(of)
        if found is None:
            found = peaks[of] = peak_demands(of, trace, tick)
        return found

    scenarios = {name: build(name, topo, peak, utilization) for name in policies}
    return run(
        scenarios,
        trace,
        tick,
        launch_delay,
        jobs=jobs,
        max_ticks=max_ticks,
        admission=admission,
        recorder=recorder,
        detail=detail,
        max_memory=max_memory,
    )
