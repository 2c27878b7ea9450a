"""Checks of one object at a time that the field-level schema cannot express.

Each check yields :class:`Problem` values naming the object and the field, so callers can report
every problem at once (``arklow validate``) or turn them into ``CheckFailure`` values (Pulumi).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator

from arklow_pulumi.core.errors import Problem
from arklow_pulumi.core.topology import Destination, Lane, Pool, ScaleTarget


def _duplicates(names: Iterable[str]) -> list[str]:
    return [name for name, n in Counter(names).items() if n > 1]


def _slash(obj: str, field: str, value: str) -> Iterator[Problem]:
    if "/" in value:
        yield Problem(obj, field, f"{value!r} must not contain '/' (it separates names in keys)")


def destination_problems(dest: Destination) -> Iterator[Problem]:
    obj = f"destination {dest.name!r}"
    yield from _slash(obj, "name", dest.name)
    for resource in _duplicates(dest.resources):
        yield Problem(obj, "resources", f"resource {resource!r} is listed more than once")
    for resource in dest.resources:
        yield from _slash(obj, "resources", resource)
    for name in _duplicates(lane.name for lane in dest.lanes):
        yield Problem(f"{obj}, lane {name!r}", "name", "duplicate lane name in this destination")
    for resource in dest.standalone_capacity:
        if resource not in dest.resources:
            yield Problem(
                obj,
                f"standalone_capacity.{resource}",
                f"resource {resource!r} is not one the destination draws from "
                f"(resources: {list(dest.resources)})",
            )
    for lane in dest.lanes:
        yield from lane_problems(dest, lane)


def lane_problems(dest: Destination, lane: Lane) -> Iterator[Problem]:
    obj = f"destination {dest.name!r}, lane {lane.name!r}"
    yield from _slash(obj, "name", lane.name)
    if lane.limit < 0:
        yield Problem(obj, "limit", f"must be >= 0 (got {lane.limit})")
    if lane.weight <= 0:
        yield Problem(obj, "weight", f"must be > 0 (got {lane.weight})")
    for resource, cost in lane.cost.items():
        if resource not in dest.resources:
            yield Problem(
                obj,
                f"cost.{resource}",
                f"resource {resource!r} is not one destination {dest.name!r} draws from "
                f"(resources: {list(dest.resources)})",
            )
        elif cost <= 0:
            yield Problem(obj, f"cost.{resource}", f"must be > 0 (got {cost})")


def target_problems(pool: str, target: ScaleTarget) -> Iterator[Problem]:
    obj = f"pool {pool!r}, scale target {target.name!r}"
    if target.min_replicas < 0:
        yield Problem(obj, "min_replicas", f"must be >= 0 (got {target.min_replicas})")
    if target.max_replicas < target.min_replicas:
        yield Problem(
            obj,
            "min_replicas",
            f"min_replicas ({target.min_replicas}) is greater than "
            f"max_replicas ({target.max_replicas})",
        )
    if target.units_per_replica <= 0:
        yield Problem(obj, "units_per_replica", f"must be > 0 (got {target.units_per_replica})")
    if target.replicas < 0:
        yield Problem(obj, "replicas", f"must be >= 0 (got {target.replicas})")


def target_reference_problems(pool: str, target: ScaleTarget) -> Iterator[Problem]:
    """The group reference is complete enough to reach the group (Pulumi, the controller)."""
    obj = f"pool {pool!r}, scale target {target.name!r}"
    group = target.group
    if group.kind == "aws_asg":
        if not group.region:
            yield Problem(obj, "region", "an AWS Auto Scaling group needs a region")
        if group.zone or group.project:
            yield Problem(obj, "zone", "an AWS Auto Scaling group takes no zone or project")
        return
    if not group.project:
        yield Problem(obj, "project", "a GCP managed instance group needs a project")
    if bool(group.zone) == bool(group.region):
        yield Problem(
            obj, "zone", "a GCP managed instance group needs exactly one of zone or region"
        )


def pool_problems(pool: Pool) -> Iterator[Problem]:
    obj = f"pool {pool.name!r}"
    if pool.capacity < 0:
        yield Problem(obj, "capacity", f"must be >= 0 (got {pool.capacity})")
    if pool.headroom < 0:
        yield Problem(obj, "headroom", f"must be >= 0 (got {pool.headroom})")
    for name in _duplicates(t.name for t in pool.scale_targets):
        yield Problem(f"{obj}, scale target {name!r}", "name", "duplicate scale target name")
    for target in pool.scale_targets:
        yield from target_problems(pool.name, target)
