"""decide(): allocation on in-service capacity, and the scale policy applied over ticks.

Tick-by-tick tests drive decide() with a fake clock against a tiny simulated group (launches
become pending, then in service after a delay), the way the controller loop does.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections.abc import Mapping

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arklow_pulumi.core.deciding import (
    Decision,
    Observed,
    Recommendation,
    TargetId,
    decide,
)
from arklow_pulumi.core.policy import DEFAULT_POLICY, Move, ScalePolicy
from arklow_pulumi.core.topology import Topology, frozen_map
from tests.builders import dest, lane, pool, target, topo
from tests.hypothesis_profiles import examples

P = TargetId("p", "g")


def one_pool(
    lo: int = 1, hi: int = 200, upr: float = 1, replicas: int = 10, capacity: float = 0,
    members: tuple[str, ...] = ("a",), policy: ScalePolicy | None = None,
) -> Topology:  # fmt: skip
    t = topo(
        [dest("a", ["gpu"], lane("x", 1000))],
        [
            pool(
                "p",
                "gpu",
                list(members),
                capacity,
                scale_targets=[target("g", lo, hi, upr, replicas)],
            )
        ],
    )
    if policy is None:
        return t
    pools = dict(t.pools)
    pools["p"] = dataclasses.replace(pools["p"], scale_policy=policy)
    return Topology(t.destinations, frozen_map(pools), t.memberships)


def once(t: Topology, demand: float, obs: Observed | None = None,
         history: tuple[Recommendation, ...] = (), now: float = 0.0) -> Decision:  # fmt: skip
    observed = {P: obs} if obs is not None else {}
    return decide(t, {"a/x": demand}, observed, {P: history}, now)


class Group:
    """A simulated group: a desired count; launches are pending for ``delay`` ticks."""

    def __init__(self, in_service: int, delay: int = 2) -> None:
        self.in_service, self.delay = in_service, delay
        self.pending: list[tuple[int, int]] = []  # (ready at tick, count)
        self.launched = 0

    def observe(self, tick: int) -> Observed:
        self.in_service += sum(n for at, n in self.pending if at <= tick)
        self.pending = [(at, n) for at, n in self.pending if at > tick]
        return Observed(self.in_service, sum(n for _, n in self.pending))

    def set_desired(self, desired: int, tick: int) -> None:
        current = self.in_service + sum(n for _, n in self.pending)
        if desired > current:
            self.pending.append((tick + self.delay, desired - current))
            self.launched += desired - current
        cut = current - desired
        while cut > 0 and self.pending:
            at, n = self.pending.pop()
            if n > cut:
                self.pending.append((at, n - cut))
            cut -= min(n, cut)
        self.in_service -= max(cut, 0)


def run(t: Topology, demands: list[float], tick_s: float = 60.0, delay: int = 2,
        start: int = 10) -> list[tuple[int, int]]:  # fmt: skip
    """Each tick's (recommended, desired) for target P; its history and last move carried from
    tick to tick as the controller carries them."""
    group, history, out = Group(start, delay), [], []
    moves: dict[TargetId, Move] = {}
    for k, d in enumerate(demands):
        decision = decide(
            t, {"a/x": d}, {P: group.observe(k)}, {P: history}, k * tick_s, moves=moves
        )
        td = decision.targets[P]
        if td.move is not None:
            moves[P] = td.move
        history = [r for r in history if r.at >= k * tick_s - 3600] + [
            Recommendation(k * tick_s, td.recommended)
        ]
        group.set_desired(td.desired, k)
        out.append((td.recommended, td.desired))
    return out


def changes(xs: list[int]) -> int:
    return sum(1 for a, b in itertools.pairwise(xs) if a != b)


def test_defaults_apply_when_the_pool_declares_no_policy() -> None:
    assert one_pool().pools["p"].scale_policy == DEFAULT_POLICY


def test_capacity_counts_in_service_not_pending() -> None:
    d = once(one_pool(capacity=2), 100, Observed(in_service=3, pending=5))
    assert d.allocation.pools["p"].capacity == 5.0
    assert d.allocation.lanes["a/x"].allocation == 5.0
    assert d.targets[P].current == 8


def test_missing_observation_uses_topology_replicas() -> None:
    d = once(one_pool(replicas=7), 7 / 1.1)
    assert (d.targets[P].current, d.allocation.pools["p"].capacity) == (7, 7.0)
    assert d.targets[P].desired == 7


def test_warm_up_replicas_are_not_requested_twice() -> None:
    # needs 11 replicas; 3 in service and 8 launching: nothing more to request
    d = once(one_pool(), 10, Observed(in_service=3, pending=8))
    assert (d.targets[P].recommended, d.targets[P].desired) == (11, 11)


def test_warm_up_over_ticks_launches_exactly_what_is_needed() -> None:
    # a step from 10 to 110 needed replicas, launches pending for 3 ticks
    t = one_pool(hi=500)
    demands = [10 / 1.1] * 2 + [100.0] * 20
    group, history = Group(10, delay=3), []
    for k, d in enumerate(demands):
        td = decide(t, {"a/x": d}, {P: group.observe(k)}, {P: history}, k * 60.0).targets[P]
        history.append(Recommendation(k * 60.0, td.recommended))
        assert td.desired <= 110
        group.set_desired(td.desired, k)
    assert group.launched == 100 and group.in_service == 110 and not group.pending


def test_a_flapping_input_does_not_flap_the_output() -> None:
    demands = [100.0 if k % 2 else 90.0 for k in range(60)]  # needs 110 / 99 replicas in turn
    out = run(one_pool(policy=ScalePolicy(tolerance=0.1)), demands, start=110)
    recommended, desired = [r for r, _ in out], [d for _, d in out]
    assert changes(recommended) == 59
    assert changes(desired) == 0 and desired[0] == 110


def test_noisy_demand_acts_on_a_fraction_of_ticks() -> None:
    rng = random.Random(7)
    demands = [100 * (1 + rng.uniform(-0.1, 0.1)) for _ in range(300)]
    out = run(one_pool(), demands, start=110)
    single, policy = changes([r for r, _ in out]), changes([d for _, d in out])
    assert single > 200
    assert policy * 5 <= single


def test_scale_down_waits_for_the_window_then_goes_in_one_step() -> None:
    out = run(one_pool(), [100.0] * 3 + [10.0] * 20, tick_s=60.0, start=110)
    desired = [d for _, d in out]
    # the 300 s window still holds 110 (ticks 3..8: it is closed, the recommendation of
    # tick 2 is in it at tick 7), then down to the recommendation at once
    assert desired[:8] == [110] * 8
    assert desired[8:] == [11] * 15


def test_a_smaller_step_down_steps() -> None:
    slow = one_pool(policy=ScalePolicy(max_step_down_percent=10.0))
    desired = [d for _, d in run(slow, [100.0] * 3 + [10.0] * 20, tick_s=60.0, start=110)]
    assert desired[8:11] == [99, 90, 81]  # 10 % of current per tick


def roomy(t: Topology, headroom: float) -> Topology:
    """``t`` with pool ``p``'s headroom set: a need far above the demand without held work."""
    pools = dict(t.pools)
    pools["p"] = dataclasses.replace(pools["p"], headroom=headroom)
    return Topology(t.destinations, frozen_map(pools), t.memberships)


def test_scale_up_without_held_work_is_immediate_but_bounded() -> None:
    # demand 9 on 10+ units holds nothing; headroom 29 makes the need 270 units
    out = run(roomy(one_pool(hi=500), 29.0), [9.0] * 6, start=10, delay=0)
    assert [d for _, d in out] == [20, 40, 80, 160, 270, 270]


def test_no_scale_up_within_the_window_after_a_scale_down_unless_work_is_held() -> None:
    # demand falls and the target steps down; the need rises again, a need of headroom only
    # (no work held): the target waits out the window after its last move down, then goes up
    slow = ScalePolicy(scale_down_window_s=180.0, max_step_down_percent=10.0)
    t = roomy(one_pool(hi=500, policy=slow), 1.0)
    out = run(t, [10.0] * 4 + [6.0] * 9 + [8.0] * 6, start=20, delay=0)
    # 20 steps down to 13 (last at tick 12); the need of 16 from tick 13 waits out the closed
    # window: up at tick 16, 180 s and one tick after the last move down
    assert [d for _, d in out] == [20] * 7 + [18, 17, 16, 15, 14, 13, 13, 13, 13] + [16] * 3
    assert out[13] == (16, 13)
    assert run(t, [10.0] * 4 + [6.0] * 9 + [8.0] * 6, start=20, delay=0)[15] == (16, 13)
    # with work held the same rise goes up at once
    held = [d for _, d in run(one_pool(hi=500), [10.0] * 2 + [6.0] * 8 + [30.0] * 2, start=11)]
    assert held[-3] < held[0] and held[-2] == 33  # down just before, up on the held work


def test_a_decision_carries_the_targets_last_move() -> None:
    t = one_pool()
    up = once(t, 50.0, Observed(10, 0), now=60.0).targets[P]
    assert up.move == Move(60.0, 1)
    steady = decide(t, {"a/x": 10.0}, {P: Observed(11, 0)}, {P: ()}, 120.0, moves={P: up.move})
    assert steady.targets[P].desired == 11 and steady.targets[P].move == up.move


def test_held_work_scales_up_in_one_step_bounded_only_by_max() -> None:
    # the staged scale-up: a pool at 2 replicas of 4 units meets 150 units of work; with
    # max(4, 100%) steps it went 2 -> 6 -> 12 -> 24 -> 42; held work goes to 42 at once
    t = one_pool(hi=60, upr=4, replicas=2)
    out = run(t, [150.0] * 4, start=2, delay=2)
    assert [d for _, d in out] == [42, 42, 42, 42]
    capped = one_pool(hi=30, upr=4, replicas=2)
    assert [d for _, d in run(capped, [150.0] * 2, start=2)] == [30, 30]


def test_held_work_is_not_waiting_on_the_tolerance() -> None:
    # 101 units of work on 100 in service: within the 10% tolerance, but the pool holds 1 unit
    d = once(one_pool(), 101.0, Observed(100, 0)).targets[P]
    assert (d.recommended, d.desired) == (112, 112)


def test_a_pool_holding_work_does_not_scale_down() -> None:
    # pending replicas more than cover the recommendation while in-service capacity holds work
    d = once(one_pool(), 50.0, Observed(40, 100)).targets[P]
    assert d.recommended == 55 and d.desired == 140


def coupled(llm_static: float, llm_max: int = 0) -> Topology:
    """The issue's coupled pool: a lane costs gpu 1 + llm 10; the llm pool holds ``llm_static``
    units plus an optional target of 10-unit replicas up to ``llm_max``."""
    llm_targets = [target("l", 0, llm_max, 10, 0)] if llm_max else []
    return topo(
        [dest("a", ["gpu", "llm"], lane("x", 1000, gpu=1, llm=10))],
        [
            pool("p", "gpu", ["a"], 0, scale_targets=[target("g", 1, 50, 4, 11)]),
            pool("q", "llm", ["a"], llm_static, scale_targets=llm_targets),
        ],
    )


def test_a_pool_does_not_buy_replicas_for_work_another_fixed_pool_holds() -> None:
    # llm quota 100 lets 10 units through: gpu needs 10 x 1.1 = 11 units, 3 replicas (not 11)
    t = coupled(100.0)
    d = decide(t, {"a/x": 40.0}, {}, {}, 0.0)
    assert d.allocation.pools["p"].desired_by_target == (11,)  # allocate's single-tick formula
    assert d.targets[P].recommended == 3
    assert decide(t, {"a/x": 40.0}, {}, {}, 0.0, single_tick=True).targets[P].desired == 11


def test_coupled_pools_that_can_both_grow_both_grow() -> None:
    t = coupled(0.0, llm_max=100)  # llm can reach 1,000 units: all 400 of the lane's fit
    d = decide(t, {"a/x": 40.0}, {}, {}, 0.0)
    assert d.targets[P].recommended == 11
    assert d.targets[TargetId("q", "l")].recommended == 44


def test_tolerance_holds_small_surpluses_and_never_spends_the_headroom() -> None:
    t = one_pool(policy=ScalePolicy(tolerance=0.1))
    assert once(t, 95 / 1.1, Observed(100, 0)).targets[P].desired == 100  # 5 % surplus: kept
    d = once(t, 105 / 1.1, Observed(100, 0)).targets[P]  # 5 % short of the headroom: up
    assert (d.desired, d.reason) == (105, "scale-up")
    assert once(t, 85 / 1.1, Observed(100, 0)).targets[P].desired == 85  # 15 % surplus: down
    assert once(t, 95 / 1.1, Observed(100, 0)).targets[P].reason == "within-tolerance"
    kept_half = one_pool(policy=ScalePolicy(tolerance=0.1, headroom_kept=0.5))
    # demand 93 needs 102.3 of the 100 supplied: 2.3 of the headroom's 9.3 units used, under
    # half: kept
    assert once(kept_half, 93.0, Observed(100, 0)).targets[P].desired == 100


def test_tolerance_subtracts_static_capacity() -> None:
    # needs 110 units, 100 static: the target must supply 10; it supplies 20 (100% over)
    t = one_pool(capacity=100, lo=0)
    d = once(t, 100, Observed(20, 0)).targets[P]
    assert d.desired < 20


def test_a_pool_without_members_settles_to_min_at_once() -> None:
    t = one_pool(lo=3, members=())
    history = (Recommendation(-10, 50),)
    d = once(t, 0, Observed(40, 5), history).targets[P]
    assert (d.recommended, d.desired) == (3, 3)


def test_a_lowered_max_is_applied_at_once() -> None:
    d = once(one_pool(hi=20), 100, Observed(50, 0)).targets[P]
    assert (d.recommended, d.desired) == (20, 20)


def test_per_pool_policy_is_used() -> None:
    policy = ScalePolicy(max_step_up=1, max_step_up_percent=0)
    t = roomy(one_pool(hi=500, policy=policy), 29.0)
    assert once(t, 9, Observed(10, 0)).targets[P].desired == 11


def test_single_tick_goes_straight_to_the_recommendation() -> None:
    t = one_pool()
    d = decide(t, {"a/x": 50.0}, {P: Observed(100, 0)}, {P: (Recommendation(0, 110),)}, 60.0,
               single_tick=True).targets[P]  # fmt: skip
    assert (d.recommended, d.desired) == (55, 55)


def test_targets_are_keyed_by_identity() -> None:
    t = topo(
        [dest("a", ["gpu", "cpu"], lane("x", 100)), dest("b", ["cpu"], lane("y", 100))],
        [
            pool("p", "gpu", ["a"], scale_targets=[target("g1", 0, 9), target("g2", 1, 9)]),
            pool("q", "cpu", ["a", "b"], scale_targets=[target("c1", 2, 9)]),
        ],
    )
    d = decide(t, {"a/x": 4}, {}, {}, 0.0)
    assert sorted(d.targets) == [TargetId("p", "g1"), TargetId("p", "g2"), TargetId("q", "c1")]
    assert all(k == v.target for k, v in d.targets.items())


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[Topology, dict[str, float], dict[TargetId, Observed],
                                         dict[TargetId, list[Recommendation]]]:  # fmt: skip
    n = draw(st.integers(1, 3))
    targets, observed, history = [], {}, {}
    for k in range(n):
        a, b = draw(st.integers(0, 30)), draw(st.integers(0, 30))
        targets.append(target(f"g{k}", min(a, b), max(a, b), draw(st.integers(1, 32)) / 4))
        tid = TargetId("p", f"g{k}")
        if draw(st.booleans()):
            observed[tid] = Observed(draw(st.integers(0, 80)), draw(st.integers(0, 40)))
        history[tid] = [
            Recommendation(draw(st.floats(-1000, 0)), draw(st.integers(0, 80)))
            for _ in range(draw(st.integers(0, 4)))
        ]
    members = ["a"] if draw(st.booleans()) else []
    t = topo(
        [dest("a", ["gpu"], lane("x", 1000))],
        [pool("p", "gpu", members, draw(st.integers(0, 200)) / 4, scale_targets=targets)],
    )
    pol = ScalePolicy(
        max_step_up=draw(st.integers(0, 5)),
        max_step_down=draw(st.integers(0, 5)),
        tolerance=draw(st.floats(0, 0.5)),
    )
    pools = dict(t.pools)
    pools["p"] = dataclasses.replace(pools["p"], scale_policy=pol)
    t = Topology(t.destinations, frozen_map(pools), t.memberships)
    return t, {"a/x": draw(st.integers(0, 2000)) / 4}, observed, history


@settings(max_examples=examples(300))
@given(scenarios())
def test_bounds_are_never_left(
    case: tuple[Topology, Mapping[str, float], Mapping[TargetId, Observed],
                Mapping[TargetId, list[Recommendation]]],
) -> None:  # fmt: skip
    t, demand, observed, history = case
    d = decide(t, demand, observed, history, 0.0)
    for target_ in t.pools["p"].scale_targets:
        td = d.targets[TargetId("p", target_.name)]
        lo, hi = target_.min_replicas, target_.max_replicas
        assert lo <= td.recommended <= hi
        assert lo <= td.desired <= hi


@pytest.mark.parametrize("pending", [0, 3])
def test_pending_is_never_capacity(pending: int) -> None:
    d = once(one_pool(), 50, Observed(in_service=4, pending=pending))
    assert d.allocation.pools["p"].capacity == 4.0


def test_an_autoscaled_group_is_moved_from_the_minimum_it_was_given() -> None:
    """A group with its own autoscaler runs what its autoscaler decides (here 7, held there by
    its stabilization period) while Arklow sets its minimum: the policy moves the minimum, so a
    minimum lowered to 6 is not raised again within the window for a need of headroom only."""
    t = one_pool(upr=4, lo=2, hi=12)
    down = decide(t, {"a/x": 21.4}, {P: Observed(7, 0, asked=7)}, {P: ()}, 0.0).targets[P]
    assert (down.desired, down.move) == (6, Move(0.0, -1))
    # the autoscaler still runs 7; the need (23.2 × 1.1 = 25.5 units) would take 7 again
    moves = {P: Move(0.0, -1)}
    history = {P: (Recommendation(0.0, 6),)}
    again = decide(t, {"a/x": 23.2}, {P: Observed(7, 0, asked=6)}, history, 300.0, moves=moves)
    assert again.targets[P].desired == 6  # the 7 it runs serve the need: the minimum stays
    # the autoscaler has come down to the minimum: the need is short of it, but the window of
    # the move down still guards
    short = decide(t, {"a/x": 23.2}, {P: Observed(6, 0, asked=6)}, history, 300.0, moves=moves)
    assert (short.targets[P].desired, short.targets[P].reason) == (6, "no-reversal")
    later = decide(t, {"a/x": 23.2}, {P: Observed(6, 0, asked=6)}, history, 600.0, moves=moves)
    assert later.targets[P].desired == 7  # the window has passed
