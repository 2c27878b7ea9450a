"""The demand-history rows a tick adds (:class:`LaneHistory`, columns over the topology's lanes)
against the one-lane-at-a-time rule they replaced, kept here as the reference."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from arklow_pulumi.controller.tick.history import LaneHistory
from tests.hypothesis_profiles import examples

KEYFRAME = 60.0


def reference_rows(
    keys: tuple[str, ...],
    demand: dict[str, float],
    at: float,
    last_value: dict[str, float],
    last_at: dict[str, float],
) -> list[tuple[str, float]]:
    """A lane's demand when it changed, or when its last row is a keyframe interval old; never a
    row for a lane that never had one and has no demand."""
    rows = []
    for key in keys:
        value = demand.get(key, 0.0)
        before = last_value.get(key)
        if before == value:
            if at - last_at[key] < KEYFRAME:
                continue
        elif before is None and value == 0.0:
            continue
        rows.append((key, value))
    last_value.update(rows)
    last_at.update(dict.fromkeys([key for key, _value in rows], at))
    return rows


LANES = [f"d/l{k}" for k in range(6)]
values = st.sampled_from([0.0, -0.0, 1.0, 2.5, 1e12, 5e-324])
ticks = st.lists(
    st.tuples(
        st.lists(st.sampled_from(LANES), unique=True, min_size=0, max_size=6),  # the topology
        st.dictionaries(st.sampled_from(LANES), values),  # demand
        st.sampled_from([0.0, 10.0, 30.0, 59.999, 60.0, 61.0, 200.0]),  # time since last tick
    ),
    max_size=25,
)


@settings(max_examples=examples(300), deadline=None)
@given(
    ticks=ticks,
    restored=st.dictionaries(
        st.sampled_from(LANES), st.tuples(values, st.sampled_from([0.0, -50.0]))
    ),
)
def test_the_rows_are_the_one_lane_at_a_time_rule(
    ticks: list[tuple[list[str], dict[str, float], float]],
    restored: dict[str, tuple[float, float]],
) -> None:
    history = LaneHistory(restored)
    last_value = {lane: value for lane, (value, _at) in restored.items()}
    last_at = {lane: at for lane, (_value, at) in restored.items()}
    at = 0.0
    for lanes, demand, gap in ticks:
        at += gap
        keys = tuple(lanes)
        known = {k: v for k, v in demand.items() if k in keys}
        got = list(history.rows(keys, known, at, KEYFRAME))
        want = reference_rows(keys, known, at, last_value, last_at)
        assert [(k, v.hex()) for k, v in got] == [(k, v.hex()) for k, v in want]
    kept = history.last()
    assert {k: at for k, (_v, at) in kept.items()} == last_at
    assert {k: v for k, (v, _at) in kept.items()} == last_value  # by value (0.0 == -0.0)


def test_every_lane_of_a_noisy_tick_is_one_row_and_a_quiet_one_adds_none() -> None:
    keys = tuple(f"d/l{k}" for k in range(1000))
    history = LaneHistory()
    first = history.rows(keys, dict.fromkeys(keys, 1.0), 0.0, KEYFRAME)
    assert len(first) == 1000 and list(first.lanes) == list(keys)
    assert len(history.rows(keys, dict.fromkeys(keys, 1.0), 10.0, KEYFRAME)) == 0
    assert len(history.rows(tuple(keys), dict.fromkeys(keys, 1.0), 60.0, KEYFRAME)) == 1000
