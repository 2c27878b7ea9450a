"""``arklow simulate --ticks-csv``: rows checked by hand on case A (tests/simulation/
test_policies.py), every row of the example traces adding up to the JSON figures, names quoted
as CSV quotes them, and a file that cannot be written refused with one line."""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from tests.builders import dest, lane
from tests.simulation.example_traces import TRACES
from tests.simulation.running import (
    arklow,
    assert_one_line_error,
    simulate_json,
    write_topology,
    write_trace,
)
from tests.simulation.test_policies import CASE_A, TRACE_A

HEADER = [
    "policy",
    "time",
    "kind",
    "name",
    "resource",
    "capacity",
    "demand",
    "served",
    "held",
    "admitted",
    "replicas",
    "pending",
    "desired",
    "reason",
]


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        assert reader.fieldnames == HEADER
        return list(reader)


@pytest.fixture(scope="module")
def case_a_rows(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, str]]:
    tmp = tmp_path_factory.mktemp("ticks")
    topo = write_topology(tmp / "t.yaml", CASE_A)
    trace = write_trace(tmp / "trace.csv", TRACE_A)
    out = tmp / "ticks.csv"
    simulate_json(topo, trace, "--policies", "arklow,static", "--ticks-csv", str(out))
    return read_rows(out)


def row(rows: list[dict[str, str]], policy: str, time: str, kind: str, name: str) -> str:
    """That row's columns from ``resource`` to ``desired``, comma-separated as in the file."""
    found = [
        r
        for r in rows
        if (r["policy"], r["time"], r["kind"], r["name"]) == (policy, time, kind, name)
    ]
    assert len(found) == 1
    return ",".join(found[0][column] for column in HEADER[4:-1])  # the reason apart (below)


def test_a_tick_by_hand(case_a_rows: list[dict[str, str]]) -> None:
    """arklow at t = 60: the launch of t = 0 (2 → 4 replicas, delay 120 s) is still pending, so
    capacity is 2 replicas × 2 units = 4. a/x (demand 8) and b/y (demand 1) share it fairly:
    b gets its 1, a the other 3 (held 5). The pool is constrained, so admission adds nothing:
    a 3, b 1. Pool: demand 9, served 4, held 5, admitted 4.

    At t = 120 the launch serves: 8 units, a 7 (held 1), b 1; 4 replicas, none pending.
    At t = 300 a has no demand: b keeps 1, and as the only active lane may be admitted the 7
    unused units too, up to its limit 10: 8."""
    rows = case_a_rows
    #                                   resource cap  demand served held admitted rep pend desired
    assert row(rows, "arklow", "60", "pool", "gpu") == "gpu,4,9,4,5,4,2,2,4"
    assert row(rows, "arklow", "60", "target", "gpu/asg") == "gpu,4,,,,,2,2,4"
    # the target's reason: held work took it to its max at t = 0; pools and lanes have none
    reason = {
        (r["time"], r["kind"], r["name"]): r["reason"] for r in rows if r["policy"] == "arklow"
    }
    assert reason[("60", "target", "gpu/asg")] == "at-max"
    assert reason[("60", "pool", "gpu")] == reason[("60", "lane", "a/x")] == ""
    assert row(rows, "arklow", "60", "lane", "a/x") == ",,8,3,5,3,,,"
    assert row(rows, "arklow", "60", "lane", "b/y") == ",,1,1,0,1,,,"
    assert row(rows, "arklow", "120", "pool", "gpu") == "gpu,8,9,8,1,8,4,0,4"
    assert row(rows, "arklow", "120", "lane", "a/x") == ",,8,7,1,7,,,"
    assert row(rows, "arklow", "300", "lane", "a/x") == ",,0,0,0,0,,,"
    assert row(rows, "arklow", "300", "lane", "b/y") == ",,1,1,0,8,,,"
    assert row(rows, "static", "300", "pool", "gpu") == "gpu,4,1,1,0,4,2,0,2"


def test_rows_in_order(case_a_rows: list[dict[str, str]]) -> None:
    """Time, then policy as asked, then pools, targets and lanes, each by name: 6 ticks × 2
    policies × (1 pool + 1 target + 2 lanes)."""
    keys = [(r["time"], r["policy"], r["kind"], r["name"]) for r in case_a_rows]
    per_tick = [
        ("arklow", "pool", "gpu"),
        ("arklow", "target", "gpu/asg"),
        ("arklow", "lane", "a/x"),
        ("arklow", "lane", "b/y"),
        ("static", "pool", "gpu"),
        ("static", "target", "gpu/asg"),
        ("static", "lane", "a/x"),
        ("static", "lane", "b/y"),
    ]
    assert keys == [(str(t), *k) for t in range(0, 301, 60) for k in per_tick]


def _number(text: str) -> float:
    return float(text) if text else 0.0


SUMMED = ("capacity", "demand", "served", "held", "admitted", "replicas")


def _close(got: float, want: float) -> bool:
    """``got == pytest.approx(want, abs=1e-9)`` (its default relative 1e-6 too), at a fraction of
    its cost for a row."""
    return abs(got - want) <= max(1e-6 * abs(want), 1e-9)


@pytest.mark.parametrize("name", ["gpu_day", "fleet"])
def test_rows_add_up_to_the_json(tmp_path: Path, name: str) -> None:
    """Every policy: each lane's and pool's rows × tick hours summed are its JSON figures; the
    pool's replicas and in-service units are its replica-hours and peak; every figure of a row
    keeps its range."""
    out = tmp_path / "ticks.csv"
    doc = simulate_json(
        TRACES / f"{name}.yaml",
        TRACES / f"{name}.csv",
        "--policies",
        "all",
        "--ticks-csv",
        str(out),
    )
    hours = 60 / 3600
    sums: dict[tuple[str, str, str], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    peaks: dict[tuple[str, str], float] = defaultdict(float)
    times = set()
    for r in read_rows(out):  # a few hundred thousand rows: each figure read once
        times.add(r["time"])
        key = (r["policy"], r["kind"], r["name"])
        figures = [_number(r[column]) for column in SUMMED]
        row_sums = sums[key]
        for column, figure in zip(SUMMED, figures, strict=True):
            row_sums[column] += figure * hours
        capacity, demand, served, held, admitted, _replicas = figures
        if r["kind"] != "lane":
            assert int(r["replicas"]) >= 0 and int(r["pending"]) >= 0
            peaks[(r["policy"], r["name"])] = max(
                peaks[(r["policy"], r["name"])], int(r["replicas"])
            )
        if r["kind"] != "target":
            assert 0 <= served <= demand + 1e-9
            assert _close(held, demand - served), r
            assert admitted >= served - 1e-9
        if r["kind"] == "pool":
            assert admitted <= capacity + 1e-9
    assert len(times) == len({t for t in times})  # one block of rows per tick
    for policy, figures in doc["policies"].items():
        for name, want in figures["lanes"].items():
            got = sums[(policy, "lane", name)]
            for column in ("demand", "served", "held"):
                assert got[column] == pytest.approx(want[column], rel=1e-9, abs=1e-9)
        for pool, want in figures["pools"].items():
            got = sums[(policy, "pool", pool)]
            for column in ("capacity", "demand", "served", "held", "admitted"):
                assert got[column] == pytest.approx(want[column], rel=1e-9, abs=1e-9)
            assert got["replicas"] == pytest.approx(want["replica_hours"], rel=1e-9, abs=1e-9)
            assert peaks[(policy, pool)] == want["peak_replicas"]


def test_names_with_commas_and_quotes_are_quoted(tmp_path: Path) -> None:
    doc: dict[str, Any] = {"destinations": [dest('we"ird,dest', ["cpu"], lane("a,b", 10), cpu=4)]}
    topo = write_topology(tmp_path / "t.yaml", doc)
    trace = write_trace(tmp_path / "trace.csv", 'time,lane,demand\n0,"we""ird,dest/a,b",3\n')
    out = tmp_path / "ticks.csv"
    simulate_json(topo, trace, "--policies", "arklow", "--ticks-csv", str(out))
    rows = read_rows(out)
    assert [(r["kind"], r["name"], r["served"]) for r in rows] == [
        ("pool", 'we"ird,dest/cpu', "3"),
        ("lane", 'we"ird,dest/a,b', "3"),
    ]


def test_numbers_read_back_exactly(case_a_rows: list[dict[str, str]]) -> None:
    for r in case_a_rows:
        for column in HEADER[5:-1]:
            if r[column]:
                value = float(r[column])
                assert math.isfinite(value)
                assert r[column] == (str(int(value)) if value == int(value) else repr(value))


def test_unwritable_file_is_one_line(tmp_path: Path) -> None:
    topo = write_topology(tmp_path / "t.yaml", CASE_A)
    trace = write_trace(tmp_path / "trace.csv", TRACE_A)
    proc = arklow(
        "simulate", "--topology", topo, "--trace", trace, "--ticks-csv", tmp_path / "no" / "x.csv"
    )
    assert_one_line_error(proc, "ticks file", "x.csv")
