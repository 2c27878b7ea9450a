"""``arklow allocate`` and ``arklow validate``.

Both are one-shot: read, check, compute, print, exit. They run with the cyclic garbage collector
off — the documents, specs and topology they build hold no reference cycles worth collecting, and
with it on the collector rescans hundreds of thousands of young objects over and over (a third of
the time of a 10,000-lane run). Memory is freed at exit as always.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from arklow_pulumi.cli.rendering import allocation_json, allocation_table
from arklow_pulumi.core.allocating import allocate as run_allocation
from arklow_pulumi.reading.files import load_demand, load_topology
from arklow_pulumi.reading.text import no_cyclic_gc

_PATH = click.Path(path_type=Path, dir_okay=False)


@click.command()
@click.option("--topology", "topology_path", type=_PATH, required=True, help="Topology YAML.")
@click.option("--demand", "demand_path", type=_PATH, required=True, help="Demand YAML.")
@click.option(
    "--format", "fmt", type=click.Choice(["json", "table"]), default="table", show_default=True
)
def allocate(topology_path: Path, demand_path: Path, fmt: str) -> None:
    """Compute allocation, admission, pool pressure and desired replicas for one tick."""
    with no_cyclic_gc():
        topology = load_topology(topology_path)
        demand = load_demand(demand_path)
        result = run_allocation(topology, demand)
        if fmt == "json":
            text = allocation_json(result)
        else:
            text = allocation_table(result, color=sys.stdout.isatty())
    click.echo(text)


@click.command()
@click.option("--topology", "topology_path", type=_PATH, required=True, help="Topology YAML.")
@click.option("--demand", "demand_path", type=_PATH, default=None, help="Demand YAML to check too.")
def validate(topology_path: Path, demand_path: Path | None) -> None:
    """Check a topology (and optionally a demand report); print a summary when it is valid."""
    with no_cyclic_gc():
        topology = load_topology(topology_path)
        if demand_path is not None:
            from arklow_pulumi.core.allocating import check_demand

            check_demand(topology, load_demand(demand_path))
    shared = sum(1 for name in topology.pools if not topology.is_standalone(name))
    click.echo(
        f"ok: {len(topology.destinations)} destinations, {len(topology.lanes)} lanes, "
        f"{len(topology.pools)} pools ({shared} shared)"
    )
