"""Checks of one object at a time: each field against its rule, and what spans its fields.

Each check returns :class:`Problem` values naming the object and the field, so callers can report
every problem at once (``arklow validate``) or turn them into ``CheckFailure`` values (Pulumi).
Which rule checks which field is the field table's (:mod:`arklow_pulumi.core.fields`), the rules
and their messages those of :mod:`arklow_pulumi.core.limits`; objects built from the schema's
models had their fields checked there already (``fields_checked=True``), and only what the schema
cannot see is checked again: a ``/`` in a name, a resource listed twice, a cost or a standalone
capacity for a resource the destination does not draw from, two lanes or targets of one name,
``min_replicas`` over ``max_replicas``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from arklow_pulumi.core.errors import Problem
from arklow_pulumi.core.fields import table
from arklow_pulumi.core.limits import MAX_NAME_LENGTH, name_problem
from arklow_pulumi.core.topology import (
    Destination,
    GroupRef,
    Lane,
    Pool,
    ScaleTarget,
    standalone_pool_name,
)


def _field(obj: str, field: str, message: str | None, out: list[Problem]) -> None:
    if message is not None:
        out.append(Problem(obj, field, message))


def _ranges(obj: str, value: object, out: list[Problem]) -> None:
    """Each field of ``value`` against its rule, walking its field table (core.fields): a name
    against the name rule, a number or count against its range rule, each amount of a mapping
    (``cost.<resource>``), a group's fields under their own names (its name as ``group``)."""
    for info in table(type(value)):
        found = getattr(value, info.name)
        form = info.form
        if form in ("key", "name", "optional_name") and found is not None:
            field = "group" if isinstance(value, GroupRef) and info.name == "name" else info.name
            _field(obj, field, name_problem(found), out)
        elif form in ("number", "count", "observed") and info.rule is not None:
            _field(obj, info.name, info.rule(found), out)
        elif form in ("amounts", "costs") and info.rule is not None:
            for key, amount in found.items():
                _field(obj, f"{info.name}.{key}", info.rule(amount), out)
        elif form == "group":
            _ranges(obj, found, out)


def _drawn_from(
    obj: str,
    field: str,
    amounts: Iterable[str],
    dest: Destination,
    named: str,
    out: list[Problem],
) -> None:
    """Each resource of ``amounts`` (a cost, a standalone capacity) is one ``dest`` draws from."""
    for resource in amounts:
        if resource not in dest.resources:
            message = (
                f"resource {resource!r} is not one {named} draws from "
                f"(resources: {list(dest.resources)})"
            )
            out.append(Problem(obj, f"{field}.{resource}", message))


def _duplicates(names: Iterable[str]) -> list[str]:
    names = list(names)
    if len(set(names)) == len(names):
        return []
    return [name for name, n in Counter(names).items() if n > 1]


def _slash(obj: str, field: str, value: str, out: list[Problem]) -> None:
    if "/" in value:
        out.append(
            Problem(obj, field, f"{value!r} must not contain '/' (it separates names in keys)")
        )


def destination_problems(dest: Destination, fields_checked: bool = False) -> list[Problem]:
    """``fields_checked``: the destination was built from a validated spec (names and numbers
    checked against :mod:`arklow_pulumi.core.limits` there), so only what spans fields is
    checked."""
    obj = f"destination {dest.name!r:.300}"
    out: list[Problem] = []
    _slash(obj, "name", dest.name, out)
    for resource in _duplicates(dest.resources):
        out.append(Problem(obj, "resources", f"resource {resource!r} is listed more than once"))
    room = MAX_NAME_LENGTH - len(dest.name)  # '<destination>/<resource>' names its standalone pool
    for resource in dest.resources:
        if "/" in resource or len(resource) >= room or not fields_checked:
            _resource_problems(obj, dest, resource, out)
    _drawn_from(obj, "standalone_capacity", dest.standalone_capacity, dest, "the destination", out)
    if not fields_checked:
        _ranges(obj, dest, out)
    lanes = dest.lanes
    if len({lane.name for lane in lanes}) != len(lanes):
        for name in _duplicates(lane.name for lane in lanes):
            out.append(
                Problem(f"{obj}, lane {name!r}", "name", "duplicate lane name in this destination")
            )
    resources = set(dest.resources)
    for lane in lanes:
        if (
            not fields_checked
            or "/" in lane.name
            or (lane.cost and not lane.cost.keys() <= resources)
        ):
            out += lane_problems(dest, lane, fields_checked)
    return out


def _resource_problems(obj: str, dest: Destination, resource: str, out: list[Problem]) -> None:
    _field(obj, "resources", name_problem(resource), out)
    _slash(obj, "resources", resource, out)
    standalone = standalone_pool_name(dest.name, resource)
    if len(standalone) > MAX_NAME_LENGTH:
        out.append(
            Problem(
                obj,
                "resources",
                f"its standalone pool for {resource!r} would be named "
                f"'<destination>/<resource>', {len(standalone)} characters "
                f"(at most {MAX_NAME_LENGTH}): shorten the destination or the resource name",
            )
        )


def lane_problems(dest: Destination, lane: Lane, fields_checked: bool = False) -> list[Problem]:
    obj = f"destination {dest.name!r:.300}, lane {lane.name!r:.300}"
    out: list[Problem] = []
    if not fields_checked:
        _ranges(obj, lane, out)
    _slash(obj, "name", lane.name, out)
    _drawn_from(obj, "cost", lane.cost, dest, f"destination {dest.name!r}", out)
    return out


def target_problems(pool: str, target: ScaleTarget, fields_checked: bool = False) -> list[Problem]:
    obj = f"pool {pool!r:.300}, scale target {target.name!r:.300}"
    out: list[Problem] = []
    if not fields_checked:
        _ranges(obj, target, out)
    if target.max_replicas < target.min_replicas:
        out.append(
            Problem(
                obj,
                "min_replicas",
                f"min_replicas ({target.min_replicas}) is greater than "
                f"max_replicas ({target.max_replicas})",
            )
        )
    return out


def target_reference_problems(pool: str, target: ScaleTarget) -> list[Problem]:
    """The group reference is complete enough to reach the group (Pulumi, the controller)."""
    obj = f"pool {pool!r}, scale target {target.name!r}"
    group = target.group
    out: list[Problem] = []
    if group.kind == "aws_asg":
        if not group.region:
            out.append(Problem(obj, "region", "an AWS Auto Scaling group needs a region"))
        if group.zone or group.project:
            out.append(Problem(obj, "zone", "an AWS Auto Scaling group takes no zone or project"))
        return out
    if not group.project:
        out.append(Problem(obj, "project", "a GCP managed instance group needs a project"))
    if bool(group.zone) == bool(group.region):
        out.append(
            Problem(obj, "zone", "a GCP managed instance group needs exactly one of zone or region")
        )
    return out


def pool_problems(pool: Pool, fields_checked: bool = False) -> list[Problem]:
    obj = f"pool {pool.name!r:.300}"
    out: list[Problem] = []
    if not fields_checked:
        _ranges(obj, pool, out)
    targets = pool.scale_targets
    if not targets:
        return out
    if len({t.name for t in targets}) != len(targets):
        for name in _duplicates(t.name for t in targets):
            duplicate = Problem(
                f"{obj}, scale target {name!r}", "name", "duplicate scale target name"
            )
            out.append(duplicate)
    for target in targets:
        if not fields_checked or target.max_replicas < target.min_replicas:
            out += target_problems(pool.name, target, fields_checked)
    return out
