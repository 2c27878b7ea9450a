"""The fast reader against the spec models: same topology, same demand, same problems.

:func:`read_topology` may decline any document (``None``: the models read it then), but what it
accepts must be exactly what the models build — the same values of the same types — and a
cross-object problem must read the same. Hypothesis mutates valid documents with hostile values
(wrong types, bools, NaN, out-of-range and huge numbers, bad names, nulls, unknown keys, missing
fields) in every field; a second set of tests makes sure plainly valid documents do take the fast
route (else the reader is correct but useless).
"""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arklow_pulumi.core.building import build_topology
from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.core.parsing import parse_demand, parse_topology
from arklow_pulumi.core.reading import LANE_FIELDS, read_demand, read_topology
from arklow_pulumi.core.topology import Lane, Topology, frozen_map

ROOT = Path(__file__).resolve().parents[2]

BASE: dict[str, Any] = {
    "destinations": [
        {
            "name": "train",
            "resources": ["gpu", "cpu"],
            "lanes": [
                {"name": "batch", "limit": 40, "weight": 2.0, "cost": {"gpu": 1.5, "cpu": 1}},
                {"name": "urgent", "limit": 8.5},
            ],
            "standalone_capacity": {"cpu": 16},
        },
        {
            "name": "serve",
            "resources": ["gpu"],
            "lanes": [{"name": "online", "limit": 12, "weight": None, "cost": None}],
        },
        {"name": "solo", "resources": ["gpu"], "lanes": None},
    ],
    "pools": [
        {
            "name": "gpu",
            "resource": "gpu",
            "capacity": 8,
            "headroom": 0.2,
            "members": ["train", "serve"],
            "scale_targets": [
                {
                    "kind": "aws_asg",
                    "name": "gpu-asg",
                    "group": "gpu-workers",
                    "region": "eu-west-1",
                    "min_replicas": 1,
                    "max_replicas": 10,
                    "units_per_replica": 4,
                    "replicas": 3,
                },
                {
                    "kind": "gcp_mig",
                    "name": "gpu-mig",
                    "project": "p",
                    "zone": "europe-west1-b",
                    "min_replicas": 0,
                    "max_replicas": 5,
                    "units_per_replica": 2.5,
                    "override_policies": True,
                },
            ],
            "scale_policy": {"max_step_up": 2, "tolerance": 0.05, "scale_down_window_s": 60},
        },
        {"name": "solo/gpu", "resource": "gpu", "members": ["solo"], "scale_policy": None},
    ],
}

HOSTILE: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    3,
    0.5,
    1e-7,
    1e-10,
    1e6,
    1e12,
    1.5e12,
    10**7,
    10**400,
    float("nan"),
    float("inf"),
    -0.0,
    "5",
    "",
    "ok",
    "a" * 255,
    "a" * 256,
    "a/b",
    "tab\there",
    "gpu",
    "aws_asg",
    [],
    ["gpu"],
    {},
    {"gpu": 1},
]


def _paths(node: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [at]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*at, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*at, i))
    return out


PATHS = _paths(BASE)[1:]


def _mutate(doc: Any, path: tuple[Any, ...], how: str, value: Any) -> Any:
    doc = copy.deepcopy(doc)
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    last = path[-1]
    if how == "set":
        parent[last] = value
    elif how == "drop":
        del parent[last]
    elif how == "extra" and isinstance(parent[last], dict):
        parent[last]["surprise"] = value
    elif how == "key" and isinstance(parent, dict):  # the same value under a hostile key
        parent[value if isinstance(value, (str, int, float, bool)) or value is None else "k"] = (
            parent.pop(last)
        )
    return doc


def _slow(raw: Any) -> Topology | InvalidInput:
    try:
        return build_topology(parse_topology(raw))
    except InvalidInput as exc:
        return exc


def _fast(raw: Any) -> Topology | InvalidInput | None:
    try:
        return read_topology(raw)
    except InvalidInput as exc:
        return exc


def _canonical(topo: Topology) -> str:
    """Every value with its type (repr tells 5 from 5.0), in order."""
    return repr((list(topo.destinations.items()), list(topo.pools.items()), topo.memberships))


def _agree(raw: Any) -> bool:
    """True when the fast route took the document (and agreed with the models)."""
    fast = _fast(raw)
    if fast is None:
        return False
    slow = _slow(raw)
    if isinstance(fast, InvalidInput):
        assert isinstance(slow, InvalidInput), f"fast refused what the models accept: {fast}"
        assert [str(p) for p in fast.problems] == [str(p) for p in slow.problems]
    else:
        assert isinstance(slow, Topology), f"fast accepted what the models refuse: {slow}"
        assert _canonical(fast) == _canonical(slow)
    return True


def test_the_base_document_takes_the_fast_route() -> None:
    assert _agree(BASE)
    assert _agree(None)
    assert _agree({})


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    mutations=st.lists(
        st.tuples(
            st.sampled_from(PATHS),
            st.sampled_from(["set", "set", "set", "drop", "extra", "key"]),
            st.sampled_from(HOSTILE),
        ),
        min_size=1,
        max_size=3,
    )
)
def test_any_mutated_document_reads_as_the_models_read_it(
    mutations: list[tuple[tuple[Any, ...], str, Any]],
) -> None:
    doc: Any = BASE
    for path, how, value in mutations:
        try:
            doc = _mutate(doc, path, how, value)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed or replaced this path
    _agree(doc)


def test_every_single_field_mutation_agrees_and_only_invalid_ones_are_declined() -> None:
    declined = 0
    for path in PATHS:
        for value in HOSTILE:
            doc = _mutate(BASE, path, "set", value)
            if not _agree(doc):
                declined += 1
                slow = _slow(doc)
                # the one lax field of the models: a bool given as 0/1 is left to them
                lax = path[-1] == "override_policies" and value in (0, 1)
                assert lax or isinstance(slow, InvalidInput), f"valid, yet declined: {path}"
    assert declined > len(PATHS)  # hostile values are mostly declined, not silently accepted


def test_cross_object_problems_are_named_as_the_models_name_them() -> None:
    doc = copy.deepcopy(BASE)
    doc["pools"][0]["members"].append("nobody")
    doc["destinations"].append({"name": "train", "resources": []})
    doc["pools"][0]["scale_targets"][0]["min_replicas"] = 20  # above max: a pool rule
    fast = _fast(doc)
    assert isinstance(fast, InvalidInput)
    assert _agree(doc)


def _example_topologies() -> list[Path]:
    found = sorted((ROOT / "examples").rglob("*.yaml")) + sorted((ROOT / "docs").rglob("*.yaml"))
    return [p for p in found if "destinations" in p.read_text(encoding="utf-8")]


@pytest.mark.parametrize("path", _example_topologies(), ids=lambda p: p.name)
def test_shipped_topologies_take_the_fast_route(path: Path) -> None:
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(raw, dict) or not raw.keys() <= {"destinations", "pools"}:
        pytest.skip("not a topology document")
    assert _agree(raw), f"{path} was declined by the fast reader"


def test_generated_benchmark_topology_takes_the_fast_route() -> None:
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    from topologies import document

    doc, demand = document(2_000, 200)
    doc = json.loads(json.dumps(doc))
    assert _agree(doc)
    assert read_demand({"lanes": demand}) == dict(parse_demand({"lanes": demand}).lanes)


@pytest.mark.parametrize(
    "raw",
    [
        None,
        {},
        {"lanes": None},
        {"lanes": {"a/b": 1, "c/d": 2.5}},
        {"lanes": {"a/b": True}},
        {"lanes": {"a/b": -1}},
        {"lanes": {"a/b": float("nan")}},
        {"lanes": {"a/b": 10**400}},
        {"lanes": {"a/b": "1"}},
        {"lanes": {1: 1}},
        {"lanes": []},
        {"lanes": {}, "extra": 1},
        [],
    ],
)
def test_demand_reads_as_the_models_read_it(raw: Any) -> None:
    fast = read_demand(raw)
    try:
        slow: dict[str, float] | None = dict(parse_demand(raw).lanes)
    except InvalidInput:
        slow = None
    if fast is not None:
        assert slow is not None and repr(fast) == repr(slow)
    elif raw in (None, {}, {"lanes": None}) or raw == {"lanes": {"a/b": 1, "c/d": 2.5}}:
        pytest.fail("a plainly valid demand report was declined")


def test_lanes_built_slot_by_slot_are_lanes_built_by_their_constructor() -> None:
    """The reader sets a Lane's slots itself (faster than the frozen dataclass's ``__init__``):
    it must set every field, and the result must be the object the constructor makes."""
    assert tuple(f.name for f in dataclasses.fields(Lane)) == LANE_FIELDS
    topo = read_topology(
        {
            "destinations": [
                {
                    "name": "d",
                    "resources": ["gpu"],
                    "lanes": [
                        {"name": "a", "limit": 3, "weight": 2, "cost": {"gpu": 0.5}},
                        {"name": "b", "limit": 1.5},
                    ],
                }
            ]
        }
    )
    assert topo is not None
    built = topo.destinations["d"].lanes
    expected = (
        Lane("d", "a", 3.0, 2.0, frozen_map({"gpu": 0.5})),
        Lane("d", "b", 1.5, 1.0, frozen_map()),
    )
    assert built == expected
    assert [repr(lane) for lane in built] == [repr(lane) for lane in expected]
    with pytest.raises(dataclasses.FrozenInstanceError):
        built[0].limit = 1.0  # type: ignore[misc]
