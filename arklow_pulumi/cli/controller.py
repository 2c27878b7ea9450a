"""``arklow controller run|plan|export-trace``: flags only; the work is in
:mod:`arklow_pulumi.controller`.

The store is ``--store``, else ``$ARKLOW_STORE``, else ``.arklow/arklow.db`` beside
``Pulumi.yaml``; clouds are reached as the supply bindings find them (``AWS_ENDPOINT_URL``,
``ARKLOW_GCP_COMPUTE_ENDPOINT``, credentials from the environment).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from arklow_pulumi.cli.options import store_option

_Command = TypeVar("_Command", bound=Callable[..., Any])
_TENTH = click.FloatRange(min=0.1)  # seconds: a tenth at the least

# --lease-seconds ... --max-connections of `controller run`: (flag, type, default, help)
_LEASE_AND_CONNECTIONS: tuple[tuple[str, Any, float, str], ...] = (
    (
        "--lease-seconds",
        _TENTH,
        15.0,
        "PostgreSQL replicas: how long a lease lasts without renewal (database clock).",
    ),
    (
        "--renew-deadline",
        _TENTH,
        10.0,
        "PostgreSQL replicas: a leader that cannot renew within this stops acting.",
    ),
    (
        "--retry-period",
        click.FloatRange(min=0.05),
        2.0,
        "PostgreSQL replicas: seconds between lease attempts and renewals.",
    ),
    (
        "--header-timeout",
        float,
        10.0,
        "Seconds (0.1 to 3600) a request's headers may take to arrive, from the connection or "
        "the request's first byte; then 408 and the connection is closed.",
    ),
    (
        "--body-timeout",
        float,
        30.0,
        "Seconds (0.1 to 3600) a request's whole body may take after its headers; then 408 "
        "and the connection is closed.",
    ),
    (
        "--max-connections",
        int,
        512,
        "Open API connections at most (1 to 100000); one more is answered 503 and closed. "
        "Keep it below the descriptor limit (ulimit -n).",
    ),
)


def _valued(flag: str, kind: Any, default: float, text: str) -> Callable[[_Command], _Command]:
    """An option of one value of ``kind``, its default shown in the help."""
    return click.option(flag, type=kind, default=default, show_default=True, help=text)


def _lease_and_connection_options(command: _Command) -> _Command:
    """The options of :data:`_LEASE_AND_CONNECTIONS`, in that order."""
    for row in reversed(_LEASE_AND_CONNECTIONS):
        command = _valued(*row)(command)
    return command


@click.group()
def controller() -> None:
    """Run the runtime controller, or look at what it would do and what it saw."""


@controller.command()
@store_option
@click.option("--listen", default="127.0.0.1:8470", show_default=True, help="HOST:PORT.")
@_valued("--interval", _TENTH, 10.0, "Seconds between ticks.")
@click.option(
    "--tokens",
    "tokens_file",
    type=click.Path(path_type=Path),
    default=None,
    help="Tokens file (YAML). Without it the API listens on loopback only.",
)
@click.option("--dry-run", is_flag=True, help="Decide and publish, but resize nothing.")
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    help="A Host name the API answers besides the listen address (repeatable); others get 421. "
    "On loopback, localhost, 127.0.0.1 and ::1 are always answered.",
)
@_lease_and_connection_options
def run(
    store_url: str | None,
    listen: str,
    interval: float,
    tokens_file: Path | None,
    dry_run: bool,
    allowed_hosts: tuple[str, ...],
    lease_seconds: float,
    renew_deadline: float,
    retry_period: float,
    header_timeout: float,
    body_timeout: float,
    max_connections: int,
) -> None:
    """Read the topology, take demand, publish admission, resize the scale targets."""
    from arklow_pulumi.controller.api.connections import ConnectionLimits
    from arklow_pulumi.controller.leadership.electing import LeaseTiming
    from arklow_pulumi.controller.running import RunOptions, parse_listen
    from arklow_pulumi.controller.running import run as run_controller
    from arklow_pulumi.store_location import resolve_store_url

    timing = LeaseTiming(lease_seconds, renew_deadline, retry_period).check()
    limits = ConnectionLimits(header_timeout, body_timeout, max_connections).check()  # exit 2
    host, port = parse_listen(listen)
    options = RunOptions(
        resolve_store_url(store_url),
        host,
        port,
        interval,
        tokens_file,
        dry_run,
        timing,
        allowed_hosts,
        limits,
    )
    sys.exit(run_controller(options))


@controller.command()
@store_option
@click.option(
    "--format", "fmt", type=click.Choice(["json", "table"]), default="table", show_default=True
)
def plan(store_url: str | None, fmt: str) -> None:
    """Print what one tick would do now (allocation, desired per target); change nothing."""
    from arklow_pulumi.controller.tick.planning import plan_document, plan_now
    from arklow_pulumi.store_location import resolve_store_url

    document = plan_document(plan_now(resolve_store_url(store_url)))
    click.echo(json.dumps(document, indent=2) if fmt == "json" else plan_table(document))


@controller.command(name="export-trace")
@store_option
@click.option(
    "--since",
    default="7d",
    show_default=True,
    help="How far back: seconds, or a number with s, m, h, d or w.",
)
@click.option("--output", type=click.Path(path_type=Path), default=None, help="CSV file.")
def export_trace(store_url: str | None, since: str, output: Path | None) -> None:
    """Write the demand history as a trace CSV (time,lane,demand), for simulate and what-if."""
    import time

    from arklow_pulumi.cli.outputs import check_outputs
    from arklow_pulumi.simulation.tracing import format_trace, parse_duration
    from arklow_pulumi.store.engine import WAL_FILES, open_store
    from arklow_pulumi.store.runtime import demand_trace
    from arklow_pulumi.store_location import resolve_store_url

    window = parse_duration(since)
    store = open_store(resolve_store_url(store_url), read_only=True)
    database = store.database_file  # with SQLite's log and shared memory beside it
    files = [] if database is None else [database, *(Path(f"{database}{s}") for s in WAL_FILES)]
    check_outputs([("--output", output)], [("--store", f) for f in files])
    rows = demand_trace(store, time.time() - window)
    text = format_trace(rows)
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text)


def plan_table(document: dict[str, Any]) -> str:
    """The plan for people: POOLS, TARGETS, LANES, then CHANGES and SUPPLY ERRORS, numbers as
    the other tables print them (``--format json`` has every figure in full)."""
    from arklow_pulumi.text_tables import figure, table

    pools = [
        [
            name,
            pool["resource"],
            pool["state"],
            figure(pool["capacity"]),
            figure(pool["demand"]),
            figure(pool["pressure"]),
            str(pool["desired_replicas"]),
        ]
        for name, pool in sorted(document["pools"].items())
    ]
    targets = [
        [
            name,
            target,
            str(t["in_service"]),
            str(t["pending"]),
            str(t["desired"]),
            f"[{t['min']}, {t['max']}]",
            t.get("reason", ""),
        ]
        for name, pool in sorted(document["pools"].items())
        for target, t in sorted(pool["targets"].items())
    ]
    lanes = [
        [
            key,
            *(figure(lane[f]) for f in ("demand", "allocation", "held", "admission")),
            "stale" if lane["stale"] else "",
        ]
        for key, lane in sorted(document["lanes"].items())
    ]
    lines = [f"PLAN at {document['time']} (what one tick would do now; nothing is changed)", ""]
    lines += [
        "POOLS",
        *table(
            ["pool", "resource", "state", "capacity", "demand", "pressure", "desired replicas"],
            pools,
            {3, 4, 5, 6},
        ),
    ]
    lines += [
        "",
        "TARGETS",
        *table(
            ["pool", "target", "in service", "pending", "desired", "bounds", "reason"],
            targets,
            {2, 3, 4},
        ),
    ]
    lines += [
        "",
        "LANES",
        *table(
            ["lane", "demand", "allocation", "held", "admission", "report"], lanes, {1, 2, 3, 4}
        ),
    ]
    lines += ["", "CHANGES"]
    for change in document["changes"]:
        verdict = change.get("refused") or change["method"]
        lines.append(
            f"{change['target']} ({change['group']}): {change['previous']} -> "
            f"{change['desired']}: {verdict}"
        )
    if not document["changes"]:
        lines.append("no change: every group already runs its decided count")
    if document["supply_errors"]:
        lines += ["", "SUPPLY ERRORS"]
        lines += [f"{target}: {error}" for target, error in document["supply_errors"].items()]
    return "\n".join(lines)
