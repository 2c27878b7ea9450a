"""``arklow what-if --change-at``, the growth flags on replica-hours and peak replicas, and their
checks, against figures worked out by hand.

Every case: one destination d with lane x (limit 100, demand 10 from t = 0), its pool p with
target g (1 unit per replica); ticks of 60 s from t = 0 to t = 600 (11 ticks), launch delay
120 s. Figures below are in unit-ticks and replica-ticks (a tick is 1/60 h).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tests.simulation.running import (
    assert_one_line_error,
    document,
    what_if_files,
)

H = 1 / 60
TRACE = [(0, "d/x", 10), (600, "d/x", 10)]


def topology(max_replicas: int, replicas: int, *, headroom: float = 0.1) -> dict[str, Any]:
    return {
        "destinations": [
            {"name": "d", "resources": ["cpu"], "lanes": [{"name": "x", "limit": 100}]}
        ],
        "pools": [
            {
                "name": "p",
                "resource": "cpu",
                "headroom": headroom,
                "members": ["d"],
                "scale_targets": [target("g", max_replicas, replicas)],
            }
        ],
    }


def target(name: str, max_replicas: int, replicas: int) -> dict[str, Any]:
    return {
        "kind": "aws_asg",
        "name": name,
        "region": "us-east-1",
        "min_replicas": 1,
        "max_replicas": max_replicas,
        "units_per_replica": 1,
        "replicas": replicas,
    }


def what_if(
    tmp_path: Path, before: dict[str, Any], after: dict[str, Any], *extra: str, trace: Any = None
) -> Any:
    return what_if_files(tmp_path, before, after, TRACE if trace is None else trace, *extra)


def test_raised_max_at_the_change(tmp_path: Path) -> None:
    """Before: g at its max 2 all along: served 2 × 11 = 22. After (max 4) from t = 180: ticks
    0-120 as before (2 each); at 180 work is held, so g goes to 4 (11 units needed, max 4), the
    2 launched replicas serve from 300: served 2 × 5 + 4 × 6 = 34; replicas the same. Without
    --change-at the after side would have scaled at t = 0 (served 2 + 2 + 4 × 9 = 40)."""
    doc = document(what_if(tmp_path, topology(2, 2), topology(4, 2), "--change-at", "180"))
    assert doc["lanes"]["d/x"] == {
        "demand": pytest.approx(110 * H),
        "held_before": pytest.approx(88 * H),
        "held_after": pytest.approx(76 * H),
    }
    assert doc["pools"]["p"] == {
        "replica_hours_before": pytest.approx(22 * H),
        "replica_hours_after": pytest.approx(34 * H),
        "peak_replicas_before": 2,
        "peak_replicas_after": 4,
    }
    assert doc["totals"] == doc["pools"]["p"]
    assert doc["flagged"] == [] and doc["flagged_pools"] == [] and doc["flagged_totals"] == []
    plain = document(what_if(tmp_path, topology(2, 2), topology(4, 2)))
    assert plain["lanes"]["d/x"]["held_after"] == pytest.approx(70 * H)


def test_pending_launches_are_carried(tmp_path: Path) -> None:
    """Max 4 from 2 replicas: the launch at t = 0 serves from 120. A change of headroom at 60
    moves no count (12 units needed, max 4) but makes the pool another unit: the after side
    takes the group over with its 2 pending replicas, so it serves exactly as before (a fresh
    launch at 60 would serve only from 180)."""
    doc = document(
        what_if(tmp_path, topology(4, 2), topology(4, 2, headroom=0.2), "--change-at", "60")
    )
    lane = doc["lanes"]["d/x"]
    assert lane["held_before"] == pytest.approx((8 + 8 + 6 * 9) * H)
    assert lane["held_after"] == pytest.approx(lane["held_before"], rel=1e-12)  # summed in two
    pool = doc["pools"]["p"]
    assert pool["replica_hours_after"] == pool["replica_hours_before"]


def test_lowered_max_is_clamped_by_the_next_decision(tmp_path: Path) -> None:
    """Before: 4 replicas (max 4) all along, served 4 × 11 = 44. After (max 2) from 180: at 180
    the group still runs 4 (served 4), the decision clamps it to 2 and the group stops 2 at once:
    from 240 served 2. Served 4 × 4 + 2 × 7 = 30; replica-ticks the same."""
    doc = document(what_if(tmp_path, topology(4, 4), topology(2, 4), "--change-at", "180"))
    assert doc["lanes"]["d/x"]["held_after"] == pytest.approx((110 - 30) * H)
    assert doc["pools"]["p"]["replica_hours_after"] == pytest.approx(30 * H)
    assert doc["pools"]["p"]["peak_replicas_after"] == 4


def test_new_target_and_new_lane_start_at_the_change(tmp_path: Path) -> None:
    """After adds target g2 (max 1, declared replicas 1) to p, and destination n (lane y, 5 units
    of its own). From 180 p has 2 + 1 units at once (a new target starts in service at its
    declared count): served 2 × 3 + 3 × 8 = 30. n/y (demand 3 from 0) counts only from 180:
    8 ticks of 3."""
    after = topology(2, 2)
    after["pools"][0]["scale_targets"].append(target("g2", 1, 1))
    after["destinations"].append(
        {
            "name": "n",
            "resources": ["cpu"],
            "standalone_capacity": {"cpu": 5},
            "lanes": [{"name": "y", "limit": 10}],
        }
    )
    trace = [(0, "d/x", 10), (0, "n/y", 3), (600, "d/x", 10)]
    doc = document(what_if(tmp_path, topology(2, 2), after, "--change-at", "180", trace=trace))
    assert doc["lanes"]["d/x"]["held_after"] == pytest.approx((110 - 30) * H)
    assert doc["lanes"]["n/y"] == {
        "demand": pytest.approx(24 * H),
        "held_before": None,
        "held_after": 0,
    }
    assert doc["new_lanes"] == ["n/y"]
    assert doc["pools"]["p"]["replica_hours_after"] == pytest.approx((2 * 3 + 3 * 8) * H)
    assert doc["pools"]["n/cpu"]["replica_hours_before"] is None


def test_change_at_zero_carries_the_starting_groups(tmp_path: Path) -> None:
    """At 0 the after topology runs throughout, its groups taken over from the before side's
    starting state: g starts at the before side's 1 replica, not the after file's 3."""
    doc = document(what_if(tmp_path, topology(2, 1), topology(4, 3), "--change-at", "0"))
    plain = document(what_if(tmp_path, topology(2, 1), topology(4, 1)))
    assert doc["lanes"] == plain["lanes"]
    assert doc["pools"] == plain["pools"]


def test_no_change_is_the_before_side(tmp_path: Path) -> None:
    doc = document(what_if(tmp_path, topology(4, 2), topology(4, 2), "--change-at", "300"))
    assert doc["lanes"]["d/x"]["held_after"] == doc["lanes"]["d/x"]["held_before"]
    assert doc["totals"]["replica_hours_after"] == doc["totals"]["replica_hours_before"]


@pytest.mark.parametrize(
    ("flags", "pools", "totals"),
    [
        (("--max-replica-hours-growth", "0.5"), ["p"], ["replica_hours"]),  # 34 / 22 = +54.5%
        (("--max-replica-hours-growth", "0.6"), [], []),
        (("--max-peak-replicas-growth", "1"), [], []),  # 2 → 4 is +100%, not more
        (("--max-peak-replicas-growth", "0.99"), ["p"], ["peak_replicas"]),
        (
            ("--max-replica-hours-growth", "0", "--max-peak-replicas-growth", "0"),
            ["p"],
            ["replica_hours", "peak_replicas"],
        ),
    ],
)
def test_growth_flags(
    tmp_path: Path, flags: tuple[str, ...], pools: list[str], totals: list[str]
) -> None:
    """Only pools and totals are flagged here: the lane's held share shrinks. --fail-on-flag
    exits 3 for a flagged pool as for a flagged lane, after the report."""
    proc = what_if(
        tmp_path, topology(2, 2), topology(4, 2), "--change-at", "180", *flags, "--fail-on-flag"
    )
    assert proc.returncode == (3 if pools else 0), proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["flagged"] == []
    assert doc["flagged_pools"] == pools
    assert doc["flagged_totals"] == totals


def test_growth_from_zero_is_flagged(tmp_path: Path) -> None:
    """A pool idle before (no demand: 1 replica at min) and idle after too, but with min 2
    after: replica-hours grow from 11 to 22 replica-ticks; a pool without replicas before (a
    static pool) that gains a target grows from 0, past any limit."""
    before = topology(2, 1)
    after = copy.deepcopy(before)
    after["pools"][0]["scale_targets"][0]["min_replicas"] = 2
    idle = [(0, "d/x", 0), (600, "d/x", 0)]
    doc = document(
        what_if(tmp_path, before, after, "--max-replica-hours-growth", "0.99", trace=idle)
    )
    assert doc["flagged_pools"] == ["p"]
    static = copy.deepcopy(before)
    del static["pools"][0]["scale_targets"]
    static["pools"][0]["capacity"] = 4
    doc = document(
        what_if(tmp_path, static, before, "--max-replica-hours-growth", "1000", trace=idle)
    )
    assert doc["pools"]["p"]["replica_hours_before"] == 0
    assert doc["flagged_pools"] == ["p"]


def test_markdown_marks_flagged_pools(tmp_path: Path) -> None:
    proc = what_if(
        tmp_path,
        topology(2, 2),
        topology(4, 2),
        "--change-at",
        "180",
        "--max-replica-hours-growth",
        "0.5",
        "--format",
        "markdown",
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith("### Arklow what-if: 1 pool and the totals flagged")
    assert "switches from the before topology at 180 s" in out
    assert "| `p` **flagged** | 0.4 → 0.6 | 2 → 4 |" in out
    assert "| all pools **flagged** | 0.4 → 0.6 | 2 → 4 |" in out


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--change-at", "-1"),
        ("--change-at", "nan"),
        ("--change-at", "soon"),
        ("--change-at", "601"),  # after the trace's last row
        ("--max-replica-hours-growth", "-0.1"),
        ("--max-replica-hours-growth", "inf"),
        ("--max-replica-hours-growth", "10%"),
        ("--max-peak-replicas-growth", "-1"),
        ("--max-peak-replicas-growth", "nan"),
    ],
)
def test_bad_numbers_are_one_line(tmp_path: Path, option: str, value: str) -> None:
    proc = what_if(tmp_path, topology(2, 2), topology(4, 2), option, value)
    assert_one_line_error(proc, option.lstrip("-"))
