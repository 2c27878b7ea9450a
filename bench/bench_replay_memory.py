"""Peak memory of long replays (issue 30), before and after, in one run.

Run: ``python bench/bench_replay_memory.py --before DIR [--ten-million]``, where DIR holds the
tree to compare with (for example ``git archive main | tar -x -C DIR``); writes
``bench/RESULTS-replay-memory.md``.

Each run is a real ``arklow simulate`` process (the default four policies, JSON output) of the
five-lane topology of ``tests/simulation/long_replays.py`` over 30,000, 300,000 and 1,000,000
ticks of 60 s (a trace with a row every 1 to 120 ticks, about one an hour), started from a small
launcher that reads the peak resident memory of the process and of the workers it waited for
from the kernel (``wait4``), and its wall time. The before tree runs with the same interpreter,
DIR first on the path. Both outputs must be the same bytes. ``--ten-million`` adds the issue's
three-row trace over 10,000,000 ticks on this tree only (before, it needed about 28 GB). The
estimate ``--max-memory`` compares with its budget is read from a refusal (``--max-memory 1M``).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

import yaml

from arklow_pulumi.simulation.forking import usable_cores
from tests.simulation.long_replays import FIVE, noisy_rows, three_rows

SIZES = (30_000, 300_000, 1_000_000)
TEN_MILLION = 10_000_000
OUT = ROOT / "bench" / "RESULTS-replay-memory.md"
# a child's peak counts the memory of the process it was forked from up to its exec: this small
# launcher keeps that floor low (tests/simulation/test_bounded.py reads peaks the same way)
LAUNCHER = """
import os, subprocess, sys, time
started = time.monotonic()
child = subprocess.Popen(sys.argv[2:], stdout=open(sys.argv[1], "wb"))
_pid, status, usage = os.wait4(child.pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss, time.monotonic() - started)
"""


@dataclass(frozen=True)
class Measured:
    peak_mib: float
    wall_s: float
    output: bytes


def measure(tree: Path, args: list[str], out: Path) -> Measured:
    """One ``arklow`` process run from ``tree``: its peak memory, wall time and stdout."""
    command = [sys.executable, "-m", "arklow_pulumi.cli", *args]
    proc = subprocess.run(
        [sys.executable, "-c", LAUNCHER, str(out), *command],
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )
    code, kib, wall = proc.stdout.split()
    if code != "0":
        raise SystemExit(f"{tree}: arklow {' '.join(args)} failed: {proc.stderr.strip()}")
    return Measured(int(kib) / 1024, float(wall), out.read_bytes())


def estimate_mib(args: list[str]) -> str:
    """The estimate a ``--max-memory 1M`` refusal prints."""
    proc = subprocess.run(
        [sys.executable, "-m", "arklow_pulumi.cli", *args, "--max-memory", "1M"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    found = re.search(r"need about ([\d,.]+ [MG]iB)", proc.stderr)
    return found.group(1) if found else "?"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", type=Path, required=True, help="the tree to compare with")
    parser.add_argument("--ten-million", action="store_true")
    options = parser.parse_args()
    before = options.before.resolve()
    rows = []
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        topology = tmp / "five.yaml"
        topology.write_text(yaml.safe_dump(FIVE), encoding="utf-8")
        for ticks in SIZES:
            trace = tmp / f"trace{ticks}.csv"
            trace.write_text("\n".join(noisy_rows(ticks, every=120)) + "\n", encoding="utf-8")
            args = ["simulate", "--topology", str(topology), "--trace", str(trace)]
            args += ["--format", "json"]
            old = measure(before, args, tmp / "before.json")
            new = measure(ROOT, args, tmp / "after.json")
            if old.output != new.output:
                raise SystemExit(f"{ticks} ticks: the JSON differs before and after")
            rows.append((f"{ticks:,}", old, new, estimate_mib(args)))
            print(rows[-1][0], old.peak_mib, new.peak_mib, file=sys.stderr)
        if options.ten_million:
            trace = tmp / "three.csv"
            trace.write_text(three_rows(TEN_MILLION), encoding="utf-8")
            args = ["simulate", "--topology", str(topology), "--trace", str(trace)]
            args += ["--format", "json"]
            new = measure(ROOT, args, tmp / "after.json")
            rows.append((f"{TEN_MILLION:,} (three rows)", None, new, estimate_mib(args)))
    OUT.write_text(report(rows), encoding="utf-8")
    print(OUT.read_text(encoding="utf-8"))


def report(rows: list[tuple[str, Measured | None, Measured, str]]) -> str:
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    lines = [
        "# Replay memory (issue 30)",
        "",
        f"Machine: {os.cpu_count()} cores ({usable_cores()} usable), Python "
        f"{platform.python_version()}, load average at the end {load} (shared machine). "
        "`bench/bench_replay_memory.py`: `arklow simulate` (the four default policies, JSON) "
        "of the five-lane topology of `tests/simulation/long_replays.py` at 60 s ticks, each a "
        "real process; peak resident memory of the process and its workers, and wall time, "
        "before (main's tree) and after in one run. Before and after printed the same JSON, "
        "byte for byte.",
        "",
        "| ticks | peak before | peak after | after / before | wall before | wall after | "
        "`--max-memory` estimate |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, old, new, estimate in rows:
        if old is None:
            lines.append(
                f"| {name} | (not run) | {new.peak_mib:,.0f} MiB | | | {new.wall_s:,.1f} s "
                f"| {estimate} |"
            )
            continue
        lines.append(
            f"| {name} | {old.peak_mib:,.0f} MiB | {new.peak_mib:,.0f} MiB "
            f"| {new.peak_mib / old.peak_mib:.3f}× | {old.wall_s:,.1f} s | {new.wall_s:,.1f} s "
            f"| {estimate} |"
        )
    first, last = rows[0][2], rows[len(SIZES) - 1][2]
    lines += [
        "",
        f"After, {SIZES[-1] // SIZES[0]}× the ticks take {last.peak_mib / first.peak_mib:.2f}× "
        "the memory: the per-tick totals are folded a chunk of ticks at a time and the chart's "
        "series keep at most 8,192 points a column (`arklow_pulumi/simulation/aggregating.py`); "
        "what remains grows with the trace's rows and the topology. Wall times are of a shared "
        "machine (the speed comparison is in the simulation section).",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    started = time.monotonic()
    main()
    print(f"{time.monotonic() - started:.0f} s", file=sys.stderr)
