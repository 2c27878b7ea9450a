"""A published tick as a JSON document and back: the runtime store keeps it in this form, and the
HTTP answers of DESIGN.md "Controller contract" are views of it (``/v1/admission``: ``tick``,
``time``, ``lanes``; ``/v1/pools``: ``tick``, ``pools``).

Lanes carry one field beyond the contract's four, ``stale``: the lane had no report fresher than
the TTL, so its last admission was kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from arklow_pulumi.controller.ports import LaneView, PoolView, Published, TargetView


def published_document(published: Published) -> dict[str, Any]:
    return {
        "tick": published.tick,
        "time": published.time.isoformat(),
        "lanes": {key: lane_document(lane) for key, lane in published.lanes.items()},
        "pools": {name: pool_document(pool) for name, pool in published.pools.items()},
    }


def lane_document(lane: LaneView) -> dict[str, Any]:
    return {
        "demand": lane.demand,
        "allocation": lane.allocation,
        "held": lane.held,
        "admission": lane.admission,
        "stale": lane.stale,
    }


def pool_document(pool: PoolView) -> dict[str, Any]:
    return {
        "resource": pool.resource,
        "capacity": pool.capacity,
        "demand": pool.demand,
        "pressure": pool.pressure,
        "state": pool.state,
        "desired_replicas": pool.desired_replicas,
        "targets": {
            name: {
                "desired": t.desired,
                "in_service": t.in_service,
                "pending": t.pending,
                "min": t.min,
                "max": t.max,
            }
            for name, t in pool.targets.items()
        },
    }


def published_from_document(doc: Mapping[str, Any]) -> Published:
    return Published(
        tick=int(doc["tick"]),
        time=datetime.fromisoformat(doc["time"]).astimezone(UTC),
        lanes={key: _lane(value) for key, value in doc["lanes"].items()},
        pools={name: _pool(value) for name, value in doc["pools"].items()},
    )


def _lane(doc: Mapping[str, Any]) -> LaneView:
    return LaneView(
        demand=float(doc["demand"]),
        allocation=float(doc["allocation"]),
        held=float(doc["held"]),
        admission=float(doc["admission"]),
        stale=bool(doc.get("stale", False)),
    )


def _pool(doc: Mapping[str, Any]) -> PoolView:
    pressure = doc["pressure"]
    return PoolView(
        resource=doc["resource"],
        capacity=float(doc["capacity"]),
        demand=float(doc["demand"]),
        pressure=None if pressure is None else float(pressure),
        state=doc["state"],
        desired_replicas=int(doc["desired_replicas"]),
        targets={
            name: TargetView(
                desired=int(t["desired"]),
                in_service=int(t["in_service"]),
                pending=int(t["pending"]),
                min=int(t["min"]),
                max=int(t["max"]),
            )
            for name, t in doc.get("targets", {}).items()
        },
    )
