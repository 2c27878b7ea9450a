"""``decide`` works out a pool's only target itself (most pools have one); its decision must be
the general per-pool path's (``_decide_pool``) for every input: idle, steady and constrained
pools, pools without members, holding within the tolerance, scaling up and down through the
window, any scale policy."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from arklow_pulumi.core.deciding import (
    Observed,
    Recommendation,
    TargetDecision,
    TargetId,
    _decide_pool,
    _seen,
    decide,
    scale_targets,
)
from tests.builders import dest, lane, pool, target, topo


@st.composite
def cases(draw: st.DrawFn) -> tuple[Any, ...]:
    n = draw(st.integers(1, 6))
    destinations, pools = [], []
    for p in range(n):
        name = f"p{p}"
        members = [f"d{p}"] if draw(st.booleans()) or p == 0 else []
        if members:
            limit = draw(st.sampled_from([1.0, 10.0, 100.0]) | st.floats(0.1, 1e4))
            destinations.append(dest(f"d{p}", [f"r{p}"], lane("l", limit)))
        lo = draw(st.integers(0, 5))
        hi = lo + draw(st.integers(0, 30))
        upr = draw(st.sampled_from([0.5, 1.0, 1.1, 8.0, 1 / 3]) | st.floats(0.01, 100))
        targets = [target(f"{name}-t{k}", lo, hi, upr, lo) for k in range(draw(st.integers(1, 2)))]
        policy = {
            "max_step_up": draw(st.integers(1, 5)),
            "max_step_up_percent": draw(st.sampled_from([0.0, 50.0, 100.0])),
            "scale_down_window_s": draw(st.sampled_from([0.0, 30.0, 300.0])),
            "max_step_down": draw(st.integers(1, 3)),
            "max_step_down_percent": draw(st.sampled_from([0.0, 10.0, 50.0])),
            "tolerance": draw(st.sampled_from([0.0, 0.05, 0.1, 0.5])),
        }
        extra: dict[str, Any] = {"scale_targets": targets, "scale_policy": policy}
        headroom = draw(st.sampled_from([None, 0.0, 0.2, 1 / 3]))
        if headroom is not None:
            extra["headroom"] = headroom
        capacity = draw(st.sampled_from([0.0, 4.0, 50.5]))
        pools.append(pool(name, f"r{p}", members, capacity, **extra))
    return destinations, pools, draw(st.integers(0, 2**32))


@settings(max_examples=300, deadline=None)
@given(cases())
def test_a_pools_only_target_is_decided_as_the_general_path_decides(case: tuple[Any, ...]) -> None:
    destinations, pools, seed = case
    t = topo(destinations, pools)
    rng = random.Random(seed)
    units = [0.0, 1e-9, 0.5, 3.0, 17.0, 250.0, 1e4]
    demand = {f"{d['name']}/l": rng.choice(units) * rng.random() for d in destinations}
    now = 1_000.0
    observed: dict[TargetId, Observed] = {}
    history: dict[TargetId, list[Recommendation]] = {}
    for tid, st_ in scale_targets(t).items():
        if rng.random() < 0.9:
            observed[tid] = Observed(rng.randint(0, st_.max_replicas + 3), rng.randint(0, 2))
        if rng.random() < 0.8:
            history[tid] = [
                Recommendation(now - rng.choice([0.0, 10.0, 100.0, 299.0, 301.0, 1e4]), r)
                for r in (rng.randint(0, st_.max_replicas + 3) for _ in range(rng.randint(0, 8)))
            ]
    decision = decide(t, demand, observed, history, now)
    seen, _capacity = _seen(t, observed)
    expected: dict[TargetId, TargetDecision] = {}
    for plan, found in seen:
        _decide_pool(plan, decision.allocation.pools[plan.name], found, history, now, expected)
    assert decision.targets == expected
    assert list(decision.targets) == list(expected)
