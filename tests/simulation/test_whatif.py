"""``arklow what-if`` on files: a move that starves a quiet lane is flagged, a no-op reports zero
deltas, raising the pool's max removes the flag, a lane only after the change is new.

Before: quiet (lane q, limit 10) runs alone on 10 units of its own; noisy (lane n, limit 100)
has pool busy, one target of 5 units per replica at 2 replicas (max 2). Demand q = 8 and n = 100
for two hours (121 ticks of one minute). After the move, quiet shares busy (10 units): fair share
5 each, so q is held 3 of 8 every tick (37.5%). The topologies are :mod:`tests.whatif.stacking`'s,
which ``arklow what-if --stack`` is tested on.
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
from tests.whatif.stacking import BEFORE, moved

TICKS = 121
TRACE = [(0, "quiet/q", 8), (0, "noisy/n", 100), (7200, "quiet/q", 8)]


def what_if(
    tmp_path: Path, before: dict[str, Any], after: dict[str, Any], *extra: str, trace: Any = None
) -> Any:
    return what_if_files(tmp_path, before, after, TRACE if trace is None else trace, *extra)


def test_move_that_starves_a_quiet_lane_is_flagged(tmp_path: Path) -> None:
    doc = document(what_if(tmp_path, BEFORE, moved()))
    # noisy, already held 90% on its own pool, now gives quiet 5 of its 10 units: flagged too,
    # after quiet (whose share grew most)
    assert doc["flagged"] == ["quiet/q", "noisy/n"]
    q = doc["lanes"]["quiet/q"]
    assert q == {
        "demand": pytest.approx(8 * TICKS / 60),
        "held_before": 0,
        "held_after": pytest.approx(3 * TICKS / 60),
    }
    n = doc["lanes"]["noisy/n"]
    assert n["held_before"] == pytest.approx(90 * TICKS / 60)
    assert n["held_after"] == pytest.approx(95 * TICKS / 60)
    # quiet's own pool exists before only; busy runs 2 replicas either way
    assert doc["pools"]["quiet/cpu"] == {
        "replica_hours_before": 0,
        "replica_hours_after": None,
        "peak_replicas_before": 0,
        "peak_replicas_after": None,
    }
    assert doc["pools"]["busy"] == {
        "replica_hours_before": pytest.approx(2 * TICKS / 60),
        "replica_hours_after": pytest.approx(2 * TICKS / 60),
        "peak_replicas_before": 2,
        "peak_replicas_after": 2,
    }


def test_fail_on_flag_exits_3_with_the_report(tmp_path: Path) -> None:
    proc = what_if(tmp_path, BEFORE, moved(), "--fail-on-flag")
    assert proc.returncode == 3
    assert json.loads(proc.stdout)["flagged"] == ["quiet/q", "noisy/n"]
    assert proc.stderr == ""


def test_threshold_above_the_growth_flags_nothing(tmp_path: Path) -> None:
    doc = document(what_if(tmp_path, BEFORE, moved(), "--threshold", "0.5", "--fail-on-flag"))
    assert doc["flagged"] == []


def test_no_op_change_reports_zero_deltas(tmp_path: Path) -> None:
    proc = what_if(tmp_path, BEFORE, BEFORE, "--fail-on-flag")
    doc = document(proc)
    assert doc["flagged"] == []
    for lane in doc["lanes"].values():
        assert lane["held_after"] == lane["held_before"]
    for pool in doc["pools"].values():
        assert pool["replica_hours_after"] == pool["replica_hours_before"]
        assert pool["peak_replicas_after"] == pool["peak_replicas_before"]
    md = what_if(tmp_path, BEFORE, BEFORE, "--format", "markdown")
    assert md.returncode == 0
    assert "no lane flagged" in md.stdout
    assert "no change to the topology" in md.stdout
    assert "2 other lanes unchanged" in md.stdout


def test_raising_the_pools_max_removes_the_flag(tmp_path: Path) -> None:
    doc = document(what_if(tmp_path, BEFORE, moved(max_replicas=40), "--fail-on-flag"))
    assert doc["flagged"] == []
    q = doc["lanes"]["quiet/q"]
    # held only while the first launch warms up (t = 0 and t = 60): 3 units each
    assert q["held_after"] == pytest.approx(6 / 60)
    busy = doc["pools"]["busy"]
    assert busy["peak_replicas_after"] > busy["peak_replicas_before"] == 2
    assert busy["replica_hours_after"] > busy["replica_hours_before"]


def test_lane_only_after_the_change_is_new(tmp_path: Path) -> None:
    after = copy.deepcopy(BEFORE)
    after["destinations"].append(
        {
            "name": "fresh",
            "resources": ["cpu"],
            "standalone_capacity": {"cpu": 2},
            "lanes": [{"name": "f", "limit": 5}],
        }
    )
    trace = [*TRACE[:2], (0, "fresh/f", 4), TRACE[2]]
    doc = document(what_if(tmp_path, BEFORE, after, trace=trace))
    assert doc["new_lanes"] == ["fresh/f"]
    assert doc["flagged"] == []
    fresh = doc["lanes"]["fresh/f"]
    assert fresh["held_before"] is None
    assert fresh["held_after"] == pytest.approx(2 * TICKS / 60)
    assert doc["pools"]["fresh/cpu"]["replica_hours_before"] is None
    md = what_if(tmp_path, BEFORE, after, "--format", "markdown", trace=trace)
    assert md.returncode == 0
    line = next(row for row in md.stdout.splitlines() if "fresh/f" in row)
    assert "| new |" in line
    assert "new destination `fresh`" in md.stdout


def test_markdown_lists_flagged_lanes_first_and_the_change(tmp_path: Path) -> None:
    proc = what_if(tmp_path, BEFORE, moved(), "--format", "markdown")
    assert proc.returncode == 0
    out = proc.stdout
    assert out.startswith("### Arklow what-if: 2 lanes flagged")
    assert "`quiet` moved from pool `quiet/cpu` to `busy` for `cpu`" in out
    rows = [row for row in out.splitlines() if row.startswith("| `")]
    assert "quiet/q" in rows[0] and "**flagged**" in rows[0]
    assert "0.00% → 37.50%" in rows[0]
    assert "noisy/n" in rows[1] and "90.00% → 95.00%" in rows[1]
    assert any(row.startswith("| `busy`") and "2 → 2" in row for row in rows)


def test_bad_trace_exits_2_with_one_line(tmp_path: Path) -> None:
    proc = what_if(tmp_path, BEFORE, moved(), trace=[(0, "quiet/q", 1), (60, "ghost/g", 1)])
    assert_one_line_error(proc, "line 3", "'lane'", "ghost/g")
    proc = what_if(tmp_path, BEFORE, moved(), "--threshold", "-1")
    assert_one_line_error(proc, "threshold")
