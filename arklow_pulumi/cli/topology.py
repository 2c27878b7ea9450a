"""``arklow topology show``: what the topology store holds, for machines (JSON) or people."""

from __future__ import annotations

import json
from typing import Any

import click

from arklow_pulumi.cli.options import store_option
from arklow_pulumi.cli.rendering import number
from arklow_pulumi.core.topology import Lane, ScaleTarget, Topology
from arklow_pulumi.text_tables import table
from arklow_pulumi.topology_documents import lane_document, pool_document, target_document


@click.group()
def topology() -> None:
    """Inspect the topology store."""


@topology.command()
@store_option
@click.option(
    "--format", "fmt", type=click.Choice(["json", "table"]), default="table", show_default=True
)
def show(store_url: str | None, fmt: str) -> None:
    """Print destinations (resources, pools, lanes) and pools (members, capacity, targets)."""
    from arklow_pulumi.store import open_store, resolve_store_url
    from arklow_pulumi.store.service import stored_topology

    url = resolve_store_url(store_url)
    _check_default_store(store_url)
    document = topology_document(stored_topology(open_store(url, read_only=True)))
    if fmt == "json":
        click.echo(json.dumps(document, indent=2))
    else:
        click.echo(topology_table(document))


def _check_default_store(store_url: str | None) -> None:
    """With no store named, the default is the project's: outside a project (no ``Pulumi.yaml``
    here or above) and with none there yet, say where to run instead of the store's own hint,
    which would create an empty store in this directory."""
    from pathlib import Path

    from arklow_pulumi.core.errors import InvalidInput
    from arklow_pulumi.settings import STORE_ENV
    from arklow_pulumi.store_location import DEFAULT_RELATIVE, find_project_dir

    if store_url or STORE_ENV.get():
        return
    project = find_project_dir()
    if (project / "Pulumi.yaml").is_file() or (project / DEFAULT_RELATIVE).is_file():
        return
    raise InvalidInput.one(
        "option --store",
        "store",
        f"no Pulumi.yaml in {str(Path.cwd())!r} or above, so no project store: run this in the "
        "project's directory, or give --store URL (or $ARKLOW_STORE)",
    )


def topology_document(topo: Topology) -> dict[str, Any]:
    """The store's topology for people and scripts: the shared value documents, keyed by name,
    with integral numbers printed as integers."""
    destinations = {
        name: {
            "resources": list(dest.resources),
            "pools": dict(topo.pools_of(name)),
            "lanes": {lane.name: _lane(lane) for lane in dest.lanes},
        }
        for name, dest in sorted(topo.destinations.items())
    }
    pools = {
        name: {
            "resource": pool.resource,
            "standalone": topo.is_standalone(name),
            "members": list(topo.members(name)),
            "capacity": number(pool.capacity),
            "scale_targets": [_target(t) for t in pool.scale_targets],
            "scale_policy": _numbers(pool_document(pool)["scale_policy"]),
        }
        for name, pool in sorted(topo.pools.items())
    }
    return {"destinations": destinations, "pools": pools}


def _lane(lane: Lane) -> dict[str, Any]:
    doc = lane_document(lane)
    return {key: _numbers(doc[key]) for key in ("limit", "weight", "cost")}


def _target(target: ScaleTarget) -> dict[str, Any]:
    doc = target_document(target)
    return {
        "name": target.name,
        "kind": doc["group"]["kind"],
        "min_replicas": doc["min_replicas"],
        "max_replicas": doc["max_replicas"],
        "units_per_replica": number(doc["units_per_replica"]),
    }


def _numbers(value: Any) -> Any:
    """``value`` with every float in it (a number or a mapping's values) through :func:`number`."""
    if isinstance(value, dict):
        return {key: _numbers(item) for key, item in value.items()}
    return number(value) if isinstance(value, float) else value


def topology_table(document: dict[str, Any]) -> str:
    pool_rows = [
        [
            name,
            p["resource"],
            "standalone" if p["standalone"] else "shared",
            f"{p['capacity']:g}",
            ", ".join(p["members"]) or "-",
            ", ".join(
                f"{t['name']} ({t['kind']} {t['min_replicas']}-{t['max_replicas']}"
                f" x{t['units_per_replica']:g})"
                for t in p["scale_targets"]
            )
            or "-",
        ]
        for name, p in document["pools"].items()
    ]
    dest_rows = [
        [
            name,
            ", ".join(f"{r}->{pool}" for r, pool in d["pools"].items()) or "-",
            ", ".join(
                f"{lane}(limit {v['limit']:g}, weight {v['weight']:g})"
                for lane, v in d["lanes"].items()
            )
            or "-",
        ]
        for name, d in document["destinations"].items()
    ]
    out = ["POOLS"]
    out += table(
        ["pool", "resource", "kind", "capacity", "members", "scale targets"],
        pool_rows,
        right={3},
    )
    out += ["", "DESTINATIONS"]
    out += table(["destination", "pools", "lanes"], dest_rows, right=set())
    return "\n".join(out)


def _register_orphans() -> None:
    from arklow_pulumi.cli.orphans import orphans

    topology.add_command(orphans)


_register_orphans()
