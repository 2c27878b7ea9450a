"""Demand history out as a trace: ``arklow controller export-trace`` writes the CSV of DESIGN.md
("Demand trace"), and replaying it gives back the demand every tick used."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from click.testing import CliRunner

from arklow_pulumi.cli.main import cli
from arklow_pulumi.controller.ports import DemandReport
from arklow_pulumi.simulation.tracing import read_trace
from arklow_pulumi.store.engine import Store
from arklow_pulumi.store.runtime import Lease, demand_trace
from tests.builders import dest, lane, pool, target, topo
from tests.controller.conftest import FakeClock, groups_for, make_controller, put_topology

LANES = ("search/interactive", "search/batch", "reports/nightly")


def replay(rows: list[dict[str, str]], at: float) -> dict[str, float]:
    """Each lane's demand at ``at``: its last row at or before it (a row holds until the next)."""
    held: dict[str, float] = {}
    for row in rows:
        if float(row["time"]) <= at + 1e-9:
            held[row["lane"]] = float(row["demand"])
    return held


@pytest.fixture
def ticked(store: Store, lease: Lease, clock: FakeClock) -> list[tuple[float, dict[str, float]]]:
    """Twelve ticks of changing demand; returns (time, demand each lane had) per tick."""
    topology = topo(
        [
            dest("search", ["gpu"], lane("interactive", 16, 3), lane("batch", 64)),
            dest("reports", ["gpu"], lane("nightly", 8)),
        ],
        [pool("gpu", "gpu", ["search", "reports"], scale_targets=[target("w", 1, 10, 8, 1)])],
    )
    put_topology(store, topology)
    controller = make_controller(store, groups_for(topology), lease, clock)
    seen = []
    for k in range(12):
        reports = [DemandReport("search/batch", float(k % 4) * 2.5)]
        if k < 5:  # interactive stops reporting after tick 4: stale (0) from tick 8 on
            reports.append(DemandReport("search/interactive", 7.0))
        controller.demand_sink().accept(reports)
        outcome = controller.tick()
        pools = outcome.published.pools["gpu"]
        expected = {"search/batch": float(k % 4) * 2.5, "search/interactive": 7.0 if k < 8 else 0.0}
        assert pools.demand == pytest.approx(sum(expected.values()))
        seen.append((clock.now, expected))
        clock.advance(10)
    return seen


def test_export_trace_round_trip(
    store: Store, ticked: list[tuple[float, dict[str, float]]], tmp_path: Path
) -> None:
    output = tmp_path / "trace.csv"
    result = CliRunner().invoke(
        cli,
        ["controller", "export-trace", "--store", store.url, "--output", str(output)],
    )
    assert result.exit_code == 0, result.output
    with output.open() as handle:
        reader = csv.DictReader(handle)
        assert reader.fieldnames == ["time", "lane", "demand"]
        rows = list(reader)
    times = [float(r["time"]) for r in rows]
    assert times == sorted(times) and times[0] == 0
    start = ticked[0][0]
    for at, expected in ticked:
        got = replay(rows, at - start)
        for key in LANES:
            assert got.get(key, 0.0) == expected.get(key, 0.0), (at - start, key)
    assert "reports/nightly" not in {r["lane"] for r in rows}  # never had demand
    # ... and `arklow simulate` / `what-if` read it as it is.
    trace = read_trace(output, known=LANES)
    assert list(zip(trace.times, trace.lanes, trace.demands, strict=True)) == [
        (float(r["time"]), r["lane"], float(r["demand"])) for r in rows
    ]


def test_a_window_starts_with_each_lane_value_at_its_start(
    store: Store, ticked: list[tuple[float, dict[str, float]]]
) -> None:
    since = ticked[5][0] + 1  # between two ticks
    rows = demand_trace(store, since)
    first = {lane: demand for at, lane, demand in rows if at == since}
    assert first == {"search/batch": ticked[5][1]["search/batch"], "search/interactive": 7.0}
    assert all(at > since for at, _lane, _demand in rows[len(first) :])


def test_bad_since_is_one_line_and_exit_2(store: Store, tmp_path: Path) -> None:
    import subprocess
    import sys

    arklow = Path(sys.executable).with_name("arklow")
    result = subprocess.run(
        [str(arklow), "controller", "export-trace", "--store", store.url, "--since", "a week"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.strip().count("\n") == 0 and "since" in result.stderr
