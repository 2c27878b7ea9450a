"""``arklow simulate``: replay a demand trace under several policies (``docs/simulate.md``).
JSON is the stable contract; the table is for people; ``--chart`` draws it; ``--ticks-csv``
writes every tick."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import click

from arklow_pulumi.cli.outputs import check_outputs
from arklow_pulumi.cli.rendering import number
from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.reading.files import load_topology
from arklow_pulumi.simulation.budgeting import DEFAULT_BUDGET, parse_size, size_text
from arklow_pulumi.simulation.figures import PoolFigures, RunResult
from arklow_pulumi.simulation.policies import POLICIES
from arklow_pulumi.simulation.recording import TickRecorder
from arklow_pulumi.simulation.simulate import (
    DEFAULT_LAUNCH_DELAY,
    DEFAULT_TICK,
    parse_policies,
)
from arklow_pulumi.simulation.simulate import (
    simulate as run_simulation,
)
from arklow_pulumi.simulation.tracing import MAX_TICKS, MIN_TICK_S, read_trace
from arklow_pulumi.text_tables import table

PATH = click.Path(path_type=Path, dir_okay=False)


class Number(click.ParamType[float]):
    """A finite number in ``[low, ∞)`` (above ``low`` when ``open_low``), whole when ``whole``; a
    bad value is one line naming the option (exit 2). The one check of every number option of
    ``simulate`` and ``what-if``."""

    def __init__(
        self,
        option: str,
        low: float,
        *,
        open_low: bool = False,
        whole: bool = False,
        unit: str = "",
        high: float | None = None,
    ) -> None:
        self.option, self.low, self.open_low, self.whole = option, low, open_low, whole
        self.high = high
        self.name = "count" if whole else unit or "number"
        self.what = "a whole number" if whole else f"a finite number{unit and ' of ' + unit}"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, int | float) and not isinstance(value, bool):
            number: float = value
        else:
            try:
                text = str(value).strip().replace("_", "")
                number = int(text) if self.whole else float(text)
            except ValueError:
                number = math.nan
        low_ok = number > self.low if self.open_low else number >= self.low
        high_ok = self.high is None or number <= self.high
        if not (math.isfinite(number) and low_ok and high_ok):
            bound = f"{'>' if self.open_low else '>='} {self.low:g}"
            if self.high is not None:
                bound += f" and <= {self.high:g}"
            raise InvalidInput.one(
                f"option '{self.option}'",
                self.option.lstrip("-"),
                f"must be {self.what} {bound} (got {value!r:.40})",
            )
        return number


class Size(click.ParamType[int]):
    """A memory size such as ``512M`` or ``4G`` in bytes (:func:`.budgeting.parse_size`); a bad
    value is one line naming the option (exit 2)."""

    name = "size"

    def __init__(self, option: str) -> None:
        self.option = option

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        return parse_size(str(value), self.option)


JOBS_HELP = (
    "Worker processes (default: the usable cores; 1 = in this process). The results are the "
    "same for any value."
)
THRESHOLD = Number("--threshold", 0.0)


def replay_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options every replay takes (``simulate``, ``what-if``): ``--tick``, ``--max-ticks``,
    ``--max-memory``, ``--launch-delay``, ``--jobs`` and ``--autoscaler-utilization``."""
    options = (
        click.option(
            "--tick",
            type=Number("--tick", MIN_TICK_S, unit="seconds"),
            default=DEFAULT_TICK,
            show_default=True,
        ),
        click.option(
            "--max-ticks",
            type=Number("--max-ticks", 1, whole=True),
            default=MAX_TICKS,
            show_default=True,
            help="Refuse a run of more ticks than this (a guard against a run that never ends).",
        ),
        click.option(
            "--max-memory",
            type=Size("--max-memory"),
            default=DEFAULT_BUDGET,
            show_default=size_text(DEFAULT_BUDGET),
            help="Refuse, before it starts, a run estimated to need more memory than this "
            "(binary multiples: 512M, 4G).",
        ),
        click.option(
            "--launch-delay",
            type=Number("--launch-delay", 0.0, unit="seconds"),
            default=DEFAULT_LAUNCH_DELAY,
            show_default=True,
        ),
        click.option("--jobs", type=Number("--jobs", 1, whole=True), default=None, help=JOBS_HELP),
        click.option(
            "--autoscaler-utilization",
            "utilization",
            type=Number("--autoscaler-utilization", 0.0, open_low=True, high=1.0),
            default=None,
            help="The cloud-autoscaler policy's target utilization of every pool "
            "(default: 1 / (1 + the pool's headroom)).",
        ),
    )
    for option in reversed(options):
        command = option(command)
    return command


def simulate_document(results: Mapping[str, RunResult]) -> dict[str, Any]:
    return {
        "policies": {
            name: {
                "served_ratio": number(r.served_ratio),
                "utilization": number(r.utilization),
                "replica_hours": number(r.replica_hours),
                "scale_actions": r.scale_actions,
                "lanes": {
                    key: {
                        "demand": number(lane.demand),
                        "served": number(lane.served),
                        "held": number(lane.held),
                    }
                    for key, lane in r.lanes.items()
                },
                "pools": {
                    key: {
                        "resource": pool.resource,
                        **_capacity_figures(pool),
                        "reasons": reason_counts(pool.reasons),
                    }
                    for key, pool in r.pools.items()
                },
                "resources": {key: _capacity_figures(f) for key, f in r.resources.items()},
            }
            for name, r in results.items()
        }
    }


def reason_counts(reasons: Mapping[str, int]) -> dict[str, int]:
    """A pool's decisions per reason, in :data:`~arklow_pulumi.core.policy.REASONS` order
    (reasons never given left out)."""
    from arklow_pulumi.core.policy import REASONS

    return {r: reasons[r] for r in REASONS if reasons.get(r)}


def _capacity_figures(f: PoolFigures) -> dict[str, Any]:
    """A pool's or a resource's figures (pool-unit-hours, replica-hours, seconds, ticks)."""
    return {
        "capacity": number(f.capacity_hours),
        "demand": number(f.demand_hours),
        "served": number(f.served_hours),
        "held": number(f.held_hours),
        "admitted": number(f.admitted_hours),
        "utilization": number(f.utilization),
        "replica_hours": number(f.replica_hours),
        "peak_replicas": f.peak_replicas,
        "time_at_max_s": number(f.time_at_max_s),
        "constrained_ticks": f.constrained_ticks,
    }


def simulate_table(results: Mapping[str, RunResult]) -> str:
    names = list(results)
    summary = [
        [
            name,
            f"{r.served_ratio:.2%}",
            f"{r.utilization:.2%}",
            f"{r.replica_hours:.1f}",
            str(r.scale_actions),
            f"{sum(lane.held for lane in r.lanes.values()):.1f}",
        ]
        for name, r in results.items()
    ]
    out = ["POLICIES"]
    out += table(
        ["policy", "served", "utilization", "replica-hours", "scale actions", "held unit-hours"],
        summary,
        right={1, 2, 3, 4, 5},
    )
    first = results[names[0]]
    rows = []
    for key, lane in first.lanes.items():
        cells = [key, f"{lane.demand:.1f}"]
        for name in names:
            held = results[name].lanes[key].held
            cells.append(f"{held / lane.demand:.1%}" if lane.demand > 0 else "-")
        rows.append(cells)
    out += ["", "HELD SHARE PER LANE (held / demand, unit-hours)"]
    out += table(["lane", "demand", *names], rows, right=set(range(1, len(names) + 2)))
    resources = [
        [
            resource,
            name,
            f"{f.utilization:.2%}",
            f"{f.replica_hours:.1f}",
            str(f.peak_replicas),
            f"{f.time_at_max_s / 3600:.1f}",
            str(f.constrained_ticks),
            f"{f.held_hours:.1f}",
        ]
        for resource in dict.fromkeys(k for r in results.values() for k in r.resources)
        for name, r in results.items()
        if (f := r.resources.get(resource)) is not None
    ]
    out += ["", "PER RESOURCE (pool units: work × cost)"]
    out += table(
        [
            "resource",
            "policy",
            "utilization",
            "replica-hours",
            "peak replicas",
            "hours at max",
            "constrained ticks",
            "held unit-hours",
        ],
        resources,
        right=set(range(2, 8)),
    )
    return "\n".join(out)


@click.command()
@click.option("--topology", "topology_path", type=PATH, required=True, help="Topology YAML.")
@click.option("--trace", "trace_path", type=PATH, required=True, help="Demand trace CSV.")
@click.option(
    "--policies",
    default=",".join(POLICIES),
    show_default=True,
    help="Comma-separated policies to compare (also single-tick, static-peak, "
    "standalone-sized, cloud-autoscaler; 'all' for every one).",
)
@replay_options
@click.option(
    "--format", "fmt", type=click.Choice(["json", "table"]), default="table", show_default=True
)
@click.option("--chart", "chart_path", type=PATH, default=None, help="Write a PNG chart here.")
@click.option(
    "--ticks-csv",
    "ticks_path",
    type=PATH,
    default=None,
    help="Write every tick's figures per pool, target and lane here (CSV; runs in one process).",
)
def simulate(
    topology_path: Path,
    trace_path: Path,
    policies: str,
    tick: float,
    launch_delay: float,
    fmt: str,
    chart_path: Path | None,
    ticks_path: Path | None,
    jobs: int | None,
    max_ticks: int,
    utilization: float | None,
    max_memory: int,
) -> None:
    """Replay a demand trace on a simulated clock under several policies, side by side."""
    check_outputs(
        [("--chart", chart_path), ("--ticks-csv", ticks_path)],
        [("--topology", topology_path), ("--trace", trace_path)],
    )
    chosen = parse_policies(policies)
    topology = load_topology(topology_path)
    trace = read_trace(trace_path, topology.lanes_by_key)
    options: dict[str, Any] = {
        "max_ticks": max_ticks,
        "detail": chart_path is not None,
        "utilization": utilization,
        "max_memory": max_memory,
    }
    if ticks_path is None:
        results = run_simulation(topology, trace, chosen, tick, launch_delay, jobs=jobs, **options)
    else:
        with TickRecorder(ticks_path) as recorder:
            results = run_simulation(
                topology, trace, chosen, tick, launch_delay, recorder=recorder, **options
            )
    if chart_path is not None:
        from arklow_pulumi.simulation.charting import write_chart

        write_chart(results, chart_path)
    if fmt == "json":
        click.echo(json.dumps(simulate_document(results), indent=2))
    else:
        click.echo(simulate_table(results))
