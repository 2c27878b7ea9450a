"""``simulate``: the chosen policies of one topology replayed side by side over one trace."""

from __future__ import annotations

from collections.abc import Sequence

from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.core.topology import Topology
from arklow_pulumi.simulation.policies import BUILDERS, POLICIES, rule_of
from arklow_pulumi.simulation.simulating import RunResult, run
from arklow_pulumi.simulation.tracing import MAX_TICKS, Trace

DEFAULT_TICK = 60.0
DEFAULT_LAUNCH_DELAY = 120.0


def parse_policies(raw: str) -> tuple[str, ...]:
    """``arklow,static`` → the policies in the order given, each once; unknown names refused."""
    names = [name.strip() for name in raw.split(",") if name.strip()]
    unknown = [name for name in names if name not in BUILDERS]
    if unknown or not names:
        raise InvalidInput.one(
            "option '--policies'",
            "policies",
            f"unknown policy {unknown[0]!r} (known: {', '.join(POLICIES)})"
            if unknown
            else f"name at least one policy (known: {', '.join(POLICIES)})",
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
) -> dict[str, RunResult]:
    """Each policy's figures, keyed by policy in the order given; ``jobs`` caps the worker
    processes (default: the usable cores; the figures do not depend on it)."""
    scenarios = {name: (BUILDERS[name](topo), rule_of(name)) for name in policies}
    return run(scenarios, trace, tick, launch_delay, jobs=jobs, max_ticks=max_ticks)
