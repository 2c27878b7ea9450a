"""Every field of every topology value, walked from its field table (core/fields.py): a change to
it is stored and read back, reported by what-if, and changes the simulated run's unit key.

Nothing here names a field: a field added to a value is walked as soon as it is declared (and a
field declared without its table entry fails at import, before any of this runs).
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from arklow_pulumi.core.fields import FieldInfo, table
from arklow_pulumi.core.policy import ScalePolicy
from arklow_pulumi.core.topology import (
    Destination,
    FrozenMap,
    GroupRef,
    Lane,
    Pool,
    ScaleTarget,
    Topology,
)
from arklow_pulumi.reading.spec import (
    DestinationSpec,
    LaneSpec,
    PoolSpec,
    ScalePolicySpec,
    ScaleTargetSpec,
)
from arklow_pulumi.simulation.describing import describe_change
from arklow_pulumi.simulation.units import split
from arklow_pulumi.store.engine import open_store, reading, writing
from arklow_pulumi.store.snapshots import load_all, write_changes

# The forms a user or the cloud sets; the others are an object's identity or its relations,
# walked as objects of their own (a destination's lanes, a pool's scale targets).
WALKED = frozenset(
    {
        "number",
        "count",
        "name",
        "optional_name",
        "kind",
        "flag",
        "names",
        "amounts",
        "costs",
        "policy",
        "group",
        "observed",
    }
)


def base() -> Topology:
    lane = Lane("d", "l", 10.0, 1.0, FrozenMap({"gpu": 2.0}))
    dest = Destination("d", ("gpu", "cpu"), (lane,), FrozenMap({"cpu": 3.0}))
    target = ScaleTarget("t", GroupRef("aws_asg", "g", region="r"), 1, 5, 2.0, 1)
    pools = {
        "p": Pool("p", "gpu", 4.0, 0.1, (target,)),
        "d/cpu": Pool("d/cpu", "cpu", 3.0, owner="d"),
    }
    return Topology(
        destinations=FrozenMap({"d": dest}),
        pools=FrozenMap(pools),
        memberships=FrozenMap({("d", "gpu"): "p", ("d", "cpu"): "d/cpu"}),
    )


def changed_value(info: FieldInfo, value: Any) -> Any:
    """Another valid value of the field's form."""
    form = info.form
    if form == "number":
        return value / 2 if value else 0.5
    if form in ("count", "observed"):
        return value + 1
    if form in ("name", "optional_name"):
        return (value or "x") + "2"
    if form == "kind":
        return "gcp_mig" if value == "aws_asg" else "aws_asg"
    if form == "flag":
        return not value
    if form == "names":
        return tuple(reversed(value))
    if form in ("amounts", "costs"):
        return FrozenMap({key: amount * 2 for key, amount in value.items()})
    if form == "policy":
        return dataclasses.replace(value, tolerance=value.tolerance / 2)
    if form == "group":
        return dataclasses.replace(value, name=value.name + "2")
    raise AssertionError(f"no changed value for the form {form!r}: add one here")


# Each value's place in the base topology: how to read it, and how to put a changed one back.
Place = tuple[Callable[[Topology], Any], Callable[[Topology, Any], Topology]]


def _with_dest(topo: Topology, dest: Destination) -> Topology:
    return dataclasses.replace(topo, destinations=FrozenMap({**topo.destinations, "d": dest}))


def _with_pool(topo: Topology, pool: Pool) -> Topology:
    return dataclasses.replace(topo, pools=FrozenMap({**topo.pools, "p": pool}))


def _target(topo: Topology) -> ScaleTarget:
    return topo.pools["p"].scale_targets[0]


def _with_target(topo: Topology, target: ScaleTarget) -> Topology:
    return _with_pool(topo, dataclasses.replace(topo.pools["p"], scale_targets=(target,)))


PLACES: dict[type, Place] = {
    Lane: (
        lambda t: t.destinations["d"].lanes[0],
        lambda t, v: _with_dest(t, dataclasses.replace(t.destinations["d"], lanes=(v,))),
    ),
    Destination: (lambda t: t.destinations["d"], _with_dest),
    Pool: (lambda t: t.pools["p"], _with_pool),
    ScalePolicy: (
        lambda t: t.pools["p"].scale_policy,
        lambda t, v: _with_pool(t, dataclasses.replace(t.pools["p"], scale_policy=v)),
    ),
    ScaleTarget: (_target, _with_target),
    GroupRef: (
        lambda t: _target(t).group,
        lambda t, v: _with_target(t, dataclasses.replace(_target(t), group=v)),
    ),
}


def walked() -> list[Any]:
    return [
        pytest.param(cls, info, id=f"{cls.__name__}.{info.name}")
        for cls in PLACES
        for info in table(cls)
        if info.form in WALKED
    ]


def _changed(cls: type, info: FieldInfo) -> tuple[Topology, Topology, Any]:
    get, put = PLACES[cls]
    before = base()
    value = get(before)
    new = changed_value(info, getattr(value, info.name))
    assert new != getattr(value, info.name)
    return before, put(before, dataclasses.replace(value, **{info.name: new})), new


@pytest.mark.parametrize(("cls", "info"), walked())
def test_a_changed_field_is_stored_and_read_back(
    tmp_path: Path, cls: type, info: FieldInfo
) -> None:
    before, after, new = _changed(cls, info)
    store = open_store(f"sqlite:///{tmp_path / 'fields.db'}")
    with writing(store) as conn:
        write_changes(conn, Topology(), before)
    with writing(store) as conn:
        write_changes(conn, before, after)
    with reading(store) as conn:
        stored = load_all(conn)
    assert getattr(PLACES[cls][0](stored), info.name) == new
    assert PLACES[cls][0](stored) == PLACES[cls][0](after)


def _type_of(cls: type, info: FieldInfo) -> type:
    return type(getattr(PLACES[cls][0](base()), info.name))


@pytest.mark.parametrize(("cls", "info"), walked())
def test_a_changed_field_is_reported_by_what_if(cls: type, info: FieldInfo) -> None:
    before, after, _new = _changed(cls, info)
    said = describe_change(before, after)
    assert said != "no change to the topology"
    named = "scale policy changed" if ScalePolicy in (cls, _type_of(cls, info)) else info.name
    if cls is GroupRef:
        named = "group"
    assert named in said, said


@pytest.mark.parametrize(("cls", "info"), walked())
def test_a_changed_field_changes_the_simulated_run(cls: type, info: FieldInfo) -> None:
    before, after, _new = _changed(cls, info)
    old = {unit.signature for unit in split(before)}
    new = {unit.signature for unit in split(after)}
    assert old != new
    assert {unit.signature for unit in split(base())} == old  # the key is the value: stable


SPECS = (
    (LaneSpec, Lane),
    (DestinationSpec, Destination),
    (PoolSpec, Pool),
    (ScaleTargetSpec, ScaleTarget),
    (ScalePolicySpec, ScalePolicy),
)


def _rules_in(annotation: Any) -> list[Any]:
    """The field rules an annotation states, inside an optional too (``Count | None``)."""
    found = [getattr(m, "problem", None) for m in getattr(annotation, "__metadata__", ())]
    for arg in typing.get_args(annotation):
        found += _rules_in(arg)
    return [rule for rule in found if rule is not None]


def _spec_rule(spec: type[BaseModel], name: str) -> Any:
    info = spec.model_fields.get(name)
    if info is None:
        return None
    found = [getattr(m, "problem", None) for m in info.metadata]
    rules = [rule for rule in found if rule is not None] + _rules_in(info.annotation)
    return rules[0] if rules else None


@pytest.mark.parametrize(("spec", "value"), SPECS, ids=[v.__name__ for _s, v in SPECS])
def test_the_schema_checks_each_number_with_the_tables_rule(
    spec: type[BaseModel], value: type
) -> None:
    """The schema's type of a number or count states the rule the field table names for it, so
    a document and a value built in code are held to one rule."""
    for info in table(value):
        if info.form in ("number", "count", "observed"):
            assert _spec_rule(spec, info.name) is info.rule, f"{value.__name__}.{info.name}"
