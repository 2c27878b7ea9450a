"""One tick of ``simulate`` is one ``allocate``: the same decision code, not a second one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.simulation.running import arklow, simulate_json, write_trace

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_one_tick_of_simulate_is_allocate(tmp_path: Path) -> None:
    demand = yaml.safe_load((EXAMPLES / "demand.yaml").read_text())["lanes"]
    trace = write_trace(tmp_path / "trace.csv", [(0, lane, d) for lane, d in demand.items()])
    proc = arklow(
        "allocate",
        "--topology",
        EXAMPLES / "topology.yaml",
        "--demand",
        EXAMPLES / "demand.yaml",
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    allocated = json.loads(proc.stdout)["lanes"]
    # one tick of one hour: unit-hours are units
    doc = simulate_json(
        EXAMPLES / "topology.yaml", trace, "--tick", "3600", "--policies", "arklow,static"
    )
    for policy in ("arklow", "static"):
        lanes = doc["policies"][policy]["lanes"]
        assert set(lanes) == set(allocated)
        for key, lane in allocated.items():
            assert lanes[key]["served"] == pytest.approx(lane["allocation"])
            assert lanes[key]["held"] == pytest.approx(lane["held"], abs=1e-9)
            assert lanes[key]["demand"] == pytest.approx(lane["allocation"] + lane["held"])
