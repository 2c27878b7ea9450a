"""Checks of one object at a time that the field-level schema cannot express.

Each check yields :class:`Problem` values naming the object and the field, so callers can report
every problem at once (``arklow validate``) or turn them into ``CheckFailure`` values (Pulumi).
Objects built in code rather than parsed from a spec get the spec's ranges and name rule here
too (:mod:`arklow_pulumi.core.spec` documents them).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping

from arklow_pulumi.core.errors import Problem
from arklow_pulumi.core.limits import (
    MAX_COUNT,
    MAX_FACTOR,
    MAX_HEADROOM,
    MAX_NAME_LENGTH,
    MAX_UNITS,
    MIN_CAPACITY,
    MIN_FACTOR,
    MIN_UNITS_PER_REPLICA,
)
from arklow_pulumi.core.topology import Destination, Lane, Pool, ScaleTarget, standalone_pool_name


def name_problems(obj: str, field: str, value: str) -> Iterator[Problem]:
    """The one name rule of every backend: 1 to 255 printable characters."""
    if not 1 <= len(value) <= MAX_NAME_LENGTH:
        yield Problem(
            obj, field, f"must be 1 to {MAX_NAME_LENGTH} characters long (got {len(value)})"
        )
    if not value.isprintable():
        bad = next(c for c in value if not c.isprintable())
        yield Problem(
            obj, field, f"must contain only printable characters (found U+{ord(bad):04X})"
        )


def _range(obj: str, field: str, value: float, low: float, high: float) -> Iterator[Problem]:
    if not low <= value <= high:  # False for NaN too
        yield Problem(obj, field, f"must be between {low:g} and {high:g} (got {value!r:.40})")


def _duplicates(names: Iterable[str]) -> list[str]:
    names = list(names)
    if len(set(names)) == len(names):
        return []
    return [name for name, n in Counter(names).items() if n > 1]


def _slash(obj: str, field: str, value: str) -> Iterator[Problem]:
    if "/" in value:
        yield Problem(obj, field, f"{value!r} must not contain '/' (it separates names in keys)")


def destination_problems(dest: Destination, lanes_from_spec: bool = False) -> Iterator[Problem]:
    """``lanes_from_spec``: the lanes were built from a validated :class:`LaneSpec` (name rule,
    ranges already checked), so only what the spec cannot see is checked first."""
    obj = f"destination {dest.name!r:.300}"
    yield from name_problems(obj, "name", dest.name)
    yield from _slash(obj, "name", dest.name)
    for resource in _duplicates(dest.resources):
        yield Problem(obj, "resources", f"resource {resource!r} is listed more than once")
    for resource in dest.resources:
        if _plain_name(resource) and len(dest.name) + len(resource) < MAX_NAME_LENGTH:
            continue
        yield from name_problems(obj, "resources", resource)
        yield from _slash(obj, "resources", resource)
        standalone = standalone_pool_name(dest.name, resource)
        if len(standalone) > MAX_NAME_LENGTH:
            yield Problem(
                obj,
                "resources",
                f"its standalone pool for {resource!r} would be named "
                f"'<destination>/<resource>', {len(standalone)} characters "
                f"(at most {MAX_NAME_LENGTH}): shorten the destination or the resource name",
            )
    for resource, capacity in dest.standalone_capacity.items():
        field = f"standalone_capacity.{resource}"
        if resource not in dest.resources:
            yield Problem(
                obj,
                field,
                f"resource {resource!r} is not one the destination draws from "
                f"(resources: {list(dest.resources)})",
            )
        yield from _capacity(obj, field, capacity)
    for name in _duplicates(lane.name for lane in dest.lanes):
        yield Problem(f"{obj}, lane {name!r}", "name", "duplicate lane name in this destination")
    resources = set(dest.resources)
    plainly_valid = _valid_spec_lane if lanes_from_spec else _plainly_valid
    for lane in dest.lanes:
        if not plainly_valid(lane, resources):
            yield from lane_problems(dest, lane)


def destination_is_plain(dest: Destination) -> bool:
    """Whether :func:`destination_problems` (with ``lanes_from_spec``) would find nothing, checked
    in one pass without generators (a topology can have 100,000 destinations); when it is not,
    :func:`destination_problems` says what is wrong."""
    return destination_head_is_plain(
        dest.name, dest.resources, dest.standalone_capacity
    ) and lanes_are_plain(dest.lanes, set(dest.resources))


def destination_head_is_plain(
    name: str, resources: tuple[str, ...], standalone_capacity: Mapping[str, float]
) -> bool:
    """The part of :func:`destination_is_plain` about the destination itself: its name, its
    resources and its standalone capacities."""
    known = set(resources)
    if not _plain_name(name) or len(known) != len(resources):
        return False
    room = MAX_NAME_LENGTH - len(name)  # '<destination>/<resource>' names its standalone pool
    for resource in resources:
        if not (len(resource) < room and _plain_name(resource)):
            return False
    for resource, capacity in standalone_capacity.items():
        if resource not in known or not (capacity == 0 or MIN_CAPACITY <= capacity <= MAX_UNITS):
            return False
    return True


def lanes_are_plain(lanes: tuple[Lane, ...], known: set[str]) -> bool:
    """The part of :func:`destination_is_plain` about the lanes (their values are in range
    already, as a reader or the spec models checked): names unique in the destination, none
    holding ``/``, every cost for one of the destination's resources (``known``). The compiled
    reader (``_reading.c``) checks the same while it reads the lanes."""
    if len({lane.name for lane in lanes}) != len(lanes):
        return False
    for lane in lanes:
        if "/" in lane.name or (lane.cost and not lane.cost.keys() <= known):
            return False
    return True


def pool_is_plain(pool: Pool) -> bool:
    """Whether :func:`pool_problems` would find nothing, checked without generators."""
    capacity, headroom = pool.capacity, pool.headroom
    if not (
        _fits(pool.name)
        and _fits(pool.resource)
        and (capacity == 0 or MIN_CAPACITY <= capacity <= MAX_UNITS)
        and 0 <= headroom <= MAX_HEADROOM
    ):
        return False
    targets = pool.scale_targets
    if not targets:
        return True
    if len({t.name for t in targets}) != len(targets):
        return False
    for t in targets:
        group = t.group
        if not (
            _fits(t.name)
            and _fits(group.name)
            and (group.region is None or _fits(group.region))
            and (group.zone is None or _fits(group.zone))
            and (group.project is None or _fits(group.project))
            and 0 <= t.min_replicas <= t.max_replicas <= MAX_COUNT
            and 0 <= t.replicas <= MAX_COUNT
            and MIN_UNITS_PER_REPLICA <= t.units_per_replica <= MAX_UNITS
        ):
            return False
    return True


def _fits(name: str) -> bool:
    """The name rule (:func:`name_problems` finds nothing)."""
    return 0 < len(name) <= MAX_NAME_LENGTH and name.isprintable()


def _plain_name(name: str) -> bool:
    return 0 < len(name) <= MAX_NAME_LENGTH and name.isprintable() and "/" not in name


def _plainly_valid(lane: Lane, resources: set[str]) -> bool:
    """The common case, checked without generators (a topology can have 100,000 lanes);
    anything else goes through :func:`lane_problems`, which says what is wrong."""
    return (
        _plain_name(lane.name)
        and 0 <= lane.limit <= MAX_UNITS
        and MIN_FACTOR <= lane.weight <= MAX_FACTOR
        and all(r in resources and MIN_FACTOR <= c <= MAX_FACTOR for r, c in lane.cost.items())
    )


def _valid_spec_lane(lane: Lane, resources: set[str]) -> bool:
    """:func:`_plainly_valid` for a lane whose spec was validated: only the '/' in its name and
    the resources of its costs are left to check."""
    return "/" not in lane.name and (not lane.cost or lane.cost.keys() <= resources)


def _capacity(obj: str, field: str, value: float) -> Iterator[Problem]:
    if value < 0 or value != value:
        yield Problem(obj, field, f"must be >= 0 (got {value})")
    elif 0 < value < MIN_CAPACITY:
        yield Problem(obj, field, f"must be 0 or at least {MIN_CAPACITY:g} (got {value!r})")
    else:
        yield from _range(obj, field, value, 0, MAX_UNITS)


def lane_problems(dest: Destination, lane: Lane) -> Iterator[Problem]:
    obj = f"destination {dest.name!r:.300}, lane {lane.name!r:.300}"
    yield from name_problems(obj, "name", lane.name)
    yield from _slash(obj, "name", lane.name)
    if lane.limit < 0:
        yield Problem(obj, "limit", f"must be >= 0 (got {lane.limit})")
    else:
        yield from _range(obj, "limit", lane.limit, 0, MAX_UNITS)
    if lane.weight <= 0:
        yield Problem(obj, "weight", f"must be > 0 (got {lane.weight})")
    else:
        yield from _range(obj, "weight", lane.weight, MIN_FACTOR, MAX_FACTOR)
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
        else:
            yield from _range(obj, f"cost.{resource}", cost, MIN_FACTOR, MAX_FACTOR)


def target_problems(pool: str, target: ScaleTarget) -> Iterator[Problem]:
    obj = f"pool {pool!r:.300}, scale target {target.name!r:.300}"
    yield from name_problems(obj, "name", target.name)
    group = target.group
    yield from name_problems(obj, "group", group.name)
    for field, value in (
        ("region", group.region),
        ("zone", group.zone),
        ("project", group.project),
    ):
        if value is not None:
            yield from name_problems(obj, field, value)
    for field, count in (
        ("min_replicas", target.min_replicas),
        ("max_replicas", target.max_replicas),
        ("replicas", target.replicas),
    ):
        if count < 0:
            yield Problem(obj, field, f"must be >= 0 (got {count})")
        elif count > MAX_COUNT:
            yield Problem(obj, field, f"must be at most {MAX_COUNT:,} (got {count!s:.40})")
    if target.max_replicas < target.min_replicas:
        yield Problem(
            obj,
            "min_replicas",
            f"min_replicas ({target.min_replicas}) is greater than "
            f"max_replicas ({target.max_replicas})",
        )
    if target.units_per_replica <= 0:
        yield Problem(obj, "units_per_replica", f"must be > 0 (got {target.units_per_replica})")
    else:
        yield from _range(
            obj, "units_per_replica", target.units_per_replica, MIN_UNITS_PER_REPLICA, MAX_UNITS
        )


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
    obj = f"pool {pool.name!r:.300}"
    yield from name_problems(obj, "name", pool.name)
    yield from name_problems(obj, "resource", pool.resource)
    yield from _capacity(obj, "capacity", pool.capacity)
    if pool.headroom < 0:
        yield Problem(obj, "headroom", f"must be >= 0 (got {pool.headroom})")
    else:
        yield from _range(obj, "headroom", pool.headroom, 0, MAX_HEADROOM)
    for name in _duplicates(t.name for t in pool.scale_targets):
        yield Problem(f"{obj}, scale target {name!r}", "name", "duplicate scale target name")
    for target in pool.scale_targets:
        yield from target_problems(pool.name, target)
