"""Benchmark of ``arklow what-if`` at the size issue 12 sets: a 7-day trace at 1-minute ticks
(10,081 ticks) for 1,000 lanes / 100 pools, against one ``simulate --policies arklow`` of the
same trace (the stricter yardstick: the default four-policy simulate costs more). Inputs and the
one-member move are those of ``bench/bench_simulate.py`` (which records the 1-day figures).

Run: ``python bench/bench_whatif.py [--days N]``; writes ``bench/RESULTS-whatif.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from bench_simulate import fleet_figures, simulate_files, timed, what_if_files, write_move_files


def measure(days: int, tmp: Path) -> dict[str, Any]:
    files = write_move_files(tmp, days)
    sim_wall, sim_cpu, _ = timed(lambda: simulate_files(files, ("arklow",)))
    wi_wall, wi_cpu, result = timed(lambda: what_if_files(files))
    return {
        **fleet_figures(days, files),
        "simulate": (sim_wall, sim_cpu),
        "what_if": (wi_wall, wi_cpu),
        "flagged": len(result.flagged),
    }


# Issue 21 (admission simulated, per pool and per resource figures, --change-at, the growth
# flags): instructions (millions) of ``what-if`` per simulated hour of the bench fleet (hours
# 1-2), one process, before (977b2b0) and after.
IR21_HOUR = (385, 450)
ISSUE21 = (
    "**Issue 21** (admission simulated, per pool and per resource figures, `--change-at`, the "
    "growth flags): cachegrind instructions of `what-if` per simulated hour of this fleet (hours "
    f"1-2), one process, on 2 cores: {IR21_HOUR[0]}M before (977b2b0) → {IR21_HOUR[1]}M after "
    f"({IR21_HOUR[1] / IR21_HOUR[0]:.2f}×; `simulate`: 1.13×, bench/RESULTS-simulate.md). The "
    "7-day figures above were recorded before issue 21."
)


def report(m: dict[str, Any]) -> str:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    sim, wi = m["simulate"], m["what_if"]
    return "\n".join(
        [
            "# What-if (issue 12)",
            "",
            f"Machine: {os.cpu_count()} cores; Python {platform.python_version()}; load average "
            f"at the end {load} (shared machine: wall times inflated, CPU time is the "
            "process's own).",
            "",
            f"Trace: {m['days']} days at 1-minute ticks ({m['ticks']:,} ticks), {m['rows']:,} rows, "
            f"{m['lanes']:,} lanes / {m['pools']} pools split into {m['units']} independent units; "
            f"the change moves d0 to another pool ({m['shared_units']} units identical on both sides, "
            f"simulated once; {m['flagged']} lanes flagged). Each run: load topology, read the "
            "CSV, simulate.",
            "",
            "| run | wall | CPU |",
            "|---|---|---|",
            f"| `simulate --policies arklow` | {sim[0]:.1f} s | {sim[1]:.1f} s |",
            f"| `what-if` | {wi[0]:.1f} s | {wi[1]:.1f} s |",
            "",
            f"what-if / one simulate: {wi[1] / sim[1]:.2f}× CPU, {wi[0] / sim[0]:.2f}× wall "
            "(target ≤ 2×).",
            "",
            ISSUE21,
            "",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--days", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        text = report(measure(args.days, Path(tmp)))
    (ROOT / "bench" / "RESULTS-whatif.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
