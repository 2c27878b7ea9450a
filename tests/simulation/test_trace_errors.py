"""Bad traces and options: exit 2, one line on stderr naming the object and field, nothing on
stdout (``simulate`` and ``what-if`` read traces the same way)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.simulation.running import (
    arklow,
    assert_one_line_error,
    simulate_json,
    write_topology,
    write_trace,
)

TOPOLOGY: dict[str, Any] = {
    "destinations": [
        {
            "name": "a",
            "resources": ["cpu"],
            "standalone_capacity": {"cpu": 4},
            "lanes": [{"name": "x", "limit": 10}, {"name": "y", "limit": 10}],
        }
    ]
}

CASES = {
    "unknown lane": ("time,lane,demand\n0,a/x,1\n60,a/nope,2\n", ["line 3", "'lane'", "a/nope"]),
    "negative demand": ("time,lane,demand\n0,a/x,-1\n", ["line 2", "'demand'", "-1"]),
    "nan demand": ("time,lane,demand\n0,a/x,nan\n", ["line 2", "'demand'", "nan"]),
    "infinite demand": ("time,lane,demand\n0,a/x,inf\n", ["line 2", "'demand'", "inf"]),
    "not a number": ("time,lane,demand\n0,a/x,lots\n", ["line 2", "'demand'", "lots"]),
    "unsorted time": ("time,lane,demand\n0,a/x,1\n120,a/x,2\n60,a/y,1\n", ["line 4", "'time'"]),
    "bad time": ("time,lane,demand\nyesterday,a/x,1\n", ["line 2", "'time'", "yesterday"]),
    "negative time": ("time,lane,demand\n-5,a/x,1\n", ["line 2", "'time'"]),
    "mixed time forms": (
        "time,lane,demand\n2026-11-30T00:00:00Z,a/x,1\n60,a/x,2\n",
        ["line 3", "'time'", "mixes"],
    ),
    "missing field": ("time,lane,demand\n0,a/x\n", ["line 2", "expected 3 fields"]),
    "extra field": ("time,lane,demand\n0,a/x,1,2\n", ["line 2", "expected 3 fields"]),
    "bad header": ("when,lane,demand\n0,a/x,1\n", ["line 1", "header"]),
    "no header": ("", ["line 1", "header"]),
    "no rows": ("time,lane,demand\n", ["no rows"]),
    "unterminated quote": ('time,lane,demand\n0,"a/x,1\n', ["malformed CSV"]),
    "time past the maximum": ("time,lane,demand\n0,a/x,1\n1e18,a/x,2\n", ["line 3", "'time'"]),
    "time past the maximum, slow path": (
        "time,lane,demand\n0,a/x,1\n 1e11 ,a/x,2\n",
        ["line 3", "'time'", "1e11"],
    ),
    "iso span past the maximum": (
        "time,lane,demand\n0001-01-01T00:00:00,a/x,1\n9999-12-31T00:00:00,a/x,2\n",
        ["line 3", "'time'", "after the trace's first row"],
    ),
    "demand past the maximum": ("time,lane,demand\n0,a/x,2e12\n", ["line 2", "'demand'"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_trace(tmp_path: Path, case: str) -> None:
    text, needles = CASES[case]
    topo = write_topology(tmp_path / "t.yaml", TOPOLOGY)
    trace = write_trace(tmp_path / "trace.csv", text)
    proc = arklow("simulate", "--topology", topo, "--trace", trace, "--format", "json")
    assert_one_line_error(proc, "trace", *needles)


def test_missing_trace_file(tmp_path: Path) -> None:
    topo = write_topology(tmp_path / "t.yaml", TOPOLOGY)
    proc = arklow("simulate", "--topology", topo, "--trace", tmp_path / "none.csv")
    assert_one_line_error(proc, "none.csv")


def test_not_utf8(tmp_path: Path) -> None:
    topo = write_topology(tmp_path / "t.yaml", TOPOLOGY)
    trace = tmp_path / "trace.csv"
    trace.write_bytes(b"time,lane,demand\n0,a/x,\xff\n")
    proc = arklow("simulate", "--topology", topo, "--trace", trace)
    assert_one_line_error(proc, "UTF-8")


@pytest.mark.parametrize(
    ("option", "value", "needle"),
    [
        ("--tick", "0", "tick"),
        ("--tick", "-60", "tick"),
        ("--tick", "soon", "tick"),
        ("--tick", "1e-9", ">= 0.001"),
        ("--tick", "5e-324", ">= 0.001"),
        ("--tick", "inf", "tick"),
        ("--max-ticks", "0", "max-ticks"),
        ("--max-ticks", "many", "max-ticks"),
        ("--launch-delay", "-1", "launch-delay"),
        ("--launch-delay", "nan", "launch-delay"),
        ("--policies", "arklow,greedy", "greedy"),
        ("--policies", ",", "policies"),
    ],
)
def test_bad_option(tmp_path: Path, option: str, value: str, needle: str) -> None:
    topo = write_topology(tmp_path / "t.yaml", TOPOLOGY)
    trace = write_trace(tmp_path / "trace.csv", [(0, "a/x", 1)])
    proc = arklow("simulate", "--topology", topo, "--trace", trace, f"{option}={value}")
    assert_one_line_error(proc, needle)


@pytest.mark.parametrize("command", ["simulate", "what-if"])
def test_a_run_over_the_tick_maximum_is_refused_at_once(tmp_path: Path, command: str) -> None:
    """Refused before anything is built (a run that would only end when killed), naming the
    count and how to raise the maximum; a raised maximum lets the same run through."""
    topo = write_topology(tmp_path / "t.yaml", TOPOLOGY)
    trace = write_trace(tmp_path / "trace.csv", [(0, "a/x", 1), (100_000, "a/x", 2)])
    sides = ["--topology", topo] if command == "simulate" else ["--before", topo, "--after", topo]
    proc = arklow(command, *sides, "--trace", trace, "--tick", "0.001")
    assert_one_line_error(proc, "tick", "100,000,001 ticks", "--max-ticks")
    proc = arklow(command, *sides, "--trace", trace, "--tick", "1", "--max-ticks", "100000")
    assert_one_line_error(proc, "100,001 ticks", "100,000")
    proc = arklow(command, *sides, "--trace", trace, "--tick", "1000", "--max-ticks", "101")
    assert proc.returncode == 0, proc.stderr


def test_bad_topology(tmp_path: Path) -> None:
    topo = write_topology(
        tmp_path / "t.yaml",
        {"destinations": [{"name": "a", "resources": ["cpu"], "lanes": [{"name": "x"}]}]},
    )
    trace = write_trace(tmp_path / "trace.csv", [(0, "a/x", 1)])
    proc = arklow("simulate", "--topology", topo, "--trace", trace)
    assert_one_line_error(proc, "limit")


def test_iso_times_match_seconds(tmp_path: Path) -> None:
    """ISO 8601 times count from the first row; a demand holds until the lane's next row; rows
    between ticks only matter through the value in force at each tick."""
    topo = write_topology(tmp_path / "t.yaml", TOPOLOGY)
    iso = write_trace(
        tmp_path / "iso.csv",
        "time,lane,demand\n"
        "2026-11-30T10:00:00Z,a/x,2\n"
        "2026-11-30T10:00:30+00:00,a/y,9\n"
        "2026-11-30T10:01:00,a/y,1\n"
        "2026-11-30T11:00:00Z,a/x,3\n",
    )
    seconds = write_trace(
        tmp_path / "s.csv", [(0, "a/x", 2), (30, "a/y", 9), (60, "a/y", 1), (3600, "a/x", 3)]
    )
    a = simulate_json(topo, iso, "--policies", "arklow")
    b = simulate_json(topo, seconds, "--policies", "arklow")
    assert a == b
    lanes = a["policies"]["arklow"]["lanes"]
    # 61 ticks (t = 0 … 3600): x is 2 for 60 ticks then 3; y is 0 at t = 0, then 1 (9 is never seen)
    assert lanes["a/x"]["demand"] == pytest.approx((2 * 60 + 3) / 60)
    assert lanes["a/y"]["demand"] == pytest.approx(60 / 60)
