"""``arklow simulate``: replay a demand trace under the four policies (DESIGN.md, "Simulation and
what-if contracts"). JSON is the stable contract; the table is for people; ``--chart`` draws it."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from arklow_pulumi.cli.rendering import number, table
from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.reading.files import load_topology
from arklow_pulumi.simulation.simulate import (
    DEFAULT_LAUNCH_DELAY,
    DEFAULT_TICK,
    parse_policies,
)
from arklow_pulumi.simulation.simulate import (
    simulate as run_simulation,
)
from arklow_pulumi.simulation.simulating import RunResult
from arklow_pulumi.simulation.tracing import MAX_TICKS, MIN_TICK_S, read_trace

PATH = click.Path(path_type=Path, dir_okay=False)


class Seconds(click.ParamType[float]):
    """A finite number of seconds; a bad value is one line naming the option (exit 2)."""

    name = "seconds"

    def __init__(self, option: str, positive: bool, minimum: float = 0.0) -> None:
        self.option, self.positive, self.minimum = option, positive, minimum

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, float):
            return value
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            seconds = math.nan
        low_ok = seconds > 0 if self.positive else seconds >= 0
        if not (math.isfinite(seconds) and low_ok and seconds >= self.minimum):
            bound = f">= {self.minimum:g}" if self.minimum else "> 0" if self.positive else ">= 0"
            raise InvalidInput.one(
                f"option '{self.option}'",
                self.option.lstrip("-"),
                f"must be a finite number of seconds {bound} (got {value!r})",
            )
        return seconds


class Fraction(click.ParamType[float]):
    name = "fraction"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, float):
            return value
        try:
            x = float(value)
        except (TypeError, ValueError):
            x = math.nan
        if not (math.isfinite(x) and x >= 0):
            raise InvalidInput.one(
                "option '--threshold'", "threshold", f"must be a finite number >= 0 (got {value!r})"
            )
        return x


TICK = Seconds("--tick", positive=True, minimum=MIN_TICK_S)


class MaxTicks(click.ParamType[int]):
    """A tick count >= 1; a bad value is one line naming the option (exit 2)."""

    name = "count"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            count = int(str(value).replace("_", ""))
        except ValueError:
            count = 0
        if count < 1:
            raise InvalidInput.one(
                "option '--max-ticks'", "max-ticks", f"must be a whole number >= 1 (got {value!r})"
            )
        return count


MAX_TICKS_OPTION = click.option(
    "--max-ticks",
    type=MaxTicks(),
    default=MAX_TICKS,
    show_default=True,
    help="Refuse a run of more ticks than this (a guard against a run that never ends).",
)


class Jobs(click.ParamType[int]):
    """A worker process count >= 1; a bad value is one line naming the option (exit 2)."""

    name = "jobs"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            jobs = value
        else:
            try:
                jobs = int(str(value).strip())
            except ValueError:
                jobs = 0
        if jobs < 1:
            raise InvalidInput.one(
                "option '--jobs'", "jobs", f"must be a whole number >= 1 (got {value!r})"
            )
        return jobs


JOBS_HELP = (
    "Worker processes (default: the usable cores; 1 = in this process). The results are the "
    "same for any value."
)


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
            }
            for name, r in results.items()
        }
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
    return "\n".join(out)


@click.command()
@click.option("--topology", "topology_path", type=PATH, required=True, help="Topology YAML.")
@click.option("--trace", "trace_path", type=PATH, required=True, help="Demand trace CSV.")
@click.option(
    "--policies",
    default="arklow,standalone,free-for-all,static",
    show_default=True,
    help="Comma-separated policies to compare.",
)
@click.option("--tick", type=TICK, default=DEFAULT_TICK, show_default=True)
@MAX_TICKS_OPTION
@click.option(
    "--launch-delay",
    type=Seconds("--launch-delay", positive=False),
    default=DEFAULT_LAUNCH_DELAY,
    show_default=True,
)
@click.option(
    "--format", "fmt", type=click.Choice(["json", "table"]), default="table", show_default=True
)
@click.option("--chart", "chart_path", type=PATH, default=None, help="Write a PNG chart here.")
@click.option("--jobs", type=Jobs(), default=None, help=JOBS_HELP)
def simulate(
    topology_path: Path,
    trace_path: Path,
    policies: str,
    tick: float,
    launch_delay: float,
    fmt: str,
    chart_path: Path | None,
    jobs: int | None,
    max_ticks: int,
) -> None:
    """Replay a demand trace on a simulated clock under several policies, side by side."""
    chosen = parse_policies(policies)
    topology = load_topology(topology_path)
    trace = read_trace(trace_path, topology.lanes_by_key)
    results = run_simulation(
        topology, trace, chosen, tick, launch_delay, jobs=jobs, max_ticks=max_ticks
    )
    if chart_path is not None:
        from arklow_pulumi.simulation.charting import write_chart

        write_chart(results, chart_path)
    if fmt == "json":
        click.echo(json.dumps(simulate_document(results), indent=2))
    else:
        click.echo(simulate_table(results))
