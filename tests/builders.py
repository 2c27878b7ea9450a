"""Builders for topology documents in tests (table-driven cases stay one line each)."""

from __future__ import annotations

from typing import Any

from arklow_pulumi.core.topology import Topology
from arklow_pulumi.reading.parsing import parse_topology
from arklow_pulumi.reading.spec import build_topology


def lane(name: str, limit: float, weight: float = 1.0, **cost: float) -> dict[str, Any]:
    doc: dict[str, Any] = {"name": name, "limit": limit, "weight": weight}
    if cost:
        doc["cost"] = {k.replace("_", "-"): v for k, v in cost.items()}
    return doc


def dest(
    name: str, resources: list[str], *lanes: dict[str, Any], **standalone: float
) -> dict[str, Any]:
    doc: dict[str, Any] = {"name": name, "resources": resources, "lanes": list(lanes)}
    if standalone:
        doc["standalone_capacity"] = standalone
    return doc


def pool(
    name: str, resource: str, members: list[str], capacity: float = 0, **extra: Any
) -> dict[str, Any]:
    return {"name": name, "resource": resource, "members": members, "capacity": capacity, **extra}


def target(
    name: str,
    lo: int,
    hi: int,
    upr: float = 1,
    replicas: int | None = None,
    kind: str = "aws_asg",
    **where: str,
) -> dict[str, Any]:
    """A scale target's document; ``where``: its ``region``, or its ``project`` and ``zone``."""
    doc: dict[str, Any] = {
        "kind": kind,
        "name": name,
        "min_replicas": lo,
        "max_replicas": hi,
        "units_per_replica": upr,
        **where,
    }
    if replicas is not None:
        doc["replicas"] = replicas
    return doc


def search_and_ingest(
    gpu: dict[str, Any], cpu: dict[str, Any], ingest_limit: float
) -> dict[str, Any]:
    """The process tests' topology document: ``search`` (``interactive`` 16 at weight 3, ``batch``
    64) in the pool ``shared-gpu`` that the scale target ``gpu`` serves, and ``ingest/default``
    (``ingest_limit``) in ``cpu-workers``, which ``cpu`` serves."""
    return {
        "destinations": [
            dest("search", ["gpu"], lane("interactive", 16, 3), lane("batch", 64)),
            dest("ingest", ["cpu"], lane("default", ingest_limit)),
        ],
        "pools": [
            pool("shared-gpu", "gpu", ["search"], scale_targets=[gpu]),
            pool("cpu-workers", "cpu", ["ingest"], scale_targets=[cpu]),
        ],
    }


def topo(destinations: list[dict[str, Any]], pools: list[dict[str, Any]] | None = None) -> Topology:
    return build_topology(parse_topology({"destinations": destinations, "pools": pools or []}))
