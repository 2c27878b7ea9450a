"""``arklow dev``: local stand-ins for cloud APIs. Each server is one subcommand of this group."""

from __future__ import annotations

import click


@click.group()
def dev() -> None:
    """Development servers (local stand-ins for cloud APIs)."""


@dev.command(name="compute-server")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=click.IntRange(min=0, max=65535), default=8085, show_default=True)
@click.option("--latency-ms", type=click.FloatRange(min=0), default=0.0, show_default=True)
@click.option("--error-rate", type=click.FloatRange(min=0, max=1), default=0.0, show_default=True)
@click.option(
    "--error-codes", default="429,503", show_default=True, help="Codes injected errors use."
)
@click.option("--op-delay", type=click.FloatRange(min=0), default=0.05, show_default=True)
@click.option("--settle-delay", type=click.FloatRange(min=0), default=0.2, show_default=True)
@click.option("--seed", type=int, default=None, help="Seed of the fault injector.")
def compute_server(
    host: str,
    port: int,
    latency_ms: float,
    error_rate: float,
    error_codes: str,
    op_delay: float,
    settle_delay: float,
    seed: int | None,
) -> None:
    """Serve the Compute API subset Arklow calls (MIGs, autoscalers, operations) in memory."""
    from arklow_pulumi.devservers.compute import ComputeServer, Faults

    codes = tuple(int(c) for c in error_codes.split(",") if c.strip())
    faults = Faults(latency_ms=latency_ms, error_rate=error_rate, codes=codes)
    server = ComputeServer(host, port, op_delay, settle_delay, faults, seed)
    click.echo(f"compute server listening on {server.url}", err=False)
    click.echo(f"export ARKLOW_GCP_COMPUTE_ENDPOINT={server.url}")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
