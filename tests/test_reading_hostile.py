"""The one validation step on hostile documents: every document is a topology or one
:class:`InvalidInput` whose lines name an object and a field; nothing else escapes.

Hypothesis mutates a valid document with hostile values (wrong types, bools, NaN, out-of-range and
huge numbers, bad names, nulls, unknown keys, missing fields) in every field, and the document is
read the way every path reads one (:func:`~arklow_pulumi.reading.parsing.parse_topology`, then
:func:`~arklow_pulumi.reading.spec.build_topology`). Each mutated document also goes through text:
written as YAML and as JSON and read back by
:func:`~arklow_pulumi.reading.text.parse_document`, it reads the same.
"""

from __future__ import annotations

import contextlib
import copy
import json
import math
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.core.topology import Topology
from arklow_pulumi.reading.parsing import parse_topology
from arklow_pulumi.reading.spec import build_topology
from arklow_pulumi.reading.text import parse_document
from tests.hypothesis_profiles import examples

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


def _read(raw: Any) -> Topology | InvalidInput:
    try:
        return build_topology(parse_topology(raw))
    except InvalidInput as exc:
        return exc


def test_the_base_document_is_a_topology() -> None:
    topo = _read(BASE)
    assert isinstance(topo, Topology)
    assert set(topo.pools) == {"gpu", "solo/gpu", "train/cpu"}


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
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
def test_hostile_documents_are_a_topology_or_one_named_problem(
    mutations: list[tuple[tuple[Any, ...], str, Any]],
) -> None:
    doc: Any = BASE
    for path, how, value in mutations:
        # an earlier mutation may have removed or replaced what this path points into
        with contextlib.suppress(KeyError, IndexError, TypeError):
            doc = _mutate(doc, path, how, value)
    result = _read(doc)
    if isinstance(result, InvalidInput):
        assert result.problems and "\n" not in str(result)
        assert all(p.obj and p.message for p in result.problems)  # a field may be named ""
    texts = [yaml.safe_dump(doc, sort_keys=False)]
    if _finite(doc):  # JSON has no NaN or infinity to write, and only strings as keys
        texts.append(json.dumps(doc))
    for text in texts:
        again = _read(parse_document(text))
        assert type(again) is type(result)
        if isinstance(result, InvalidInput):
            assert str(again) == str(result)


def _finite(node: Any) -> bool:
    if isinstance(node, float):
        return math.isfinite(node)
    if isinstance(node, dict):
        return all(_finite(k) and _finite(v) for k, v in node.items()) and all(
            isinstance(k, str) for k in node
        )
    if isinstance(node, list):
        return all(_finite(v) for v in node)
    return True
