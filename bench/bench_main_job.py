"""Bench: the main job (`arklow dev run`, what `make run` runs after its installs) on a warm
machine: local clouds, two `pulumi up`s, 288 controller ticks, the report. Target: <= 180 s.

Runs in a throwaway copy of the project (Pulumi.yaml, __main__.py, stacks/), so the working
tree's .arklow/ is untouched. Writes bench/RESULTS-main-job.md with the machine's core count and
load. Usage: .venv/bin/python bench/bench_main_job.py [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 180.0
UP = re.compile(r"pulumi up done in (\d+)s")


def one_run() -> tuple[float, list[int]]:
    with tempfile.TemporaryDirectory(prefix="arklow-main-job-") as tmp:
        project = Path(tmp)
        for name in ("Pulumi.yaml", "__main__.py"):
            shutil.copy(ROOT / name, project / name)
        shutil.copytree(ROOT / "stacks", project / "stacks")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PULUMI_", "ARKLOW_"))}
        env["PATH"] = os.pathsep.join(
            [str(ROOT / ".tools" / "bin"), str(ROOT / ".venv" / "bin"), env["PATH"]]
        )
        started = time.perf_counter()
        result = subprocess.run(
            [str(ROOT / ".venv" / "bin" / "arklow"), "dev", "run"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        elapsed = time.perf_counter() - started
        if result.returncode != 0:
            sys.exit(f"arklow dev run failed:\n{result.stderr[-3000:]}")
        return elapsed, [int(s) for s in UP.findall(result.stderr)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=1)
    rounds = parser.parse_args().rounds
    load = os.getloadavg()[0]
    runs = [one_run() for _ in range(rounds)]
    totals = [total for total, _ in runs]
    ups = [u for _, us in runs for u in us]
    median = statistics.median(totals)
    verdict = "met" if median <= TARGET_S else "NOT met"
    lines = [
        "# Main job (`arklow dev run`, warm machine)",
        "",
        f"{os.cpu_count()} cores, 1-minute load average {load:.1f} at the start, {rounds} round(s).",
        "One simulated day: local clouds, `pulumi up` of the dev stack, 288 controller ticks of",
        "300 s on the simulated clock, a second `pulumi up` at noon, the report with 4 charts.",
        "",
        "| figure | value |",
        "|---|---|",
        f"| wall time, median | {median:.0f} s (target <= {TARGET_S:.0f} s: {verdict}) |",
        f"| wall time, each round | {', '.join(f'{t:.0f} s' for t in totals)} |",
        f"| each `pulumi up` | {', '.join(f'{u} s' for u in ups)} |",
        f"| the rest (clouds, ticks, report) | {median - sum(ups) / max(1, rounds):.0f} s |",
        "",
        "`make run` adds its install checks (seconds when warm; the venv install or the engine",
        "build when pyproject.toml changed or on a fresh machine).",
    ]
    (ROOT / "bench" / "RESULTS-main-job.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
