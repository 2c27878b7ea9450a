"""Topology values as plain documents (JSON-ready dicts) and back: one shape per value.

Shared by the store's rows (:mod:`arklow_pulumi.store.snapshots`), the providers' outputs
(:mod:`arklow_pulumi.providers`) and ``arklow topology show``, which used to write each shape by
hand. The published tick the HTTP API serves (lane admission, pool state) is not a topology value:
its documents are :mod:`arklow_pulumi.controller.documents`.

A lane's ``cost`` is ``None`` when it has none; a pool's ``scale_policy`` holds only the fields
that differ from the defaults, ``None`` when none do (see ``core.policy.policy_document``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arklow_pulumi.core.policy import policy_document
from arklow_pulumi.core.topology import Destination, GroupRef, Lane, Pool, ScaleTarget, frozen_map

__all__ = [
    "destination_document",
    "group_document",
    "lane_document",
    "lane_from_document",
    "pool_document",
    "target_document",
]


def lane_document(lane: Lane) -> dict[str, Any]:
    return {
        "name": lane.name,
        "limit": lane.limit,
        "weight": lane.weight,
        "cost": dict(lane.cost) or None,
    }


def lane_from_document(destination: str, doc: Mapping[str, Any]) -> Lane:
    return Lane(
        destination=destination,
        name=doc["name"],
        limit=doc["limit"],
        weight=doc["weight"],
        cost=frozen_map(doc.get("cost") or {}),
    )


def destination_document(dest: Destination) -> dict[str, Any]:
    """A destination's own data (its name is the caller's key: ``name`` or ``arklow_name``)."""
    return {
        "resources": list(dest.resources),
        "lanes": [lane_document(lane) for lane in dest.lanes],
        "standalone_capacity": dict(dest.standalone_capacity),
    }


def pool_document(pool: Pool) -> dict[str, Any]:
    """A pool's own data; its members and targets are relations, added by the caller."""
    return {
        "resource": pool.resource,
        "capacity": pool.capacity,
        "headroom": pool.headroom,
        "scale_policy": policy_document(pool.scale_policy),
    }


def group_document(group: GroupRef) -> dict[str, Any]:
    return {
        "kind": group.kind,
        "name": group.name,
        "region": group.region,
        "zone": group.zone,
        "project": group.project,
    }


def target_document(target: ScaleTarget) -> dict[str, Any]:
    """A scale target's own data (its name and pool are the caller's)."""
    return {
        "group": group_document(target.group),
        "min_replicas": target.min_replicas,
        "max_replicas": target.max_replicas,
        "units_per_replica": target.units_per_replica,
        "override_policies": target.override_policies,
        "replicas": target.replicas,
    }
