"""The example traces under examples/traces, replayed as the README's commands do."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.simulation.running import arklow, simulate_json

TRACES = Path(__file__).resolve().parents[2] / "examples" / "traces"
QUIET = {
    "gpu_day": ["search/interactive", "search/batch", "chat/live"],
    "fleet": [
        "search/interactive",
        "chat/live",
        "vision/thumbnails",
        "speech/transcribe",
        "billing/invoices",
        "indexer/summaries",
        "alerts/page",
        "audit/scan",
    ],
}


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
    proc = arklow(
        "simulate",
        "--topology",
        TRACES / "gpu_day.yaml",
        "--trace",
        TRACES / "gpu_day.csv",
        "--policies",
        "arklow,standalone",
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("POLICIES")
    assert "etl/backfill" in proc.stdout
