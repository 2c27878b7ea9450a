"""The README's `arklow allocate` example (examples/topology.yaml, demand.yaml) stays valid and keeps its meaning."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_example_allocates() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "arklow_pulumi.cli",
            "allocate",
            "--format",
            "json",
            "--topology",
            str(ROOT / "examples/topology.yaml"),
            "--demand",
            str(ROOT / "examples/demand.yaml"),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    doc = json.loads(proc.stdout)
    gpu = doc["pools"]["gpu-east"]
    assert gpu["state"] == "constrained" and gpu["desired_replicas"] == 12  # clamped to max
    assert doc["pools"]["reports/cpu"]["state"] == "steady"
    assert doc["lanes"]["reports/nightly"]["admission"] == 8  # headroom in a steady pool
    assert doc["lanes"]["search/interactive"]["held"] == 0
    assert doc["lanes"]["search/batch"]["held"] > 0
