"""``arklow simulate``: replay a demand trace under the four policies (``docs/simulate.md``).
JSON is the stable contract; the table is for people; ``--chart`` draws it."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import click

from arklow_pulumi.cli.rendering import number
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
from arklow_pulumi.text_tables import table

PATH = click.Path(path_type=Path, dir_okay=False)


class Number(click.ParamType[float]):
    """A finite number in ``[low, ∞)`` (above ``low`` when ``open_low``), whole when ``whole``; a
    bad value is one line naming the option (exit 2). The one check of every number option of
    ``simulate`` and ``what-if``."""

    def __init__(
        self, option: str, low: float, *, open_low: bool = False, whole: bool = False,
        unit: str = "",
    ) -> None:
        self.option, self.low, self.open_low, self.whole = option, low, open_low, whole
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
        if not (math.isfinite(number) and low_ok):
            bound = f"{'>' if self.open_low else '>='} {self.low:g}"
            raise InvalidInput.one(
                f"option '{self.option}'",
                self.option.lstrip("-"),
                f"must be {self.what} {bound} (got {value!r:.40})",
            )
        return number


JOBS_HELP = (
    "Worker processes (default: the usable cores; 1 = in this process). The results are the "
    "same for any value."
)
THRESHOLD = Number("--threshold", 0.0)


def replay_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options every replay takes (``simulate``, ``what-if``): ``--tick``, ``--max-ticks``,
    ``--launch-delay`` and ``--jobs``."""
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
            "--launch-delay",
            type=Number("--launch-delay", 0.0, unit="seconds"),
            default=DEFAULT_LAUNCH_DELAY,
            show_default=True,
        ),
        click.option("--jobs", type=Number("--jobs", 1, whole=True), default=None, help=JOBS_HELP),
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
@replay_options
@click.option(
    "--format", "fmt", type=click.Choice(["json", "table"]), default="table", show_default=True
)
@click.option("--chart", "chart_path", type=PATH, default=None, help="Write a PNG chart here.")
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
