"""``admission=False`` (the simulator's mode) skips only the admission fillings: allocation, held,
pool results and every target decision are the same as with the default."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arklow_pulumi.core.allocating import allocate
from arklow_pulumi.core.deciding import Observed, Recommendation, TargetId, decide
from arklow_pulumi.reading.parsing import parse_topology
from arklow_pulumi.reading.spec import build_topology
from tests.core.test_allocation_properties import Case, cases
from tests.hypothesis_profiles import examples


def with_targets(doc: dict[str, Any], replicas: list[int]) -> dict[str, Any]:
    """Every other pool gets one scale target starting at ``replicas[p]``."""
    out = copy.deepcopy(doc)
    for p, pool in enumerate(out["pools"]):
        if p % 2 == 0:
            pool["scale_targets"] = [
                {
                    "kind": "aws_asg",
                    "name": f"{pool['name']}-asg",
                    "region": "us-east-1",
                    "min_replicas": 0,
                    "max_replicas": 20,
                    "units_per_replica": 4.0,
                    "replicas": replicas[p % len(replicas)],
                }
            ]
    return out


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_allocate_without_admission_matches_the_default(case: Case) -> None:
    topo = build_topology(parse_topology(case.doc))
    full = allocate(topo, case.demand)
    fast = allocate(topo, case.demand, admission=False)
    assert list(fast.lanes) == list(full.lanes)
    for key in full.lanes:
        a, b = full.lanes[key], fast.lanes[key]
        assert (b.demand, b.allocation, b.held) == (a.demand, a.allocation, a.held), key
        assert b.admission == b.allocation, key
    assert fast.pools == full.pools


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cases(),
    st.lists(st.integers(0, 20), min_size=1, max_size=4),
    st.lists(st.integers(0, 20), min_size=0, max_size=5),
    st.integers(0, 5),
)
def test_decide_without_admission_matches_the_default(
    case: Case, replicas: list[int], past: list[int], pending: int
) -> None:
    topo = build_topology(parse_topology(with_targets(case.doc, replicas)))
    ids = [TargetId(p.name, t.name) for p in topo.pools.values() for t in p.scale_targets]
    observed = {tid: Observed(in_service=replicas[0], pending=pending) for tid in ids}
    history = {
        tid: [Recommendation(at=60.0 * k, replicas=r) for k, r in enumerate(past)] for tid in ids
    }
    now = 60.0 * len(past)
    full = decide(topo, case.demand, observed, history, now)
    fast = decide(topo, case.demand, observed, history, now, admission=False)
    assert fast.targets == full.targets
    assert fast.allocation.pools == full.allocation.pools
    for key in full.allocation.lanes:
        a, b = full.allocation.lanes[key], fast.allocation.lanes[key]
        assert (b.allocation, b.held) == (a.allocation, a.held), key
