"""DESIGN.md's ``arklow allocate``, ``arklow simulate`` and ``arklow what-if`` contracts, checked as an
outside acceptance test would: real ``arklow`` processes, small inputs, every figure computed by hand
in the test (tick hours are 1/60 with ``--tick 60``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.arklow_cli import Result, assert_one_line_error, run

H = 1 / 60  # one 60 s tick, in hours
# what the simulate contract lets a policy's JSON add beside its five figures
ADDED = {"pools", "resources"}
ISSUE_8 = """
destinations:
  - {name: p, resources: [gpu], lanes: [{name: l, limit: 8}]}
  - {name: q, resources: [gpu], lanes: [{name: l, limit: 3}]}
  - {name: r, resources: [gpu], lanes: [{name: l, limit: 4}]}
pools:
  - {name: shared, resource: gpu, capacity: CAPACITY, members: [p, q, r]}
"""


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def json_of(result: Result) -> Any:
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    return json.loads(result.stdout)


def allocate(tmp_path: Path, topology: str, demand: str) -> Any:
    topo = write(tmp_path / "topology.yaml", topology)
    dem = write(tmp_path / "demand.yaml", demand)
    args = ["allocate", "--topology", str(topo), "--demand", str(dem), "--format", "json"]
    return json_of(run(args))


def check_allocate_shape(doc: Any) -> None:
    assert set(doc) == {"lanes", "pools"}
    for lane in doc["lanes"].values():
        assert set(lane) == {"demand", "allocation", "held", "admission"}
        assert all(isinstance(v, int | float) for v in lane.values())
    for pool in doc["pools"].values():
        keys = {"resource", "capacity", "demand", "pressure", "state", "desired_replicas"}
        assert set(pool) == keys
        assert isinstance(pool["resource"], str)
        assert pool["state"] in {"idle", "steady", "constrained"}
        assert isinstance(pool["desired_replicas"], int)


@pytest.mark.parametrize(
    ("capacity", "admission"),
    [(10, {"p/l": 6, "q/l": 0, "r/l": 4}), (20, {"p/l": 8, "q/l": 3, "r/l": 4})],
)
def test_allocate_issue_8_admission(
    tmp_path: Path, capacity: int, admission: dict[str, int]
) -> None:
    # Pool 10, demand 2 + 1: 7 units unused. Active lanes first, by weight, capped by limit:
    # p +3.5 → r capped at 4 (+3), p takes the rest (6). q is idle and gets only what no active
    # lane can use: nothing at 10, its whole limit at 20.
    doc = allocate(
        tmp_path, ISSUE_8.replace("CAPACITY", str(capacity)), 'lanes: {"p/l": 2, "r/l": 1}'
    )
    check_allocate_shape(doc)
    assert {k: v["admission"] for k, v in doc["lanes"].items()} == admission
    assert doc["lanes"]["p/l"] == {
        "demand": 2,
        "allocation": 2,
        "held": 0,
        "admission": admission["p/l"],
    }
    assert doc["lanes"]["q/l"]["demand"] == 0  # not listed: demand 0
    pool = doc["pools"]["shared"]
    assert pool["resource"] == "gpu" and pool["capacity"] == capacity and pool["demand"] == 3
    assert pool["pressure"] == pytest.approx(3 / capacity)
    assert pool["state"] == "steady" and pool["desired_replicas"] == 0  # no targets


def test_allocate_static_capacity_plus_target_and_standalone(tmp_path: Path) -> None:
    topology = """
destinations:
  - {name: a, resources: [gpu], lanes: [{name: x, limit: 8}]}
  - {name: b, resources: [gpu], lanes: [{name: y, limit: 4, weight: 1}]}
  - name: c
    resources: [gpu]
    standalone_capacity: {gpu: 5}
    lanes: [{name: z, limit: 10, cost: {gpu: 2}}]
pools:
  - name: shared
    resource: gpu
    capacity: 4
    members: [a, b]
    scale_targets:
      - {kind: aws_asg, name: t, min_replicas: 1, max_replicas: 5, units_per_replica: 4, replicas: 1}
"""
    doc = allocate(tmp_path, topology, 'lanes: {"a/x": 9, "b/y": 4, "c/z": 3}')
    check_allocate_shape(doc)
    # shared: capacity 4 + 1 × 4 = 8; e = 8 + 4 = 12 > 8 → water level 4: b 4 (its e), a 4, held 4.
    assert doc["lanes"]["a/x"] == {"demand": 9, "allocation": 4, "held": 4, "admission": 4}
    assert doc["lanes"]["b/y"] == {"demand": 4, "allocation": 4, "held": 0, "admission": 4}
    shared = doc["pools"]["shared"]
    assert (shared["capacity"], shared["demand"], shared["state"]) == (8, 12, "constrained")
    assert shared["pressure"] == pytest.approx(1.5)
    # needed 12 × 1.1 = 13.2, static 4 covers part: ceil(9.2 / 4) = 3 replicas.
    assert shared["desired_replicas"] == 3
    # c is in its standalone pool "c/gpu", capacity 5, cost 2: e = 3 → 6 units > 5 → 2.5 each.
    standalone = doc["pools"]["c/gpu"]
    assert (standalone["capacity"], standalone["demand"], standalone["state"]) == (
        5,
        6,
        "constrained",
    )
    assert doc["lanes"]["c/z"]["allocation"] == pytest.approx(2.5)
    assert doc["lanes"]["c/z"]["held"] == pytest.approx(0.5)
    assert standalone["desired_replicas"] == 0


def test_allocate_bad_input_is_one_line(tmp_path: Path) -> None:
    bad = ISSUE_8.replace("CAPACITY", "-1")
    topo = write(tmp_path / "t.yaml", bad)
    dem = write(tmp_path / "d.yaml", "lanes: {}")
    result = run(["allocate", "--topology", str(topo), "--demand", str(dem), "--format", "json"])
    assert result.returncode != 0 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and "capacity" in result.stderr


def shared(b_limit: int, sized: str, low: int, high: int, replicas: int) -> str:
    """A topology as a user writes it: ``a/x`` (limit 8) and ``b/y`` in the gpu pool ``shared``
    (``sized``: its capacity or headroom line) with the ASG ``t`` (1 unit a replica)."""
    return f"""
destinations:
  - {{name: a, resources: [gpu], lanes: [{{name: x, limit: 8}}]}}
  - {{name: b, resources: [gpu], lanes: [{{name: y, limit: {b_limit}}}]}}
pools:
  - name: shared
    resource: gpu
    {sized}
    members: [a, b]
    scale_targets:
      - {{kind: aws_asg, name: t, min_replicas: {low}, max_replicas: {high}, units_per_replica: 1, replicas: {replicas}}}
"""


SHARED = shared(5, "capacity: 2", 4, 4, 4)
# Ticks at 0, 60, 120 (the last row's time). e(a) = min(10, 8) = 8, then 2, 2; e(b) = 1, 1, 0.
SHARED_TRACE = "time,lane,demand\n0,a/x,10\n0,b/y,1\n60,a/x,2\n120,b/y,0\n"


def simulate_run(tmp_path: Path, topology: str, trace: str, *extra: str) -> Result:
    topo = write(tmp_path / "topology.yaml", topology)
    csv = write(tmp_path / "trace.csv", trace)
    return run(["simulate", "--topology", str(topo), "--trace", str(csv), *extra])


def simulate(tmp_path: Path, topology: str, trace: str, *extra: str) -> Any:
    return json_of(simulate_run(tmp_path, topology, trace, "--format", "json", *extra))


def check_policy(
    got: dict[str, Any],
    lanes: Mapping[str, tuple[float, float]],
    capacity_units: float,
    replica_hours: float,
    scale_actions: int,
) -> None:
    """``lanes``: lane → (Σ e, Σ served) in unit-ticks; capacity in unit-ticks; cost 1 everywhere."""
    assert (
        set(got)
        == {"served_ratio", "utilization", "replica_hours", "scale_actions", "lanes"} | ADDED
    )
    assert set(got["lanes"]) == set(lanes)
    for name, (demand, served) in lanes.items():
        lane = got["lanes"][name]
        assert set(lane) == {"demand", "served", "held"}
        assert lane["demand"] == pytest.approx(demand * H), name
        assert lane["served"] == pytest.approx(served * H), name
        assert lane["held"] == pytest.approx((demand - served) * H, abs=1e-12), name
        assert lane["served"] + lane["held"] == pytest.approx(lane["demand"])
    total_served = sum(s for _, s in lanes.values())
    assert got["served_ratio"] == pytest.approx(total_served / sum(d for d, _ in lanes.values()))
    assert got["utilization"] == pytest.approx(total_served / capacity_units)
    assert got["replica_hours"] == pytest.approx(replica_hours)
    assert got["scale_actions"] == scale_actions


def test_simulate_four_policies_by_hand(tmp_path: Path) -> None:
    doc = simulate(tmp_path, SHARED, SHARED_TRACE)
    assert set(doc) == {"policies"}
    assert list(doc["policies"]) == ["arklow", "standalone", "free-for-all", "static"]
    # arklow / static: capacity 2 + 4 = 6 each tick. t0: 8 + 1 > 6 → level 5: a 5, b 1.
    # Replicas pinned at 4 (min = max): 4 × 3 ticks, no action.
    for name in ("arklow", "static"):
        check_policy(doc["policies"][name], {"a/x": (12, 9), "b/y": (2, 2)}, 18, 12 * H, 0)
    # standalone: each member gets static 1 and a target share min = max = ceil(4 / 2) = 2 →
    # capacity 3 each. t0: a 3 of 8.
    check_policy(doc["policies"]["standalone"], {"a/x": (12, 7), "b/y": (2, 2)}, 18, 12 * H, 0)
    # free-for-all: one pool of 6 shared in proportion to demand: t0 a 6 × 8/9, b 6 × 1/9.
    ffa = {"a/x": (12, 16 / 3 + 4), "b/y": (2, 2 / 3 + 1)}
    check_policy(doc["policies"]["free-for-all"], ffa, 18, 12 * H, 0)


GROWING = shared(8, "headroom: 0", 1, 3, 1)


def test_simulate_scaling_with_launch_delay_and_standalone_split(tmp_path: Path) -> None:
    # Ticks 0..240. a asks 8 throughout, b nothing. Launch delay 120: replicas asked at t = 0 are
    # in service from t = 120 and are pending (not capacity) before.
    trace = "time,lane,demand\n0,a/x,8\n240,a/x,8\n"
    doc = simulate(tmp_path, GROWING, trace, "--policies", "arklow,standalone,static")
    assert list(doc["policies"]) == ["arklow", "standalone", "static"]
    # arklow: needed 8 → up at once, bounded by max 3: 1, 1, 3, 3, 3 in service and served.
    check_policy(doc["policies"]["arklow"], {"a/x": (40, 11), "b/y": (0, 0)}, 11, 11 * H, 1)
    # standalone: shares min ceil(1/2) = 1, max ceil(3/2) = 2, starting at ceil(1/2) = 1 each;
    # a's share goes to 2 (one action), b's stays at its min 1.
    check_policy(doc["policies"]["standalone"], {"a/x": (40, 8), "b/y": (0, 0)}, 13, 13 * H, 1)
    # static: frozen at 1 replica.
    check_policy(doc["policies"]["static"], {"a/x": (40, 5), "b/y": (0, 0)}, 5, 5 * H, 0)


BEFORE = shared(8, "capacity: 4", 2, 2, 2)
AFTER = BEFORE.replace("members: [a, b]", "members: [b]").replace(
    "resources: [gpu], lanes: [{name: x",
    "resources: [gpu], standalone_capacity: {gpu: 1}, lanes: [{name: x",
)
WHATIF_TRACE = "time,lane,demand\n0,a/x,4\n0,b/y,1\n60,a/x,4\n"


def what_if(tmp_path: Path, *extra: str, trace: str = WHATIF_TRACE) -> Result:
    before = write(tmp_path / "before.yaml", BEFORE)
    after = write(tmp_path / "after.yaml", AFTER)
    csv = write(tmp_path / "trace.csv", trace)
    args = ["what-if", "--before", str(before), "--after", str(after), "--trace", str(csv)]
    return run([*args, *extra])


def test_what_if_by_hand(tmp_path: Path) -> None:
    doc = json_of(what_if(tmp_path, "--format", "json"))
    # The contract's keys; the product adds "new_lanes" and "removed_lanes" (docs/simulate.md).
    assert {"lanes", "pools", "flagged"} <= set(doc)
    # Before: pool of 6 serves a 4 + b 1 on both ticks. After: a alone in a/gpu with 1 unit.
    assert doc["lanes"]["a/x"] == pytest.approx(
        {"demand": 8 * H, "held_before": 0, "held_after": 6 * H}
    )
    assert doc["lanes"]["b/y"] == pytest.approx(
        {"demand": 2 * H, "held_before": 0, "held_after": 0}
    )
    assert doc["flagged"] == ["a/x"]  # held share 0 → 0.75
    shared = doc["pools"]["shared"]
    assert set(shared) == {
        "replica_hours_before",
        "replica_hours_after",
        "peak_replicas_before",
        "peak_replicas_after",
    }
    assert shared == pytest.approx(
        {
            "replica_hours_before": 4 * H,
            "replica_hours_after": 4 * H,
            "peak_replicas_before": 2,
            "peak_replicas_after": 2,
        }
    )
    one_sided = doc["pools"]["a/gpu"]
    assert one_sided["replica_hours_before"] is None and one_sided["peak_replicas_before"] is None
    assert one_sided["replica_hours_after"] == 0 and one_sided["peak_replicas_after"] == 0


def test_what_if_threshold_and_fail_on_flag(tmp_path: Path) -> None:
    quiet = json_of(what_if(tmp_path, "--format", "json", "--threshold", "0.8"))
    assert quiet["flagged"] == []  # 0.75 is not more than 0.8
    failing = what_if(tmp_path, "--format", "json", "--fail-on-flag")
    assert failing.returncode == 3, failing.stderr
    assert json.loads(failing.stdout)["flagged"] == ["a/x"]  # printed either way
    markdown = what_if(tmp_path, "--format", "markdown")
    assert markdown.returncode == 0 and "a/x" in markdown.stdout


@pytest.mark.parametrize(
    ("trace", "extra"),
    [
        ("time,lane,demand\n60,a/x,1\n0,a/x,2\n", ()),  # rows not sorted by time
        ("time,lane,demand\n0,nobody/x,1\n", ()),  # unknown lane
        (WHATIF_TRACE, ("--threshold", "-0.1")),
    ],
)
def test_what_if_bad_input_is_exit_2_one_line(
    tmp_path: Path, trace: str, extra: tuple[str, ...]
) -> None:
    assert_one_line_error(what_if(tmp_path, "--format", "json", *extra, trace=trace))


@pytest.mark.parametrize(
    "trace",
    ["lane,time,demand\n", "time,lane,demand\n0,a/x,nan\n"],
)
def test_simulate_bad_input_is_exit_2_one_line(tmp_path: Path, trace: str) -> None:
    assert_one_line_error(simulate_run(tmp_path, SHARED, trace))


MANY_POOLS = """
destinations:
  - {name: a, resources: [gpu, cpu], lanes: [{name: l, limit: 10}]}
  - {name: b, resources: [gpu], lanes: [{name: l, limit: 10}]}
  - {name: c, resources: [cpu], lanes: [{name: l, limit: 10}]}
  - name: w
    resources: [disk]
    lanes:
      - {name: hi, limit: 10, weight: 3}
      - {name: lo, limit: 10}
      - {name: small, limit: 10, weight: 3}
  - {name: z, resources: [tpu], lanes: [{name: l, limit: 5}]}
  - {name: e, resources: [mem], lanes: [{name: l, limit: 5}]}
pools:
  - {name: g, resource: gpu, capacity: 4, members: [a, b]}
  - {name: c, resource: cpu, capacity: 10, members: [a, c]}
  - {name: d, resource: disk, capacity: 10, members: [w]}
  - name: empty
    resource: gpu
    members: []
    scale_targets:
      - {kind: aws_asg, name: t, min_replicas: 2, max_replicas: 5, units_per_replica: 1, replicas: 3}
  - name: two
    resource: mem
    members: [e]
    headroom: 0
    scale_targets:
      - {kind: aws_asg, name: t1, min_replicas: 0, max_replicas: 5, units_per_replica: 1, replicas: 0}
      - {kind: aws_asg, name: t2, min_replicas: 0, max_replicas: 5, units_per_replica: 1, replicas: 0}
"""


def test_allocate_progressive_filling_weights_and_scale_decision(tmp_path: Path) -> None:
    demand = 'lanes: {"a/l": 10, "b/l": 10, "c/l": 10, "w/hi": 10, "w/lo": 10, "w/small": 1, '
    demand += '"z/l": 3, "e/l": 5}'
    doc = allocate(tmp_path, MANY_POOLS, demand)
    check_allocate_shape(doc)
    got = {k: v["allocation"] for k, v in doc["lanes"].items()}
    # All pools at once: g saturates at level 2 (a 2, b 2); c then rises alone to 10 - 2 = 8.
    # d by weight: small freezes at 1; 3L + L + 1 = 10 → L = 2.25: hi 6.75, lo 2.25.
    expected = {"a/l": 2, "b/l": 2, "c/l": 8, "w/hi": 6.75, "w/lo": 2.25, "w/small": 1}
    assert got == pytest.approx({**expected, "z/l": 0, "e/l": 0})
    # Constrained pools add nothing at admission.
    assert {k: v["admission"] for k, v in doc["lanes"].items()} == pytest.approx(got)
    pools = doc["pools"]
    assert (pools["g"]["pressure"], pools["c"]["pressure"]) == (5, 2)
    # No members: idle, pressure 0, targets settle to min.
    empty = pools["empty"]
    assert (empty["state"], empty["pressure"], empty["desired_replicas"]) == ("idle", 0, 2)
    # Capacity 0 with demand: pressure null, constrained.
    assert (pools["z/tpu"]["pressure"], pools["z/tpu"]["state"]) == (None, "constrained")
    # needed 5 (headroom 0) → ceil(5 / 1) = 5 replicas split across two targets: 3 + 2.
    assert pools["two"]["desired_replicas"] == 5


SHRINKING = """
destinations:
  - {name: a, resources: [gpu], lanes: [{name: x, limit: 20}]}
pools:
  - name: p
    resource: gpu
    headroom: 0
    members: [a]
    scale_targets:
      - {kind: aws_asg, name: t, min_replicas: 1, max_replicas: 20, units_per_replica: 1, replicas: 10}
"""


def test_simulate_scale_down_window_and_step(tmp_path: Path) -> None:
    # Ticks 0..600. t0: 10 needed, 10 supplied: no change. From t60 the recommendation is 2, but
    # the 300 s window (closed) still holds t0's 10 until t300; at t360 down to 2 in one step
    # (max_step_down_percent 100, the default): one action. A tick's replicas are those before
    # its decision.
    trace = "time,lane,demand\n0,a/x,10\n60,a/x,2\n600,a/x,2\n"
    doc = simulate(tmp_path, SHRINKING, trace, "--policies", "arklow")
    replicas = [10] * 7 + [2] * 4
    check_policy(doc["policies"]["arklow"], {"a/x": (30, 30)}, sum(replicas), 78 * H, 1)
