"""Topology values as plain documents (JSON-ready dicts) and back: one shape per value.

Shared by the store's rows (:mod:`arklow_pulumi.store.snapshots`), the providers' outputs
(:mod:`arklow_pulumi.providers`) and ``arklow topology show``, which used to write each shape by
hand. The published tick the HTTP API serves (lane admission, pool state) is not a topology value:
its documents are :mod:`arklow_pulumi.controller.tick.documents`.

A lane's ``cost`` is ``None`` when it has none; a pool's ``scale_policy`` holds only the fields
that differ from the defaults, ``None`` when none do (see ``core.policy.policy_document``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from arklow_pulumi.core.policy import policy_document
from arklow_pulumi.core.topology import Destination, GroupRef, Lane, Pool, ScaleTarget, frozen_map

__all__ = [
    "GROUP_FIELDS",
    "POOL_FIELDS",
    "TARGET_FIELDS",
    "destination_document",
    "group_document",
    "lane_document",
    "lane_from_document",
    "picked",
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


def picked(value: object, names: Iterable[str]) -> dict[str, Any]:
    """``{name: value.name}`` for each of ``names``: a value's plain fields as a document."""
    return {name: getattr(value, name) for name in names}


POOL_FIELDS = ("resource", "capacity", "headroom")
GROUP_FIELDS = ("kind", "name", "region", "zone", "project")
TARGET_FIELDS = ("min_replicas", "max_replicas", "units_per_replica", "override_policies")


def pool_document(pool: Pool) -> dict[str, Any]:
    """A pool's own data; its members and targets are relations, added by the caller."""
    return {**picked(pool, POOL_FIELDS), "scale_policy": policy_document(pool.scale_policy)}


def group_document(group: GroupRef) -> dict[str, Any]:
    return picked(group, GROUP_FIELDS)


def target_document(target: ScaleTarget) -> dict[str, Any]:
    """A scale target's own data (its name and pool are the caller's)."""
    return {
        "group": group_document(target.group),
        **picked(target, TARGET_FIELDS),
        "replicas": target.replicas,
    }
