"""The example traces under examples/traces, replayed as the README's commands do."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.simulation.example_traces import QUIET, TRACES, simulate_example
from tests.simulation.running import simulate_json


@pytest.mark.parametrize("name", list(QUIET))
def test_example_trace(tmp_path: Path, name: str) -> None:
    chart = tmp_path / "chart.png"
    doc = simulate_json(TRACES / f"{name}.yaml", TRACES / f"{name}.csv", "--chart", str(chart))
    assert list(doc["policies"]) == ["arklow", "standalone", "free-for-all", "static"]
    assert chart.read_bytes().startswith(b"\x89PNG")
    arklow_lanes = doc["policies"]["arklow"]["lanes"]
    for lane in QUIET[name]:
        figures = arklow_lanes[lane]
        assert figures["demand"] > 0
        assert figures["held"] <= 0.001 * figures["demand"], lane
    for policy in doc["policies"].values():
        for figures in policy["lanes"].values():
            assert figures["served"] + figures["held"] == pytest.approx(figures["demand"])


def test_example_table(tmp_path: Path) -> None:
    proc = simulate_example("gpu_day", "--policies", "arklow,standalone")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("POLICIES")
    assert "etl/backfill" in proc.stdout
