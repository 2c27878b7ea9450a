"""``arklow allocate`` / ``arklow validate`` as a user runs them: a real process, real files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import arklow_cli
from tests.arklow_cli import Result
from tests.builders import dest, lane, pool, target

TOPOLOGY: dict[str, Any] = {
    "destinations": [
        dest("search", ["gpu"], lane("interactive", 10, 2), lane("batch", 20)),
        dest("chat", ["gpu", "llm-quota"], lane("live", 8, llm_quota=2)),
        dest("solo", ["cpu"], lane("jobs", 5), cpu=3),
    ],
    "pools": [
        pool(
            "gpu-shared", "gpu", ["search", "chat"], scale_targets=[target("gpu-asg", 1, 4, 4, 2)]
        ),
        pool("quota", "llm-quota", ["chat"], 10),
    ],
}


def allocate(tmp_path: Path, topology: str, demand: str, *extra: str) -> Result:
    """``arklow allocate`` on the files ``t.yaml`` and ``d.yaml`` holding these texts."""
    t, d = tmp_path / "t.yaml", tmp_path / "d.yaml"
    t.write_text(topology)
    d.write_text(demand)
    return arklow_cli.run(["allocate", "--topology", str(t), "--demand", str(d), *extra])


def run(tmp_path: Path, topology: Any, demand: Any, *extra: str, raw: bool = False) -> Result:
    text = topology if raw else yaml.safe_dump(topology)
    return allocate(tmp_path, text, yaml.safe_dump(demand), *extra)


def test_json_contract(tmp_path: Path) -> None:
    proc = run(
        tmp_path,
        TOPOLOGY,
        {"lanes": {"search/interactive": 6, "search/batch": 15, "chat/live": 8, "solo/jobs": 4}},
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert set(doc) == {"lanes", "pools"}
    assert set(doc["lanes"]) == {"search/interactive", "search/batch", "chat/live", "solo/jobs"}
    for figures in doc["lanes"].values():
        assert set(figures) == {"demand", "allocation", "held", "admission"}
    assert set(doc["pools"]) == {"gpu-shared", "quota", "solo/cpu"}
    for p in doc["pools"].values():
        assert set(p) == {"resource", "capacity", "demand", "pressure", "state", "desired_replicas"}
    gpu = doc["pools"]["gpu-shared"]
    # capacity 2 replicas x 4 units; demand 6 + 15 + 8 = 29 -> 29 * 1.1 / 4 -> 8 replicas, clamped to 4
    assert gpu == {
        "resource": "gpu",
        "capacity": 8,
        "demand": 29,
        "pressure": 3.625,
        "state": "constrained",
        "desired_replicas": 4,
    }
    assert doc["pools"]["solo/cpu"] == {
        "resource": "cpu",
        "capacity": 3,
        "demand": 4,
        "pressure": pytest.approx(4 / 3),
        "state": "constrained",
        "desired_replicas": 0,
    }
    assert doc["lanes"]["solo/jobs"] == {"demand": 4, "allocation": 3, "held": 1, "admission": 3}
    # gpu: 8 units; chat/live is bound by quota (10 / cost 2 = 5) but gpu binds first at 2
    assert doc["lanes"]["search/interactive"]["allocation"] == pytest.approx(4)
    assert doc["lanes"]["chat/live"]["allocation"] == pytest.approx(2)


def test_lane_without_demand_and_idle_pool(tmp_path: Path) -> None:
    proc = run(tmp_path, TOPOLOGY, {"lanes": {}}, "--format", "json")
    doc = json.loads(proc.stdout)
    assert doc["pools"]["gpu-shared"]["state"] == "idle"
    assert doc["pools"]["gpu-shared"]["pressure"] == 0
    assert doc["pools"]["gpu-shared"]["desired_replicas"] == 1  # settles to min
    assert doc["lanes"]["search/batch"]["allocation"] == 0


def test_pressure_is_null_on_zero_capacity(tmp_path: Path) -> None:
    proc = run(tmp_path, TOPOLOGY, {"lanes": {"chat/live": 1}}, "--format", "json")
    topo = json.loads(json.dumps(TOPOLOGY))
    topo["pools"][1]["capacity"] = 0
    proc = run(tmp_path, topo, {"lanes": {"chat/live": 1}}, "--format", "json")
    assert json.loads(proc.stdout)["pools"]["quota"]["pressure"] is None


def test_table_format_for_people(tmp_path: Path) -> None:
    proc = run(tmp_path, TOPOLOGY, {"lanes": {"search/batch": 15}}, "--format", "table")
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert lines[0] == "POOLS" and "LANES" in lines
    assert lines.index("POOLS") < lines.index("LANES")
    held = [line for line in lines if line.endswith("HELD")]
    assert held and held[0].startswith("search/batch")
    header = lines[1]
    assert header.index("capacity") < header.index("demand") < header.index("pressure")
    # the pool's replica count is the desired one; every column has a header
    assert header.split("  ")[-1].strip() == "desired replicas"
    lanes_header = lines[lines.index("LANES") + 1]
    assert lanes_header.split() == ["lane", "demand", "allocation", "admission", "held", "status"]
    rule = lines[lines.index("LANES") + 2]
    assert len(rule.split()) == 6  # as many columns under the rule as headers above it


def mutate(path: str, value: Any) -> dict[str, Any]:
    doc = json.loads(json.dumps(TOPOLOGY))
    node: Any = doc
    keys = path.split(".")
    for key in keys[:-1]:
        node = node[int(key)] if key.isdigit() else node[key]
    last = keys[-1]
    if last.isdigit():
        node[int(last)] = value
    else:
        node[last] = value
    return doc


BAD_TOPOLOGIES = [
    (
        "min > max",
        mutate("pools.0.scale_targets.0.min_replicas", 9),
        ["pool 'gpu-shared', scale target 'gpu-asg'", "min_replicas"],
    ),
    (
        "negative limit",
        mutate("destinations.0.lanes.0.limit", -1),
        ["destination 'search', lane 'interactive'", "limit"],
    ),
    (
        "non-numeric weight",
        mutate("destinations.0.lanes.1.weight", "heavy"),
        ["lane 'batch'", "weight"],
    ),
    ("zero weight", mutate("destinations.0.lanes.1.weight", 0), ["lane 'batch'", "weight"]),
    ("negative capacity", mutate("pools.1.capacity", -5), ["pool 'quota'", "capacity"]),
    (
        "negative cost",
        mutate("destinations.1.lanes.0.cost", {"llm-quota": -2}),
        ["lane 'live'", "cost"],
    ),
    (
        "duplicate destination",
        mutate("destinations.2.name", "search"),
        ["destination 'search'", "name", "duplicate"],
    ),
    (
        "duplicate pool",
        mutate("pools.1.name", "gpu-shared"),
        ["pool 'gpu-shared'", "name", "duplicate"],
    ),
    (
        "duplicate lane",
        mutate("destinations.0.lanes.1.name", "interactive"),
        ["lane 'interactive'", "duplicate"],
    ),
    (
        "unknown member",
        mutate("pools.0.members", ["search", "ghost"]),
        ["pool 'gpu-shared'", "members", "ghost"],
    ),
    (
        "member does not draw from resource",
        mutate("pools.1.members", ["chat", "search"]),
        ["pool 'quota'", "members", "search", "llm-quota"],
    ),
    (
        "second pool for one resource",
        mutate("pools.1", {"name": "gpu-2", "resource": "gpu", "members": ["chat"]}),
        ["pool 'gpu-2'", "members", "chat", "already in pool 'gpu-shared'"],
    ),
    ("unknown field", mutate("pools.1.capacityy", 3), ["pool 'quota'", "capacityy"]),
    (
        "unknown target kind",
        mutate("pools.0.scale_targets.0.kind", "azure_vmss"),
        ["scale target 'gpu-asg'", "kind"],
    ),
    (
        "missing limit",
        mutate("destinations.2.lanes.0", {"name": "jobs"}),
        ["lane 'jobs'", "limit", "required"],
    ),
    (
        "cost for a resource not drawn",
        mutate("destinations.0.lanes.0.cost", {"tpu": 1}),
        ["lane 'interactive'", "cost.tpu"],
    ),
    ("NaN capacity", mutate("pools.1.capacity", float("nan")), ["pool 'quota'", "capacity"]),
    (
        "standalone name taken",
        mutate("pools.1", {"name": "solo/cpu", "resource": "cpu", "members": []}),
        ["pool 'solo/cpu'", "name", "standalone"],
    ),
]


@pytest.mark.parametrize(
    ("name", "doc", "needles"), BAD_TOPOLOGIES, ids=[c[0] for c in BAD_TOPOLOGIES]
)
def test_bad_topology(tmp_path: Path, name: str, doc: dict[str, Any], needles: list[str]) -> None:
    proc = run(tmp_path, doc, {"lanes": {}}, "--format", "json")
    assert proc.returncode != 0
    assert proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    for needle in needles:
        assert needle in proc.stderr, (needle, proc.stderr)


@pytest.mark.parametrize(
    ("demand", "needles"),
    [
        ({"lanes": {"search/nope": 3}}, ["search/nope", "no such lane"]),
        ({"lanes": {"search/batch": -3}}, ["search/batch", "greater than or equal to 0"]),
        ({"lanes": {"search/batch": "lots"}}, ["search/batch", "number"]),
        ({"lanes": [1, 2]}, ["lanes"]),
        ({"lane": {}}, ["lane"]),
    ],
)
def test_bad_demand(tmp_path: Path, demand: Any, needles: list[str]) -> None:
    proc = run(tmp_path, TOPOLOGY, demand, "--format", "json")
    assert proc.returncode != 0 and proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1
    for needle in needles:
        assert needle in proc.stderr


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("destinations: [\n  {name: x", "(yaml)"),
        ("- just\n- a list\n", "expected a mapping"),
        ("\t:\tbad", "(yaml)"),
    ],
)
def test_malformed_yaml(tmp_path: Path, text: str, needle: str) -> None:
    proc = run(tmp_path, text, {"lanes": {}}, "--format", "json", raw=True)
    assert proc.returncode != 0 and proc.stdout == ""
    assert needle in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_unreadable_file(tmp_path: Path) -> None:
    missing, demand = tmp_path / "missing.yaml", tmp_path / "d.yaml"
    proc = arklow_cli.run(["allocate", "--topology", str(missing), "--demand", str(demand)])
    assert proc.returncode != 0 and proc.stdout == ""
    assert "missing.yaml" in proc.stderr


def test_validate(tmp_path: Path) -> None:
    t = tmp_path / "t.yaml"
    t.write_text(yaml.safe_dump(TOPOLOGY))
    ok = arklow_cli.run(["validate", "--topology", str(t)])
    assert ok.returncode == 0 and ok.stdout.startswith("ok: 3 destinations, 4 lanes, 3 pools")
    t.write_text(yaml.safe_dump(BAD_TOPOLOGIES[0][1]))
    bad = arklow_cli.run(["validate", "--topology", str(t)])
    assert bad.returncode != 0 and "min_replicas" in bad.stderr and bad.stdout == ""


def test_duplicate_yaml_key_is_refused(tmp_path: Path) -> None:
    duplicated = "lanes:\n  search/batch: 3\n  search/batch: 5\n"
    proc = allocate(tmp_path, yaml.safe_dump(TOPOLOGY), duplicated)
    assert proc.returncode != 0 and proc.stdout == ""
    assert (
        "duplicate key 'search/batch'" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    )


def test_empty_yaml_lists_mean_none(tmp_path: Path) -> None:
    text = "destinations:\n  - name: a\n    resources: [gpu]\n    lanes:\npools:\n"
    proc = run(tmp_path, text, {"lanes": None}, "--format", "json", raw=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {
        "lanes": {},
        "pools": {
            "a/gpu": {
                "resource": "gpu",
                "capacity": 0,
                "demand": 0,
                "pressure": 0,
                "state": "idle",
                "desired_replicas": 0,
            }
        },
    }


def run_text(tmp_path: Path, topology: str, demand: str) -> Result:
    return allocate(tmp_path, topology, demand, "--format", "json")


_TARGET = "{kind: aws_asg, name: t, min_replicas: 0, max_replicas: %s, units_per_replica: %s}"
_ONE_POOL = (
    "destinations: [{name: d, resources: [gpu], lanes: [{name: l, limit: %s, cost: {gpu: %s}}]}]\n"
    "pools: [{name: p, resource: gpu, members: [d], scale_targets: [" + _TARGET + "]}]\n"
)

# issue 8, item 5: numbers that passed validation and then crashed or printed Infinity
HOSTILE_INPUTS = [
    ("units_per_replica 1.0e+306", _ONE_POOL % (5, 1, 5, "1.0e+306"), "lanes: {d/l: 3}", ["scale target 't'", "units_per_replica"]),
    ("max_replicas 10**400", _ONE_POOL % (5, 1, 10**400, 1), "lanes: {d/l: 3}", ["scale target 't'", "max_replicas"]),
    ("limit 1e200", _ONE_POOL % ("1.0e+200", 1, 5, 1), "lanes: {d/l: 3}", ["lane 'l'", "limit"]),
    ("cost 1e200", _ONE_POOL % (5, "1.0e+200", 5, 1), "lanes: {d/l: 3}", ["lane 'l'", "cost.gpu"]),
    ("demand 1e200", _ONE_POOL % (5, 1, 5, 1), "lanes: {d/l: 1.0e+200}", ["d/l", "lanes"]),
    ("demand 1e200 in JSON", _ONE_POOL % (5, 1, 5, 1), '{"lanes": {"d/l": 1e200}}', ["d/l", "lanes"]),
    ("integer of 5,000 digits", _ONE_POOL % (5, 1, "9" * 5000, 1), "lanes: {}", ["topology file", "(yaml)"]),
    ("name of 256 characters", (_ONE_POOL % (5, 1, 5, 1)).replace("name: l,", "name: " + "l" * 256 + ","), "lanes: {}", ["lane", "name", "255"]),
    ("name with a control character", (_ONE_POOL % (5, 1, 5, 1)).replace("name: l,", 'name: "l\\a",'), "lanes: {}", ["lane", "name", "printable"]),
    ("deeply nested YAML", "destinations: " + "[" * 3000 + "]" * 3000, "lanes: {}", ["topology file", "(yaml)", "nesting"]),
    ("deeply nested block YAML", "".join(" " * i + "-\n" for i in range(3000)), "lanes: {}", ["topology file", "(yaml)"]),
    ("deeply nested JSON", "[" * 100_000 + "]" * 100_000, "lanes: {}", ["topology file", "nested too deeply"]),
    ("duplicate key in JSON", '{"destinations": [], "destinations": []}', "lanes: {}", ["duplicate key 'destinations'"]),
    ("recursive alias", "destinations: &a [*a]", "lanes: {}", ["destination"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "topology", "demand", "needles"), HOSTILE_INPUTS, ids=[c[0] for c in HOSTILE_INPUTS]
)
def test_hostile_input_is_one_line_exit_2(
    tmp_path: Path, name: str, topology: str, demand: str, needles: list[str]
) -> None:
    proc = run_text(tmp_path, topology, demand)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in proc.stderr, (needle, proc.stderr)


def test_largest_numbers_print_strict_json(tmp_path: Path) -> None:
    """At the documented maxima every output number is finite: strict JSON parses it."""
    proc = run_text(
        tmp_path,
        _ONE_POOL % ("1.0e+12", "1.0e+6", 1_000_000, "1.0e-6"),
        "lanes: {d/l: 1.0e+12}",
    )
    assert proc.returncode == 0, proc.stderr

    def refuse(constant: str) -> None:
        raise AssertionError(f"non-standard JSON constant {constant}")

    doc = json.loads(proc.stdout, parse_constant=refuse)
    assert doc["pools"]["p"]["desired_replicas"] == 1_000_000
    assert doc["lanes"]["d/l"]["allocation"] == 0  # capacity 0: nothing is admitted


def test_json_documents_give_the_same_result_as_yaml(tmp_path: Path) -> None:
    demand = {"lanes": {"search/interactive": 6, "search/batch": 15, "chat/live": 8}}
    as_yaml = run(tmp_path, TOPOLOGY, demand, "--format", "json")
    as_json = run_text(tmp_path, json.dumps(TOPOLOGY), json.dumps(demand))
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout) == json.loads(as_yaml.stdout)


def test_anchors_and_merge_keys_still_read(tmp_path: Path) -> None:
    """Plain documents take the fast reader; merge keys go through PyYAML's constructor."""
    proc = run_text(
        tmp_path,
        "destinations:\n"
        "  - {name: a, resources: [gpu], lanes: [&l {name: x, limit: 4}], "
        "standalone_capacity: &c {gpu: 10}}\n"
        "  - {name: b, resources: [gpu], lanes: [{<<: *l, name: y}], standalone_capacity: *c}\n",
        "lanes: {a/x: 1, b/y: 9}",
    )
    assert proc.returncode == 0, proc.stderr
    lanes = json.loads(proc.stdout)["lanes"]
    assert lanes["a/x"]["admission"] == 4 and lanes["b/y"]["allocation"] == 4
