"""``arklow dev``: local stand-ins for cloud APIs. Each server is one subcommand of this group."""

from __future__ import annotations

import signal
import threading

import click


def http_codes(value: str) -> tuple[int, ...]:
    """``"429,503"`` → ``(429, 503)``; anything but HTTP error codes is a usage error."""
    parts = [p.strip() for p in value.split(",") if p.strip()]
    if not parts or not all(p.isdigit() and 400 <= int(p) <= 599 for p in parts):
        raise click.BadParameter(f"{value!r}: give HTTP error codes (400-599) separated by commas")
    return tuple(int(p) for p in parts)


@click.group()
def dev() -> None:
    """Development servers (local stand-ins for cloud APIs)."""


@dev.command(name="compute-server")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=click.IntRange(min=0, max=65535), default=8085, show_default=True)
@click.option("--latency-ms", type=click.FloatRange(min=0), default=0.0, show_default=True)
@click.option("--error-rate", type=click.FloatRange(min=0, max=1), default=0.0, show_default=True)
@click.option(
    "--error-codes",
    default="429,503",
    show_default=True,
    callback=lambda _ctx, _param, value: http_codes(value),
    help="Codes injected errors use.",
)
@click.option("--op-delay", type=click.FloatRange(min=0), default=0.05, show_default=True)
@click.option("--settle-delay", type=click.FloatRange(min=0), default=0.2, show_default=True)
@click.option("--seed", type=int, default=None, help="Seed of the fault injector.")
def compute_server(
    host: str,
    port: int,
    latency_ms: float,
    error_rate: float,
    error_codes: tuple[int, ...],
    op_delay: float,
    settle_delay: float,
    seed: int | None,
) -> None:
    """Serve the Compute API subset Arklow calls (MIGs, autoscalers, operations) in memory."""
    from arklow_pulumi.devservers.clouds import address_error
    from arklow_pulumi.devservers.compute import ComputeServer, Faults

    faults = Faults(latency_ms=latency_ms, error_rate=error_rate, codes=error_codes)
    try:
        server = ComputeServer(host, port, op_delay, settle_delay, faults, seed)
    except OSError as exc:  # the port is taken, or the host is not this machine's
        raise address_error(host, port, "--port", exc) from None
    click.echo(f"compute server listening on {server.url}", err=False)
    click.echo(f"export ARKLOW_GCP_COMPUTE_ENDPOINT={server.url}")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


@dev.command(name="clouds")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--aws-port", type=click.IntRange(min=0, max=65535), default=0, help="0: any free.")
@click.option("--gcp-port", type=click.IntRange(min=0, max=65535), default=0, help="0: any free.")
@click.option("--stack", default="dev", show_default=True, help="Whose groups to create.")
def clouds(host: str, aws_port: int, gcp_port: int, stack: str) -> None:
    """Start local AWS (moto) and GCP Compute servers holding the groups STACK's targets name,
    and those of the project's examples (examples/*/topology.yaml).

    Prints `export ...` lines for a shell, then a `# local clouds ready` line, then serves
    until Ctrl-C or SIGTERM (the groups live in memory: a restart starts them afresh).
    """
    from arklow_pulumi.devservers.clouds import (
        LocalClouds,
        describe_groups,
        example_groups,
        export_lines,
        load_stack,
        merge_groups,
        stack_groups,
    )
    from arklow_pulumi.store_location import find_project_dir

    project = find_project_dir()
    topology, autoscaled = load_stack(project, stack)
    groups = merge_groups(stack_groups(topology, autoscaled), *example_groups(project))
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    with LocalClouds(host, aws_port, gcp_port) as local:
        local.create(groups)
        for line in describe_groups(groups):
            click.echo(line, err=True)
        for line in export_lines(local.env()):
            click.echo(line)
        click.echo("# local clouds ready; Ctrl-C stops them")
        while not stop.wait(0.5):
            pass
    click.echo("local clouds stopped", err=True)


@dev.command(name="run")
@click.option(
    "--tick",
    type=click.FloatRange(min=10, max=3600),
    default=300.0,
    show_default=True,
    help="Controller interval on the simulated clock, in seconds.",
)
@click.option("--stack", default="dev", show_default=True)
def run_day(tick: float, stack: str) -> None:
    """The main job: local clouds, `pulumi up` of the stack, the real controller over one
    simulated day (a second `pulumi up` at noon), a summary and .arklow/report/index.html."""
    from arklow_pulumi.extras import require
    from arklow_pulumi.scenario.running import RunOptions, run
    from arklow_pulumi.store_location import find_project_dir

    require("charts", "the main job's report (its charts)")  # before the day, not after it
    project = find_project_dir()
    try:
        result = run(RunOptions(project, project / ".arklow", tick, stack))
    except KeyboardInterrupt:
        click.echo("interrupted; local clouds stopped", err=True)
        raise SystemExit(130) from None
    click.echo(result.summary)
    click.echo(f"\nreport: {result.report}\ndone in {result.seconds:.0f}s")
