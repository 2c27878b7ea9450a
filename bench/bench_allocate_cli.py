"""End-to-end benchmark of ``arklow allocate``: process start, parse, validate, solve, print.

Run: ``python bench/bench_allocate_cli.py [--quick] [--runs N]``; prints a markdown section and
writes it to ``bench/RESULTS-allocate-cli.md``. Each case runs the real command as a child
process (after one warm-up run) and reads the operating system's accounting of the finished child
(``os.wait4``, in a small launcher process): wall time, user + system CPU, peak resident
memory. Figures are medians.

Targets (issue 19): 10,000 lanes / 1,000 pools <= 0.6 s in JSON, <= 1.0 s in YAML; 100,000 lanes /
10,000 pools <= 5 s in JSON, <= 10 s in YAML, <= 400 MB; one destination with 20,000 lanes <= 1 s. Two yardsticks run in the
same way, interleaved with the command so that drift in the machine's speed hits both: a bare
interpreter that imports what ``arklow allocate`` imports (the import time, reported on its own
line), and a bare interpreter that only ``json.load``s the same topology and demand (the floor:
no program that reads the document can be faster).

``--against DIR`` compares instead with another checkout of the package (``DIR``, e.g. a git
worktree of an earlier revision with its compiled parts built in place): the same command of both,
as ``python -P -m arklow_pulumi.cli`` of this interpreter with ``PYTHONPATH`` set to each tree,
interleaved, on the same inputs (one lane; 10,000 lanes / 1,000 pools; 100,000 lanes / 10,000
pools), their outputs compared byte for byte; written to ``bench/RESULTS-allocate-cli-against.md``.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from topologies import document, one_destination

IMPORTS = (
    "import arklow_pulumi.cli.main, arklow_pulumi.cli.allocate, arklow_pulumi.reading.files, "
    "yaml, pydantic"
)
FLOOR = "import json, sys; [json.load(open(p)) for p in sys.argv[1:]]"


@dataclass(frozen=True)
class Run:
    wall_s: float
    cpu_s: float
    peak_mb: float
    status: int


# Each command is started by a small launcher process rather than forked from this one: Linux
# carries a process's peak resident memory across exec, so a child forked from this benchmark
# (about 32 MB) would report at least that much however little it used itself. The launcher (an
# interpreter without site, about 8 MB) forks the command, waits for it and writes its accounting.
LAUNCHER = """
import os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
with open(sys.argv[1], "w") as out:
    code = os.waitstatus_to_exitcode(status)
    out.write(f"{wall} {usage.ru_utime + usage.ru_stime} {usage.ru_maxrss} {code}")
"""


def run_once(argv: list[str], env: dict[str, str] | None = None, out: int | None = None) -> Run:
    with tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile("r") as account:
        launcher = [sys.executable, "-S", "-c", LAUNCHER, account.name, *argv]
        subprocess.run(launcher, stdout=out or subprocess.DEVNULL, stderr=err, env=env, check=True)
        wall, cpu, peak_kb, code = account.read().split()
        if int(code) != 0:
            err.seek(0)
            raise SystemExit(f"{argv[:4]} failed ({code}): {err.read()[-500:]!r}")
    return Run(float(wall), float(cpu), int(peak_kb) / 1024, int(code))


def interleaved(commands: dict[str, list[str]], runs: int) -> dict[str, list[Run]]:
    """Each command once per round (after a warm-up round), ``runs`` rounds."""
    for argv in commands.values():
        run_once(argv)
    out: dict[str, list[Run]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, argv in commands.items():
            out[name].append(run_once(argv))
    return out


def arklow() -> list[str]:
    script = Path(sys.executable).with_name("arklow")
    return [str(script)] if script.exists() else [sys.executable, "-m", "arklow_pulumi.cli"]


CASES = [
    (
        "10,000 lanes / 1,000 pools",
        "JSON ≤ 0.6 s, YAML ≤ 1.0 s",
        lambda: document(10_000, 1_000),
        ("yaml", "json"),
    ),
    ("one destination, 20,000 lanes", "≤ 1 s", lambda: one_destination(20_000), ("yaml",)),
    (
        "100,000 lanes / 10,000 pools",
        "JSON ≤ 5 s, YAML ≤ 10 s, ≤ 400 MB",
        lambda: document(100_000, 10_000),
        ("yaml", "json"),
    ),
]


def case_paths(tmp: Path, name: str) -> dict[str, Path]:
    return {
        "yaml": tmp / f"{name}.yaml",
        "demand_yaml": tmp / f"{name}-demand.yaml",
        "json": tmp / f"{name}.json",
        "demand_json": tmp / f"{name}-demand.json",
    }


def write_case(k: int, tmp: Path) -> None:
    doc, demand = CASES[k][2]()
    write_documents(doc, demand, tmp, k)


def write_documents(doc: dict[str, Any], demand: dict[str, float], tmp: Path, k: int) -> None:
    paths = case_paths(tmp, f"case{k}")
    paths["yaml"].write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    paths["demand_yaml"].write_text(yaml.safe_dump({"lanes": demand}), encoding="utf-8")
    paths["json"].write_text(json.dumps(doc), encoding="utf-8")
    paths["demand_json"].write_text(json.dumps({"lanes": demand}), encoding="utf-8")


def median(runs: list[Run], attr: str) -> float:
    return statistics.median(getattr(r, attr) for r in runs)


def spread(runs: list[Run]) -> str:
    walls = [r.wall_s for r in runs]
    return f"{min(walls):.2f}–{max(walls):.2f}"


def bench_case(
    label: str, target: str, paths: dict[str, Path], runs: int, forms: tuple[str, ...]
) -> list[str]:
    commands: dict[str, list[str]] = {}
    for form in forms:
        demand = paths[f"demand_{form}"]
        commands[form] = [
            *arklow(),
            "allocate",
            "--topology",
            str(paths[form]),
            "--demand",
            str(demand),
            "--format",
            "json",
        ]
    commands["floor"] = [sys.executable, "-c", FLOOR, str(paths["json"]), str(paths["demand_json"])]
    results = interleaved(commands, runs)
    floor = median(results["floor"], "wall_s")
    rows = []
    for form in forms:
        r = results[form]
        rows.append(
            f"| {label} ({form.upper()}) | **{median(r, 'wall_s'):.2f} s** | {spread(r)} s "
            f"| {median(r, 'cpu_s'):.2f} s | {max(x.peak_mb for x in r):.0f} MB | {target} "
            f"| {median(r, 'wall_s') / floor:.1f}× ({floor:.2f} s) |"
        )
    return rows


AGAINST_CASES = [
    ("one lane", 1, 10, ("yaml", "json")),  # (label, lanes, pools, forms)
    ("10,000 lanes / 1,000 pools", 10_000, 1_000, ("json",)),
    ("100,000 lanes / 10,000 pools", 100_000, 10_000, ("json",)),
]


def machine(load_before: tuple[float, ...], load_after: tuple[float, ...]) -> str:
    return (
        f"Machine: {os.cpu_count()} cores; Python {sys.version.split()[0]}; load average "
        f"{load_before[0]:.1f} before, {load_after[0]:.1f} after"
    )


def publish(name: str, lines: list[str]) -> None:
    """The section printed and written to ``bench/<name>``."""
    text = "\n".join(lines)
    print(text)
    (ROOT / "bench" / name).write_text(text + "\n", encoding="utf-8")


def _tree_run(tree: Path, argv: list[str], output: Path) -> Run:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    with output.open("wb") as out:
        return run_once([sys.executable, "-P", "-m", "arklow_pulumi.cli", *argv], env, out.fileno())


def against(other: Path, runs: int) -> None:
    """This tree's ``arklow allocate`` and ``other``'s, interleaved, on the same inputs."""
    trees = {"this": ROOT, "other": other.resolve()}
    for tree in trees.values():
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "arklow_pulumi")])
    rows = []
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="arklow-bench-") as tmp_dir:
        tmp = Path(tmp_dir)
        for k, (label, _, _, forms) in enumerate(AGAINST_CASES):
            # written by a child process, as in main()
            writer = [sys.executable, __file__, "--write-against", str(k), tmp_dir]
            subprocess.run(writer, check=True)
            paths = case_paths(tmp, f"case{k}")
            for form in forms:
                argv = ["allocate", "--topology", str(paths[form])]
                argv += ["--demand", str(paths[f"demand_{form}"]), "--format", "json"]
                got: dict[str, list[Run]] = {name: [] for name in trees}
                outputs = {name: tmp / f"out-{name}" for name in trees}
                for round_ in range(runs + 1):  # round 0 warms up
                    for name, tree in trees.items():
                        result = _tree_run(tree, argv, outputs[name])
                        if round_:
                            got[name].append(result)
                same = outputs["this"].read_bytes() == outputs["other"].read_bytes()
                this_cpu, other_cpu = median(got["this"], "cpu_s"), median(got["other"], "cpu_s")
                this_mb = max(r.peak_mb for r in got["this"])
                other_mb = max(r.peak_mb for r in got["other"])
                rows.append(
                    f"| {label} ({form.upper()}) | {this_cpu:.3f} s | {other_cpu:.3f} s "
                    f"| **{this_cpu / other_cpu:.2f}×** | {this_mb:.0f} MB | {other_mb:.0f} MB "
                    f"| **{this_mb / other_mb:.2f}×** | {'yes' if same else 'NO'} |"
                )
    load_after = os.getloadavg()
    lines = [
        f"## `arklow allocate` against `{other}`",
        "",
        f"{machine(load_before, load_after)}. Each figure: the command as a "
        "child process (`python -P -m arklow_pulumi.cli`, PYTHONPATH set to each tree), median "
        f"CPU (user + system) and largest peak resident memory of {runs} runs after one warm-up, "
        "the two trees interleaved run by run; the output of the last run of each compared byte "
        "for byte. Each command is started by a small launcher (see `LAUNCHER`), so its peak is its "
        "own.",
        "",
        "| case | CPU, this tree | CPU, other | ratio | peak, this tree | peak, other | ratio "
        "| same output |",
        "|---|---|---|---|---|---|---|---|",
        *rows,
        "",
    ]
    publish("RESULTS-allocate-cli-against.md", lines)


def main() -> None:
    if "--against" in sys.argv:
        runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 5
        against(Path(sys.argv[sys.argv.index("--against") + 1]), runs)
        return
    if "--write-against" in sys.argv:
        at = sys.argv.index("--write-against")
        _, lanes, pools, _ = AGAINST_CASES[int(sys.argv[at + 1])]
        write_documents(*document(lanes, pools), Path(sys.argv[at + 2]), int(sys.argv[at + 1]))
        return
    if "--write-case" in sys.argv:
        at = sys.argv.index("--write-case")
        write_case(int(sys.argv[at + 1]), Path(sys.argv[at + 2]))
        return
    quick = "--quick" in sys.argv
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 5
    # Bytecode as an installed package has it (pip compiles at install, a checkout writes it on
    # first import): with PYTHONDONTWRITEBYTECODE set, as on the machines this runs on, every run
    # would otherwise compile each changed module it imports again.
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(ROOT / "arklow_pulumi")], check=True
    )
    load_before = os.getloadavg()
    imports = interleaved(
        {"bare": [sys.executable, "-c", "pass"], "imports": [sys.executable, "-c", IMPORTS]}, runs
    )
    bare, imported = median(imports["bare"], "wall_s"), median(imports["imports"], "wall_s")
    bare_cpu, imported_cpu = median(imports["bare"], "cpu_s"), median(imports["imports"], "cpu_s")
    rows: list[str] = []
    with tempfile.TemporaryDirectory(prefix="arklow-bench-") as tmp_dir:
        tmp = Path(tmp_dir)
        for k, (label, target, _, forms) in enumerate(CASES[: 2 if quick else 3]):
            # the documents are written by a child process: a child forked from a parent that
            # held them would count the parent's pages in its peak resident memory
            subprocess.run([sys.executable, __file__, "--write-case", str(k), tmp_dir], check=True)
            paths = case_paths(tmp, f"case{k}")
            rows += bench_case(label, target, paths, runs, forms)
    load_after = os.getloadavg()
    lines = [
        "## `arklow allocate` end to end (issue 19: one reader per format)",
        "",
        f"{machine(load_before, load_after)} (a load above the core count "
        "stretches wall time: CPU time is the steadier figure then). Each figure: the real "
        f"command as a child process, median of {runs} runs after one warm-up; wall from start "
        "to exit, CPU = user + system of the child, peak = its largest resident set.",
        "",
        f"Import time: **{imported - bare:.3f} s** wall, **{imported_cpu - bare_cpu:.3f} s** CPU "
        f"(interpreter with the command's imports {imported:.3f} s wall / {imported_cpu:.3f} s CPU, "
        f"bare interpreter {bare:.3f} s / {bare_cpu:.3f} s; medians).",
        "",
        "| case | wall (median) | wall (min–max) | CPU | peak memory | target | ratio to a bare `json.load` of the same document (its wall) |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
    ]
    publish("RESULTS-allocate-cli.md", lines)


if __name__ == "__main__":
    main()
