"""The example traces under examples/traces (``<name>.yaml`` and ``<name>.csv``) and, for each, its
quiet lanes: those whose work ``arklow`` holds (almost) none of, whatever their busy neighbours do.
The example tests assert it; ``bench/bench_simulate.py`` reports their held share."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.simulation.running import arklow

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


def simulate_example(name: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """``arklow simulate`` on the example trace ``name``, with ``extra`` options."""
    return arklow(
        "simulate", "--topology", TRACES / f"{name}.yaml", "--trace", TRACES / f"{name}.csv", *extra
    )
