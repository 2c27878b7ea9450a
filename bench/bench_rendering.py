"""Benchmark of ``arklow allocate``'s rendering: the JSON contract and the table, in-process.

Run: ``python bench/bench_rendering.py [--quick] [--runs N]``; prints a markdown section and
writes it to ``bench/RESULTS-rendering.md``. Each case allocates a random topology
(``topologies.topology``) once, then times ``allocation_json`` and ``allocation_table`` with the
compiled lane rendering (``arklow_pulumi.cli._render``) and with the Python forced (the module
set aside, as without a compiler), interleaved round by round so that drift in the machine's
speed hits both. The two texts are compared: they must be the same, character for character.
Figures are the minimum and the median of the rounds, with the cyclic collector off as in the
command.
"""

from __future__ import annotations

import gc
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from topologies import topology

from arklow_pulumi.cli import rendering
from arklow_pulumi.core.allocating import Allocation, allocate

CASES = [(10_000, 1_000), (100_000, 10_000)]


def timed(fn: Callable[[], str]) -> tuple[float, str]:
    start = time.perf_counter()
    text = fn()
    return time.perf_counter() - start, text


def bench(result: Allocation, render: Callable[[Allocation], str], runs: int) -> list[str]:
    native = rendering._native
    if native is None:
        raise SystemExit("the compiled rendering is not built (or ARKLOW_PURE_PYTHON=1)")
    times: dict[bool, list[float]] = {True: [], False: []}
    texts: dict[bool, str] = {}
    for _ in range(runs):
        for compiled in (True, False):
            rendering._native = native if compiled else None
            try:
                seconds, texts[compiled] = timed(lambda: render(result))
            finally:
                rendering._native = native
            times[compiled].append(seconds)
    if texts[True] != texts[False]:
        raise SystemExit(f"{render.__name__}: the compiled text differs from the Python's")
    cells = []
    for compiled in (True, False):
        ms = [t * 1e3 for t in times[compiled]]
        cells.append(f"{min(ms):.0f} / {statistics.median(ms):.0f}")
    ratio = min(times[False]) / min(times[True])
    return [*cells, f"{ratio:.1f}×", f"{len(texts[True]) / 1e6:.1f}"]


def main() -> None:
    quick = "--quick" in sys.argv
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 5
    cases = CASES[:1] if quick else CASES
    gc.disable()
    rows = []
    for lanes, pools in cases:
        topo, demand = topology(lanes, pools)
        result = allocate(topo, demand)
        for render in (rendering.allocation_json, rendering.allocation_table):
            cells = bench(result, render, runs)
            rows.append(
                f"| {lanes:,} / {pools:,} | `{render.__name__}` | " + " | ".join(cells) + " |"
            )
    text = "\n".join(
        [
            "## Rendering `arklow allocate`'s output (in-process)",
            "",
            f"Machine: {os.cpu_count()} cores; Python {sys.version.split()[0]}; load average "
            f"{os.getloadavg()[0]:.2f} at the end; {runs} rounds, compiled and Python interleaved.",
            "",
            "| lanes / pools | function | compiled ms (min / median) | Python ms (min / median) "
            "| speed-up (min) | text (M chars) |",
            "|---|---|---|---|---|---|",
            *rows,
            "",
            "Both texts are compared every case and are the same, character for character. The "
            "compiled module renders the lane lines only; the pools (10 per 100 lanes) stay "
            "in Python.",
        ]
    )
    print(text)
    (ROOT / "bench" / "RESULTS-rendering.md").write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
