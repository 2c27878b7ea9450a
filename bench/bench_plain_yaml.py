"""Benchmark of the compiled block-style YAML reader (``arklow_pulumi._plain_yaml``).

Run: ``python bench/bench_plain_yaml.py [--quick] [--runs N] [--cases DIR]``; prints a markdown
section and writes it to ``bench/RESULTS-plain-yaml.md``. The documents are the topologies of
``bench_allocate_cli.py`` (10,000 lanes / 1,000 pools and, without ``--quick``, 100,000 lanes /
10,000 pools), written by its ``--write-case`` in a child process, or taken from ``DIR`` when it
already holds them (``case0.yaml``, ``case0.json``, ...).

In-process, interleaved round by round: the compiled reader, ``yaml_rs`` (what read every plain
document before), ``json.loads`` of the same topology as JSON (the yardstick), and the plain
grammar's check (``is_plain``, which runs before either parser); the reader's value is compared
with ``yaml_rs``'s. End to end: ``arklow allocate --format json`` with and without the compiled
reader (set aside in the child, as when it is not built), interleaved; the minimum wall time.
The in-process figures are taken with the cyclic collector off, as the command runs.
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import yaml_rs

from arklow_pulumi import yaml_plain

CASES = [(0, "10,000 lanes / 1,000 pools"), (2, "100,000 lanes / 10,000 pools")]

COMMAND = """\
import sys
import arklow_pulumi.yaml_plain as y
if sys.argv[1] == "without":
    y._native = None
sys.argv = ["arklow", *sys.argv[2:]]
from arklow_pulumi.cli.main import run
sys.exit(run())
"""


def _yaml_rs(text: str) -> Any:
    return yaml_rs.loads(
        text, parse_datetime=False, duplicate_key_policy=yaml_rs.DuplicateKeyPolicy.Error
    )


def _ms(times: list[float]) -> str:
    ms = [t * 1e3 for t in times]
    return f"{min(ms):.0f} / {statistics.median(ms):.0f}"


def in_process(label: str, yaml_text: str, json_text: str, runs: int) -> list[str]:
    native = yaml_plain._native
    if native is None:
        raise SystemExit("the compiled reader is not built (or ARKLOW_PURE_PYTHON=1)")
    read, value = native.loads(yaml_text)
    if not read or value != _yaml_rs(yaml_text):
        raise SystemExit(f"{label}: the compiled reader does not read it as yaml_rs does")
    del value
    parsers: dict[str, Callable[[], object]] = {
        "compiled reader": lambda: native.loads(yaml_text),
        "yaml_rs": lambda: _yaml_rs(yaml_text),
        "json.loads (JSON form)": lambda: json.loads(json_text),
        "is_plain (grammar check)": lambda: yaml_plain.is_plain(yaml_text),
    }
    times: dict[str, list[float]] = {name: [] for name in parsers}
    gc.disable()  # as in the command (json.loads would otherwise pay for the collector)
    try:
        for _ in range(runs):
            for name, parse in parsers.items():
                start = time.perf_counter()
                parse()
                times[name].append(time.perf_counter() - start)
    finally:
        gc.enable()
    compiled = min(times["compiled reader"])
    return [
        f"| {label} | {name} | {_ms(t)} | {min(t) / compiled:.2f}× |" for name, t in times.items()
    ]


def end_to_end(label: str, topology: Path, demand: Path, runs: int) -> str:
    args = ["allocate", "--topology", str(topology), "--demand", str(demand), "--format", "json"]
    walls: dict[str, list[float]] = {"with": [], "without": []}
    for _ in range(runs):
        for variant in walls:
            start = time.perf_counter()
            subprocess.run(
                [sys.executable, "-c", COMMAND, variant, *args],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            walls[variant].append(time.perf_counter() - start)
    with_, without = min(walls["with"]), min(walls["without"])
    return f"| {label} | {without:.2f} s | **{with_:.2f} s** | {without - with_:.2f} s |"


def main() -> None:
    quick = "--quick" in sys.argv
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 5
    given = Path(sys.argv[sys.argv.index("--cases") + 1]) if "--cases" in sys.argv else None
    load_before = os.getloadavg()
    parse_rows: list[str] = []
    command_rows: list[str] = []
    with tempfile.TemporaryDirectory(prefix="arklow-bench-") as tmp_dir:
        folder = given or Path(tmp_dir)
        for k, label in CASES[:1] if quick else CASES:
            topology, demand = folder / f"case{k}.yaml", folder / f"case{k}-demand.yaml"
            if not topology.exists():
                writer = ROOT / "bench" / "bench_allocate_cli.py"
                subprocess.run(
                    [sys.executable, str(writer), "--write-case", str(k), str(folder)], check=True
                )
            yaml_text = topology.read_text(encoding="utf-8")
            json_text = (folder / f"case{k}.json").read_text(encoding="utf-8")
            parse_rows += in_process(label, yaml_text, json_text, runs)
            del yaml_text, json_text
            command_rows.append(end_to_end(label, topology, demand, max(3, runs // 2)))
    load_after = os.getloadavg()
    lines = [
        "## The compiled block-style YAML reader (issue 8)",
        "",
        f"Machine: {os.cpu_count()} cores; Python {sys.version.split()[0]}; load average "
        f"{load_before[0]:.1f} before, {load_after[0]:.1f} after (other work shared the machine: "
        "the minimum is the steadier figure).",
        "",
        f"Parsing the topology in-process, {runs} rounds interleaved, the cyclic collector off as "
        "in the command (the compiled reader's value is checked equal to yaml_rs's first):",
        "",
        "| document | parser | ms (min / median) | relative to the compiled reader (min) |",
        "|---|---|---|---|",
        *parse_rows,
        "",
        "`arklow allocate --format json` end to end (a child process each run, interleaved; "
        "minimum wall time of "
        f"{max(3, runs // 2)}), without the compiled reader (yaml_rs reads the documents, as "
        "before) and with it:",
        "",
        "| document | without | with | saved |",
        "|---|---|---|---|",
        *command_rows,
        "",
    ]
    text = "\n".join(lines)
    print(text)
    (ROOT / "bench" / "RESULTS-plain-yaml.md").write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
