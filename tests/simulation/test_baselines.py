"""The baselines that read the trace (``static-peak``, ``standalone-sized``), their pre-pass
(:mod:`arklow_pulumi.simulation.peaks`), ``--policies`` and the new options' number checks."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arklow_pulumi.cli.simulate import Number
from arklow_pulumi.cli.whatif import CHANGE_AT, HOURS_GROWTH, PEAK_GROWTH
from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.core.limits import MAX_COUNT
from arklow_pulumi.simulation.peaks import peak_demands
from arklow_pulumi.simulation.policies import standalone_sized, static_peak
from arklow_pulumi.simulation.simulate import parse_policies
from arklow_pulumi.simulation.tracing import parse_trace
from tests.builders import dest, lane, pool, target, topo
from tests.simulation.example_traces import simulate_example
from tests.simulation.running import assert_one_line_error


def trace(*rows: tuple[float, str, float]) -> object:
    return parse_trace(["time,lane,demand", *(f"{t},{k},{d}" for t, k, d in rows)])


# a (lanes x limit 10 cost 2, y limit 4) and b (lane z) share pool p; c is standalone
TOPO = topo(
    [
        dest("a", ["cpu"], lane("x", 10, cpu=2), lane("y", 4)),
        dest("b", ["cpu"], lane("z", 100)),
        dest("c", ["cpu"], lane("w", 100)),
    ],
    [pool("p", "cpu", ["a", "b"], scale_targets=[target("g", 1, 6, upr=4, replicas=2)])],
)


def test_peak_is_the_highest_demand_a_tick_sees() -> None:
    """Ticks of 60 s. t0: x 3 (6 units), y 9 capped at 4 → 10; z 5 at 30 is seen by t60 with x
    and y: 15; the spike of z to 100 at 61 is gone (z 0 at 90) before t120: never seen. Ticks
    of 61 s see it at t61: 110."""
    rows = trace(
        (0, "a/x", 3),
        (0, "a/y", 9),
        (30, "b/z", 5),
        (61, "b/z", 100),
        (90, "b/z", 0),
        (120, "c/w", 7),
    )
    peaks = peak_demands(TOPO, rows, 60.0)  # type: ignore[arg-type]
    assert peaks == {"p": 15.0, "c/cpu": 7.0}
    assert peak_demands(TOPO, rows, 61.0)["p"] == 6 + 4 + 100  # type: ignore[arg-type]


def test_static_peak_freezes_the_sizing_of_the_peak() -> None:
    """Peak 15 × 1.1 = 16.5 units → 5 replicas of 4 units (within [1, 6]): min = max = 5."""
    frozen = static_peak(TOPO, lambda _t: {"p": 15.0, "c/cpu": 7.0})
    (g,) = frozen.pools["p"].scale_targets
    assert (g.min_replicas, g.max_replicas, g.replicas) == (5, 5, 5)
    idle = static_peak(TOPO, lambda _t: {})
    assert idle.pools["p"].scale_targets[0].max_replicas == 1  # no demand: the min


def test_standalone_sized_passes_the_declared_max() -> None:
    """Standalone splits g (min 1, max 6) over a and b: min 1, max 3 each. a's own peak of 40
    needs 44 units = 11 replicas: its max becomes 11; b's peak 0 keeps max = min = 1."""
    sized = standalone_sized(TOPO, lambda _t: {"a/cpu": 40.0})
    (ga,) = sized.pools["a/cpu"].scale_targets
    (gb,) = sized.pools["b/cpu"].scale_targets
    assert (ga.name, ga.min_replicas, ga.max_replicas) == ("g@a", 1, 11)
    assert (gb.min_replicas, gb.max_replicas, gb.replicas) == (1, 1, 1)


def test_standalone_sized_keeps_the_split_between_targets() -> None:
    """Two targets of one member's pool, max 1 and 3 (units 1): the single-tick split follows
    max × units, so the need of 22 units (peak 20) goes 1 : 3, whatever the declared max."""
    t = topo(
        [dest("a", ["cpu"], lane("x", 100))],
        [pool("p", "cpu", ["a"], scale_targets=[target("s", 0, 1), target("l", 0, 3)])],
    )
    s, big = standalone_sized(t, lambda _t: {"a/cpu": 20.0}).pools["a/cpu"].scale_targets
    assert s.max_replicas + big.max_replicas == 22
    assert (s.max_replicas, big.max_replicas) in ((5, 17), (6, 16))  # 5.5 : 16.5, rounded


def test_standalone_sized_stays_within_the_replica_range() -> None:
    sized = standalone_sized(TOPO, lambda _t: {"a/cpu": 1e12, "b/cpu": 1e12})
    for name in ("a/cpu", "b/cpu"):
        (g,) = sized.pools[name].scale_targets
        assert g.min_replicas <= g.max_replicas <= MAX_COUNT


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("static,arklow,static", ("static", "arklow")),
        (
            "all",
            (
                "arklow",
                "standalone",
                "free-for-all",
                "static",
                "single-tick",
                "static-peak",
                "standalone-sized",
                "cloud-autoscaler",
            ),
        ),
        ("single-tick, static-peak", ("single-tick", "static-peak")),
    ],
)
def test_policies_parsed(raw: str, want: tuple[str, ...]) -> None:
    assert parse_policies(raw) == want


@pytest.mark.parametrize("raw", ["bogus", "", ",", "arklow,single_tick"])
def test_unknown_policy_is_one_line(raw: str) -> None:
    proc = simulate_example("gpu_day", "--policies", raw)
    assert_one_line_error(proc, "--policies", "standalone-sized")


@pytest.mark.parametrize("option", [CHANGE_AT, HOURS_GROWTH, PEAK_GROWTH])
@given(value=st.floats(allow_nan=True, allow_infinity=True))
def test_new_numbers_keep_their_range(option: Number, value: float) -> None:
    """Each new option takes a finite number >= 0 and refuses anything else with the one-line
    message naming it."""
    if math.isfinite(value) and value >= 0:
        assert option.convert(repr(value), None, None) == value
    else:
        with pytest.raises(InvalidInput, match=option.option):
            option.convert(repr(value), None, None)
