"""``arklow what-if``: what a topology change would have done to a trace's work
(``docs/whatif.md``). JSON for programs, markdown for a pull-request comment."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import click

from arklow_pulumi.cli.rendering import number
from arklow_pulumi.cli.simulate import PATH, THRESHOLD, Number, replay_options
from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.core.topology import Topology
from arklow_pulumi.reading.files import load_topology
from arklow_pulumi.simulation.describing import describe_change
from arklow_pulumi.simulation.tracing import Trace, parse_duration, read_trace
from arklow_pulumi.simulation.whatif import DEFAULT_THRESHOLD, Limits, PoolDelta, WhatIf
from arklow_pulumi.simulation.whatif import what_if as run_what_if

FLAGGED_EXIT = 3
CHANGE_AT = Number("--change-at", 0.0, unit="seconds")
HOURS_GROWTH = Number("--max-replica-hours-growth", 0.0)
PEAK_GROWTH = Number("--max-peak-replicas-growth", 0.0)


def whatif_document(result: WhatIf) -> dict[str, Any]:
    return {
        "lanes": {
            key: {
                "demand": number(d.demand),
                "held_before": number(d.held_before),
                "held_after": number(d.held_after),
            }
            for key, d in result.lanes.items()
        },
        "pools": {name: _pool_document(p) for name, p in result.pools.items()},
        "flagged": result.flagged,
        "new_lanes": result.new_lanes,
        "removed_lanes": result.removed_lanes,
        "totals": _pool_document(result.totals),
        "flagged_pools": result.flagged_pools,
        "flagged_totals": result.flagged_totals,
    }


def _pool_document(p: PoolDelta) -> dict[str, Any]:
    return {
        "replica_hours_before": number(p.replica_hours_before),
        "replica_hours_after": number(p.replica_hours_after),
        "peak_replicas_before": p.peak_replicas_before,
        "peak_replicas_after": p.peak_replicas_after,
    }


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:.2%}"


def _num(x: float | None) -> str:
    return "—" if x is None else f"{x:,.1f}"


def _cell(text: str) -> str:
    """Text in a table cell: GitHub's tables split cells on ``|`` even inside a code span."""
    return text.replace("|", "\\|")


def code(name: str, in_table: bool = True) -> str:
    """A name as a markdown code span that nothing in it can leave (CommonMark): fenced by one
    backtick more than its longest run of backticks, with a space inside each fence when it
    begins or ends with a backtick (the parser takes one such space off each end), pipes
    escaped for the tables. Inside a code span nothing is markdown: no emphasis, link, image,
    HTML or @mention. Outside a table (``in_table=False``) pipes stay as they are."""
    longest = max((len(run) for run in re.findall(r"`+", name)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if name[:1] in ("`", " ") or name[-1:] in ("`", " ") else ""
    return f"{fence}{pad}{_cell(name) if in_table else name}{pad}{fence}"


def whatif_markdown(
    result: WhatIf, change: str, limits: float | Limits, change_at: float | None = None
) -> str:
    limits = limits if isinstance(limits, Limits) else Limits(limits)
    flagged = set(result.flagged)
    out = [_heading(result), "", f"**Change:** {change}", ""]
    if change_at is not None:
        out += [f"**After** switches from the before topology at {change_at:g} s.", ""]
    out.append(
        f"A lane is flagged when its held share (held / demand over the trace) grows by more "
        f"than {limits.threshold:.2%}." + _growth_rules(limits)
    )
    rows = []
    order = [*result.flagged, *(k for k in result.lanes if k not in flagged)]
    unchanged = 0
    for key in order:
        d = result.lanes[key]
        status = (
            "**flagged**"
            if key in flagged
            else "new"
            if d.share_before is None
            else "removed"
            if d.share_after is None
            else ""
        )
        if not status and abs(d.growth) <= 1e-12:
            unchanged += 1
            continue
        rows.append(
            f"| {code(key)} | {status} | {_pct(d.share_before)} → {_pct(d.share_after)} "
            f"| {_num(d.held_before)} → {_num(d.held_after)} | {_num(d.demand)} |"
        )
    out += ["", "#### Lanes", ""]
    if rows:
        out += [
            "| lane | | held share before → after | held unit-hours before → after | demand |",
            "|---|---|---|---|---|",
            *rows,
            "",
        ]
    out.append(f"{unchanged} other lane{'s' if unchanged != 1 else ''} unchanged.")
    out += ["", "#### Pools", ""]
    out += ["| pool | replica-hours before → after | peak replicas before → after |"]
    out += ["|---|---|---|"]
    pools = set(result.flagged_pools)
    for name, p in result.pools.items():
        status = " **flagged**" if name in pools else ""
        out.append(f"| {code(name)}{status} | {_pool_cells(p)} |")
    status = " **flagged**" if result.flagged_totals else ""
    out.append(f"| all pools{status} | {_pool_cells(result.totals)} |")
    return "\n".join(out)


def _heading(result: WhatIf) -> str:
    parts = []
    for count, what in ((len(result.flagged), "lane"), (len(result.flagged_pools), "pool")):
        if count:
            parts.append(f"{count} {what}{'s' if count != 1 else ''}")
    if result.flagged_totals:
        parts.append("the totals")
    if not parts:
        return "### Arklow what-if: no lane flagged"
    return f"### Arklow what-if: {' and '.join(parts)} flagged"


def _growth_rules(limits: Limits) -> str:
    rules = []
    if limits.replica_hours_growth is not None:
        rules.append(f"its replica-hours grow by more than {limits.replica_hours_growth:.2%}")
    if limits.peak_replicas_growth is not None:
        rules.append(f"its peak replicas grow by more than {limits.peak_replicas_growth:.2%}")
    if not rules:
        return ""
    return " A pool (and all pools together) is flagged when " + " or ".join(rules) + "."


def _pool_cells(p: PoolDelta) -> str:
    peak_before = "—" if p.peak_replicas_before is None else str(p.peak_replicas_before)
    peak_after = "—" if p.peak_replicas_after is None else str(p.peak_replicas_after)
    return (
        f"{_num(p.replica_hours_before)} → {_num(p.replica_hours_after)} "
        f"| {peak_before} → {peak_after}"
    )


@click.command("what-if")
@click.option("--before", "before_path", type=PATH, default=None, help="Topology before.")
@click.option("--after", "after_path", type=PATH, default=None, help="Topology after.")
@click.option(
    "--stack",
    default=None,
    help="Compare stacks/Pulumi.<stack>.yaml (after) with what the store holds (before).",
)
@click.option("--store", "store_url", default=None, help="Store URL, with --stack.")
@click.option(
    "--since",
    default="7d",
    show_default=True,
    help="With --stack and no --trace: how much demand history to replay.",
)
@click.option("--trace", "trace_path", type=PATH, default=None, help="Demand trace CSV.")
@click.option(
    "--format", "fmt", type=click.Choice(["json", "markdown"]), default="json", show_default=True
)
@click.option("--threshold", type=THRESHOLD, default=DEFAULT_THRESHOLD, show_default=True)
@click.option(
    "--max-replica-hours-growth",
    "hours_growth",
    type=HOURS_GROWTH,
    default=None,
    help="Flag pools (and all pools together) whose replica-hours grow by more than this "
    "fraction (0.1 = 10%).",
)
@click.option(
    "--max-peak-replicas-growth",
    "peak_growth",
    type=PEAK_GROWTH,
    default=None,
    help="Flag pools (and all pools together) whose peak replicas grow by more than this fraction.",
)
@click.option(
    "--change-at",
    type=CHANGE_AT,
    default=None,
    help="Seconds into the trace: the after side runs the before topology until then, the "
    "after topology from then on, group state carried over.",
)
@click.option(
    "--fail-on-flag", is_flag=True, help=f"Exit {FLAGGED_EXIT} when a lane or pool is flagged."
)
@click.option(
    "--policy",
    type=click.Choice(["arklow", "single-tick", "cloud-autoscaler"]),
    default="arklow",
    show_default=True,
    help="Scale both sides by this policy (cloud-autoscaler: each group's own autoscaler).",
)
@replay_options
@click.pass_context
def what_if(
    ctx: click.Context,
    before_path: Path | None,
    after_path: Path | None,
    stack: str | None,
    store_url: str | None,
    since: str,
    trace_path: Path | None,
    fmt: str,
    threshold: float,
    hours_growth: float | None,
    peak_growth: float | None,
    change_at: float | None,
    fail_on_flag: bool,
    tick: float,
    launch_delay: float,
    jobs: int | None,
    max_ticks: int,
    utilization: float | None,
    policy: str,
    max_memory: int,
) -> None:
    """Replay a trace on the topology before and after a change; flag lanes it would starve.

    Either --before, --after and --trace (files), or --stack: the stack's declared topology
    against the store's, over the store's demand history unless --trace is given."""
    if stack is not None:
        if before_path is not None or after_path is not None:
            raise InvalidInput.one("option --stack", "stack", "replaces --before and --after")
        before, after, trace = _stack_inputs(stack, store_url, since, trace_path)
    else:
        if store_url is not None:
            raise InvalidInput.one("option --store", "store", "is only used with --stack")
        for option, given in (
            ("--before", before_path),
            ("--after", after_path),
            ("--trace", trace_path),
        ):
            if given is None:
                raise InvalidInput.one(
                    f"option {option}", option[2:], "is required without --stack"
                )
        assert before_path is not None and after_path is not None and trace_path is not None
        before = load_topology(before_path)
        after = load_topology(after_path)
        trace = read_trace(trace_path, {**before.lanes_by_key, **after.lanes_by_key})
    if change_at is not None and change_at > trace.end:
        raise InvalidInput.one(
            "option '--change-at'",
            "change-at",
            f"must be within the trace, 0 to {trace.end:g} seconds (got {change_at:g})",
        )
    limits = Limits(threshold, hours_growth, peak_growth)
    result = run_what_if(
        before,
        after,
        trace,
        tick,
        launch_delay,
        limits,
        jobs=jobs,
        max_ticks=max_ticks,
        change_at=change_at,
        policy=policy,
        utilization=utilization,
        max_memory=max_memory,
    )
    if fmt == "json":
        click.echo(json.dumps(whatif_document(result), indent=2))
    else:
        change = describe_change(before, after, lambda name: code(name, in_table=False))
        click.echo(whatif_markdown(result, change, limits, change_at))
    if fail_on_flag and result.anything_flagged:
        ctx.exit(FLAGGED_EXIT)


def _stack_inputs(
    stack: str, store_url: str | None, since: str, trace_path: Path | None
) -> tuple[Topology, Topology, Trace]:
    from arklow_pulumi.simulation.stacks import (
        carry_replicas,
        history_trace,
        stack_store_url,
        stack_topology,
        store_topology,
    )
    from arklow_pulumi.store_location import find_project_dir

    project_dir = find_project_dir()
    url = stack_store_url(project_dir, stack, store_url)
    before = store_topology(url)
    after = carry_replicas(before, stack_topology(project_dir, stack))
    known = {**before.lanes_by_key, **after.lanes_by_key}
    if trace_path is not None:
        return before, after, read_trace(trace_path, known)
    return before, after, history_trace(url, known, parse_duration(since))
