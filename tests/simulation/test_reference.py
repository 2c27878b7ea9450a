"""The simulator against a plain replay of the documented clock (tests/simulation/
reference_simulation.py): every figure of every lane and pool, on random small topologies and
traces, under ``arklow`` and ``single-tick``, and across a ``--change-at`` switch.

The simulator reuses a unit's decision while its demand, its groups' observations and each
target's highest recommendation in the scale-down window are unchanged, skips settled units
and decides units in batches; the reference decides everything on every tick. Equal figures
mean the reuse is honest: a decision depends on nothing outside that key.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arklow_pulumi.core.topology import Topology
from arklow_pulumi.simulation.policies import FAIR, SINGLE_TICK
from arklow_pulumi.simulation.simulating import Scenario, run, switch_tick
from arklow_pulumi.simulation.tracing import parse_trace
from tests.builders import topo
from tests.hypothesis_profiles import examples
from tests.simulation.reference_simulation import Figures, replay

RESOURCES = ("cpu", "gpu")


@st.composite
def topologies(draw: st.DrawFn, names: list[str] | None = None) -> dict[str, Any]:
    """1-4 destinations of 1-2 lanes on one or both resources; per resource, the destinations
    split into up to two shared pools (a destination left out stays standalone), each with
    static capacity and 0-2 targets of their own scale policy."""
    count = draw(st.integers(1, 4))
    destinations = []
    for d in range(count):
        resources = draw(st.sampled_from([["cpu"], ["gpu"], ["cpu", "gpu"]]))
        lanes = [
            {
                "name": f"l{i}",
                "limit": draw(st.sampled_from([0, 2, 5, 8, 20])),
                "weight": draw(st.sampled_from([1, 2])),
                "cost": {r: draw(st.sampled_from([0.5, 1, 3])) for r in resources},
            }
            for i in range(draw(st.integers(1, 2)))
        ]
        standalone = {r: draw(st.sampled_from([0, 3])) for r in resources}
        destinations.append(
            {
                "name": f"d{d}",
                "resources": resources,
                "lanes": lanes,
                "standalone_capacity": standalone,
            }
        )
    pools = []
    for resource in RESOURCES:
        users = [d["name"] for d in destinations if resource in d["resources"]]
        groups: dict[int, list[str]] = {}
        for user in users:
            groups.setdefault(draw(st.integers(0, 2)), []).append(user)  # 2: standalone
        for g, members in sorted(groups.items()):
            if g < 2:
                pools.append(pool_document(draw, f"{resource}-{g}", resource, members))
    return {"destinations": destinations, "pools": pools}


def pool_document(draw: st.DrawFn, name: str, resource: str, members: list[str]) -> dict[str, Any]:
    targets = []
    for t in range(draw(st.integers(0, 2))):
        low = draw(st.integers(0, 2))
        high = low + draw(st.integers(0, 4))
        targets.append(
            {
                "kind": "aws_asg",
                "name": f"{name}-t{t}",
                "region": "us-east-1",
                "min_replicas": low,
                "max_replicas": high,
                "units_per_replica": draw(st.sampled_from([1, 2, 4])),
                "replicas": draw(st.integers(low, high)),
            }
        )
    return {
        "name": name,
        "resource": resource,
        "members": members,
        "capacity": draw(st.sampled_from([0, 2, 6])),
        "headroom": draw(st.sampled_from([0, 0.1, 0.5])),
        "scale_targets": targets,
        "scale_policy": {
            "scale_down_window_s": draw(st.sampled_from([0, 60, 300])),
            "tolerance": draw(st.sampled_from([0, 0.1])),
        },
    }


@st.composite
def traces(draw: st.DrawFn, lanes: list[str]) -> list[tuple[float, str, float]]:
    """Rows in the first 400 s, then a quiet stretch to 1200 s (each lane's demand holds, or
    drops to 0 at a random time): long enough for every scale-down window to pass."""
    times = sorted(draw(st.lists(st.sampled_from(range(0, 401, 45)), min_size=1, max_size=8)))
    rows = [
        (t, draw(st.sampled_from(lanes)), draw(st.sampled_from([0, 1, 4, 9, 30]))) for t in times
    ]
    drop = draw(st.sampled_from([405, 600, 900]))
    rows += [(drop, lane, 0) for lane in lanes if draw(st.booleans())]
    return [*rows, (1200, lanes[0], rows[-1][2] if rows[-1][1] == lanes[0] else 0)]


def mutated(draw: st.DrawFn, doc: dict[str, Any]) -> dict[str, Any]:
    """The same topology with targets' bounds, a headroom and a target changed."""
    after = {"destinations": doc["destinations"], "pools": [dict(p) for p in doc["pools"]]}
    for p in after["pools"]:
        p["scale_targets"] = [dict(t) for t in p["scale_targets"]]
        for t in p["scale_targets"]:
            if draw(st.booleans()):
                t["max_replicas"] = t["min_replicas"] + draw(st.integers(0, 6))
                t["replicas"] = t["min_replicas"]
        if draw(st.booleans()):
            p["headroom"] = 0.3
        if draw(st.booleans()):
            p["scale_targets"].append(
                {
                    "kind": "aws_asg",
                    "name": f"{p['name']}-new",
                    "region": "us-east-1",
                    "min_replicas": 0,
                    "max_replicas": 3,
                    "units_per_replica": 2,
                    "replicas": 1,
                }
            )
    return after


def build(doc: dict[str, Any]) -> Topology:
    return topo(doc["destinations"], doc["pools"])


def compare(got: Any, want: Figures, hours: float, tick: float) -> None:
    approx = {"rel": 1e-9, "abs": 1e-9}
    assert set(got.lanes) == set(want.lanes)
    for key, (e, alloc, admit) in want.lanes.items():
        lane = got.lanes[key]
        assert lane.demand == pytest.approx(e * hours, **approx), key
        assert lane.served == pytest.approx(alloc * hours, **approx), key
        assert lane.admitted == pytest.approx(admit * hours, **approx), key
    assert set(got.pools) == set(want.pools)
    for name, figures in want.pools.items():
        capacity, demand, served, admitted, replicas, at_max, constrained, peak = figures
        pool = got.pools[name]
        assert pool.capacity_hours == pytest.approx(capacity * hours, **approx), name
        assert pool.demand_hours == pytest.approx(demand * hours, **approx), name
        assert pool.served_hours == pytest.approx(served * hours, **approx), name
        assert pool.admitted_hours == pytest.approx(admitted * hours, **approx), name
        assert pool.replica_hours == pytest.approx(replicas * hours, **approx), name
        assert pool.time_at_max_s == pytest.approx(at_max * tick), name
        assert pool.constrained_ticks == constrained, name
        assert pool.peak_replicas == peak, name
    assert got.scale_actions == want.actions
    assert set(got.resources) == set(want.resources)
    for name, (at_max, constrained, peak) in want.resources.items():
        resource = got.resources[name]
        mine = [p for p in got.pools.values() if p.resource == name]
        assert resource.time_at_max_s == pytest.approx(at_max * tick), name
        assert resource.constrained_ticks == constrained, name
        assert resource.peak_replicas == peak, name
        for figure in ("capacity_hours", "demand_hours", "served_hours", "replica_hours"):
            total = sum(getattr(p, figure) for p in mine)
            assert getattr(resource, figure) == pytest.approx(total, **approx), (name, figure)


# Each example simulates a trace under several policies and replays it: 100 take minutes (more on
# a busy machine), so the dev profile runs a tenth, and the tests have a longer limit.
SETTINGS = settings(
    max_examples=examples(100, dev=10),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)


@pytest.mark.timeout(1200)
@SETTINGS
@given(st.data())
def test_simulator_is_the_documented_clock(data: st.DataObject) -> None:
    doc = data.draw(topologies())
    t = build(doc)
    rows = data.draw(traces(list(t.lanes_by_key)))
    tick = data.draw(st.sampled_from([30.0, 60.0, 90.0]))
    delay = data.draw(st.sampled_from([0.0, 60.0, 120.0]))
    trace = parse_trace(["time,lane,demand", *(f"{a},{b},{c}" for a, b, c in rows)])
    results = run(
        {"arklow": (t, FAIR), "single-tick": (t, SINGLE_TICK)}, trace, tick, delay, jobs=1
    )
    hours = tick / 3600
    compare(results["arklow"], replay(t, rows, tick, delay), hours, tick)
    compare(results["single-tick"], replay(t, rows, tick, delay, single_tick=True), hours, tick)


@pytest.mark.timeout(1200)
@SETTINGS
@given(st.data())
def test_change_at_is_the_documented_switch(data: st.DataObject) -> None:
    doc = data.draw(topologies())
    before = build(doc)
    after = build(mutated(data.draw, doc))
    rows = data.draw(traces(list(before.lanes_by_key)))
    tick = data.draw(st.sampled_from([30.0, 60.0]))
    delay = data.draw(st.sampled_from([0.0, 120.0]))
    at = data.draw(st.sampled_from([0.0, 100.0, 300.0, 600.0]))
    trace = parse_trace(["time,lane,demand", *(f"{a},{b},{c}" for a, b, c in rows)])
    scenarios = {"before": Scenario(before), "after": Scenario(before, then=after, at=at)}
    results = run(scenarios, trace, tick, delay, jobs=1)
    want = replay(before, rows, tick, delay, then=after, at=switch_tick(at, tick))
    compare(results["after"], want, tick / 3600, tick)
    compare(results["before"], replay(before, rows, tick, delay), tick / 3600, tick)
