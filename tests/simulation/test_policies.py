"""Each policy and each JSON figure of ``arklow simulate``, against values computed by hand.

Case A (tick 60 s, launch delay 120 s, so one tick is 1/60 h): destinations a (lane x, limit 10)
and b (lane y, limit 10) share pool gpu, whose target asg has min 0, max 4, 2 units per replica
and starts at 2 replicas (4 units); no static capacity, headroom 0.1. Demand a/x = 8 and b/y = 1
from t = 0, a/x = 0 from t = 300: six ticks, t = 0 … 300.

arklow: t0 capacity 4, fair: b 1, a 3. Needed 9 × 1.1 = 9.9 units → ⌈4.95⌉ = 5, clamped to 4;
supplied 4 units is out of tolerance, so 2 → 4 (one scale action), 2 replicas pending until
t = 120. t60 as t0. t120–t240 capacity 8: a 7, b 1. t300: a 0, b 1; the window still holds 4s,
so no scale-down. a: demand 40, served 3+3+7+7+7 = 27; b: demand 6, served 6 (unit-ticks).
In service 2,2,4,4,4,4 = 20 replica-ticks; capacity 4,4,8,8,8,8 = 40.

standalone: asg splits into asg@a and asg@b, each min 0, max ⌈4/2⌉ = 2, starting ⌈2/2⌉ = 1.
a: t0 capacity 2 → served 2; needs 8.8 units → 5, clamped to 2: 1 → 2 (one action), in service
from t120: served 2,2,4,4,4 = 16. b: capacity 2, needs 1.1 units → 1 replica = current: served 6.
Replicas a 1,1,2,2,2,2 + b 1 × 6 = 16; capacity 20 + 12 = 32.

free-for-all: one pool, capacity in proportion to demand: t0, t60 4/9 of e; t120–t240 8/9;
t300 all of b's 1. Scaling as arklow's (same pool demand). a served 2 × 32/9 + 3 × 64/9 = 256/9,
b served 2 × 4/9 + 3 × 8/9 + 1 = 41/9.

static: frozen at 2 replicas (4 units): a 3 at t0–t240, b 1 always: a 15, b 6; no action.

single-tick: as arklow up to t240 (2 → 4 at t0: the single-tick decision is 4 too); at t300 it
drops straight to 1 (1.1 units needed), a second scale action (the figures of t300 are made
before the resize).

static-peak: the pool's peak demand is 9 (t0–t240): 9.9 units → 5 replicas, clamped to max 4;
frozen at 4 from the start (8 units): a 7 at t0–t240 = 35, b 6; 24 replica-ticks, 48 unit-ticks,
no action (the first tick compares with the starting 4).

standalone-sized: as standalone, but asg@a's max is the sizing of a's own peak (8 → 8.8 units →
5 replicas) and asg@b's of b's (1 → 1.1 → 1). a starts at 1 replica with work held: straight to
5 (one action), in service from t120: a served 2, 2, 10 capped at 8 × 3 = 28; b 1 × 6. Replicas
a 1,1,5,5,5,5 + b 1 × 6 = 28; capacity 44 + 12 = 56.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.builders import dest, lane
from tests.simulation.running import simulate_json, write_topology, write_trace

TICK_H = 1 / 60

CASE_A: dict[str, Any] = {
    "destinations": [
        {"name": "a", "resources": ["gpu"], "lanes": [{"name": "x", "limit": 10}]},
        {"name": "b", "resources": ["gpu"], "lanes": [{"name": "y", "limit": 10}]},
    ],
    "pools": [
        {
            "name": "gpu",
            "resource": "gpu",
            "members": ["a", "b"],
            "scale_targets": [
                {
                    "kind": "aws_asg",
                    "name": "asg",
                    "region": "us-east-1",
                    "min_replicas": 0,
                    "max_replicas": 4,
                    "units_per_replica": 2,
                    "replicas": 2,
                }
            ],
        }
    ],
}
TRACE_A = [(0, "a/x", 8), (0, "b/y", 1), (300, "a/x", 0)]

# policy -> (served a, served b, replica-ticks, capacity unit-ticks, scale actions), in ticks
EXPECTED_A = {
    "arklow": (27, 6, 20, 40, 1),
    "standalone": (16, 6, 16, 32, 1),
    "free-for-all": (256 / 9, 41 / 9, 20, 40, 1),
    "static": (15, 6, 12, 24, 0),
    "single-tick": (27, 6, 20, 40, 2),
    "static-peak": (35, 6, 24, 48, 0),
    "standalone-sized": (28, 6, 28, 56, 1),
}
FIGURES = {"served_ratio", "utilization", "replica_hours", "scale_actions", "lanes"}
ADDED = {"pools", "resources"}


@pytest.fixture(scope="module")
def case_a(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("case_a")
    topo = write_topology(tmp / "t.yaml", CASE_A)
    trace = write_trace(tmp / "trace.csv", TRACE_A)
    return simulate_json(topo, trace, "--policies", "all")


@pytest.mark.parametrize("policy", list(EXPECTED_A))
def test_case_a_figures(case_a: dict[str, Any], policy: str) -> None:
    served_a, served_b, replica_ticks, capacity_ticks, actions = EXPECTED_A[policy]
    got = case_a["policies"][policy]
    assert set(got) == FIGURES | ADDED  # the contract's figures, and the added ones
    assert {k: v for k, v in got["lanes"]["a/x"].items() if k != "admitted"} == {
        "demand": pytest.approx(40 * TICK_H),
        "served": pytest.approx(served_a * TICK_H),
        "held": pytest.approx((40 - served_a) * TICK_H),
    }
    assert {k: v for k, v in got["lanes"]["b/y"].items() if k != "admitted"} == {
        "demand": pytest.approx(6 * TICK_H),
        "served": pytest.approx(served_b * TICK_H),
        "held": pytest.approx((6 - served_b) * TICK_H, abs=1e-12),
    }
    served = served_a + served_b
    assert got["served_ratio"] == pytest.approx(served / 46)
    assert got["utilization"] == pytest.approx(served / capacity_ticks)
    assert got["replica_hours"] == pytest.approx(replica_ticks * TICK_H)
    assert got["scale_actions"] == actions


def test_case_a_arklow_pool_and_resource(case_a: dict[str, Any]) -> None:
    """The pool gpu under arklow, tick by tick (t0 … t300): capacity 4, 4, 8, 8, 8, 8; demand
    9 × 5 then 1; served 4, 4, 8, 8, 8, 1; in service 2, 2, 4, 4, 4, 4 (max 4 from t120: 4 ticks
    at max); constrained while demand passes capacity (t0–t240: 5 ticks). Admitted: a
    constrained pool admits its allocation; at t300 b (active, limit 10) may take the 7 unused
    units as well: 8, so the pool admits 4 + 4 + 8 × 4 = 40 unit-ticks; a/x 27, b/y 5 + 8 = 13."""
    got = case_a["policies"]["arklow"]
    pool = {
        "resource": "gpu",
        "capacity": 40 * TICK_H,
        "demand": 46 * TICK_H,
        "served": 33 * TICK_H,
        "held": 13 * TICK_H,
        "admitted": 40 * TICK_H,
        "utilization": 33 / 40,
        "replica_hours": 20 * TICK_H,
        "peak_replicas": 4,
        "time_at_max_s": 4 * 60,
        "constrained_ticks": 5,
    }
    # each tick's decision has a reason: held work takes it to its max (2 → 4) and keeps it
    # there (at-max, 5 ticks); at t300 the need falls, but the up of t60 still guards its window
    assert got["pools"]["gpu"].pop("reasons") == {"at-max": 5, "no-reversal": 1}
    assert got["pools"] == {"gpu": pytest.approx(pool)}
    del pool["resource"]
    assert got["resources"] == {"gpu": pytest.approx(pool)}
    # a lane's object keeps exactly the contract's three figures; its admission is the pool's
    assert all(set(lane) == {"demand", "served", "held"} for lane in got["lanes"].values())


def test_case_a_static_is_always_at_max(case_a: dict[str, Any]) -> None:
    """Frozen at 2 replicas (min = max = 2): at its max on all 6 ticks; demand 9 passes its 4
    units on t0–t240 (5 constrained ticks), 1 at t300 does not."""
    pool = case_a["policies"]["static"]["pools"]["gpu"]
    assert pool["time_at_max_s"] == 6 * 60
    assert pool["constrained_ticks"] == 5
    assert pool["peak_replicas"] == 2


def test_case_a_standalone_sized_bounds(case_a: dict[str, Any]) -> None:
    """Each member's own pool, its share's max sized for its own peak: a reaches 5 replicas
    (standalone's share stops at 2), b stays at 1."""
    pools = case_a["policies"]["standalone-sized"]["pools"]
    assert pools["a/gpu"]["peak_replicas"] == 5
    assert pools["b/gpu"]["peak_replicas"] == 1
    assert case_a["policies"]["standalone"]["pools"]["a/gpu"]["peak_replicas"] == 2


def test_policies_in_the_order_asked(tmp_path: Path) -> None:
    topo = write_topology(tmp_path / "t.yaml", CASE_A)
    trace = write_trace(tmp_path / "trace.csv", TRACE_A)
    doc = simulate_json(topo, trace, "--policies", "static,arklow")
    assert list(doc["policies"]) == ["static", "arklow"]
    assert doc["policies"]["arklow"]["scale_actions"] == 1


# Case B: static capacity only, one tick of one hour (figures are units). Pool p1 (capacity 6) is
# shared by a and b; c is standalone with 2 units. Demand a 5, b 1, c 4.
CASE_B: dict[str, Any] = {
    "destinations": [
        {"name": "a", "resources": ["gpu"], "lanes": [{"name": "x", "limit": 10}]},
        {"name": "b", "resources": ["gpu"], "lanes": [{"name": "y", "limit": 10}]},
        {
            "name": "c",
            "resources": ["gpu"],
            "standalone_capacity": {"gpu": 2},
            "lanes": [{"name": "z", "limit": 10}],
        },
    ],
    "pools": [{"name": "p1", "resource": "gpu", "capacity": 6, "members": ["a", "b"]}],
}
# policy -> served a, b, c; capacity 8 under every policy
EXPECTED_B = {
    "arklow": (5, 1, 2),  # p1 covers a and b; c has 2
    "standalone": (3, 1, 2),  # p1 split evenly: a 3, b 3
    "free-for-all": (4, 0.8, 3.2),  # one pool of 8 for demand 10: everyone gets 80%
    "static": (5, 1, 2),
}


@pytest.mark.parametrize("policy", list(EXPECTED_B))
def test_static_capacity_split_and_merge(tmp_path: Path, policy: str) -> None:
    topo = write_topology(tmp_path / "t.yaml", CASE_B)
    trace = write_trace(tmp_path / "trace.csv", [(0, "a/x", 5), (0, "b/y", 1), (0, "c/z", 4)])
    doc = simulate_json(topo, trace, "--tick", "3600", "--policies", policy)
    got = doc["policies"][policy]
    served = EXPECTED_B[policy]
    for key, demand, s in zip(["a/x", "b/y", "c/z"], [5, 1, 4], served, strict=True):
        assert got["lanes"][key]["served"] == pytest.approx(s)
        assert got["lanes"][key]["held"] == pytest.approx(demand - s, abs=1e-12)
    assert got["utilization"] == pytest.approx(sum(served) / 8)
    assert got["replica_hours"] == 0
    assert got["scale_actions"] == 0


def test_demand_above_limit_is_not_counted(tmp_path: Path) -> None:
    doc_topo = {"destinations": [dest("a", ["cpu"], lane("x", 4), cpu=10)]}
    topo = write_topology(tmp_path / "t.yaml", doc_topo)
    trace = write_trace(tmp_path / "trace.csv", [(0, "a/x", 50), (7200, "a/x", 50)])
    doc = simulate_json(topo, trace, "--tick", "3600", "--policies", "arklow")
    # ticks at 0, 1 h, 2 h: e = min(50, 4) = 4 each
    assert doc["policies"]["arklow"]["lanes"]["a/x"] == {"demand": 12, "served": 12, "held": 0}
    # admission is capped by the limit, 4 a tick, though the pool has 10
    assert doc["policies"]["arklow"]["pools"]["a/cpu"]["admitted"] == 12
    assert doc["policies"]["arklow"]["served_ratio"] == 1
    assert doc["policies"]["arklow"]["utilization"] == pytest.approx(12 / 30)


def test_resource_figures_over_two_pools(tmp_path: Path) -> None:
    """Pool p (2 units, no target) serves dp/x (demand 3); pool q (target t, 1 to 2 replicas of
    1 unit, starting at 1) serves dq/y (demand 2, then 0 from 2 h). Ticks of an hour, launch
    delay 0, t = 0 … 3 h. q: t0 holds work (2 on 1 unit): straight to 2 (its max), in service
    from 1 h; at 2 h idle, down to 1 (the window has passed). So q is at its max at 1 h and 2 h
    and constrained at 0 h only; p, which cannot grow, is at its max and constrained on all
    four ticks. The resource is at its max only when both are (1 h, 2 h), constrained when
    either is (all four)."""
    doc_topo = {
        "destinations": [
            {"name": "dp", "resources": ["cpu"], "lanes": [{"name": "x", "limit": 10}]},
            {"name": "dq", "resources": ["cpu"], "lanes": [{"name": "y", "limit": 10}]},
        ],
        "pools": [
            {"name": "p", "resource": "cpu", "capacity": 2, "members": ["dp"]},
            {
                "name": "q",
                "resource": "cpu",
                "members": ["dq"],
                "scale_targets": [
                    {
                        "kind": "aws_asg",
                        "name": "t",
                        "region": "us-east-1",
                        "min_replicas": 1,
                        "max_replicas": 2,
                        "units_per_replica": 1,
                        "replicas": 1,
                    }
                ],
            },
        ],
    }
    topo = write_topology(tmp_path / "t.yaml", doc_topo)
    rows = [(0, "dp/x", 3), (0, "dq/y", 2), (7200, "dq/y", 0), (10800, "dq/y", 0)]
    trace = write_trace(tmp_path / "trace.csv", rows)
    doc = simulate_json(
        topo, trace, "--tick", "3600", "--launch-delay", "0", "--policies", "arklow"
    )["policies"]["arklow"]
    p, q, cpu = doc["pools"]["p"], doc["pools"]["q"], doc["resources"]["cpu"]
    assert (p["time_at_max_s"], p["constrained_ticks"], p["peak_replicas"]) == (14400, 4, 0)
    assert (q["time_at_max_s"], q["constrained_ticks"], q["peak_replicas"]) == (7200, 1, 2)
    assert (cpu["time_at_max_s"], cpu["constrained_ticks"], cpu["peak_replicas"]) == (7200, 4, 2)
    assert q["replica_hours"] == cpu["replica_hours"] == 6
    assert cpu["capacity"] == p["capacity"] + q["capacity"] == 8 + 6
    assert cpu["served"] == 2 * 4 + (1 + 2)
    assert cpu["utilization"] == pytest.approx(11 / 14)
