"""The scale policy against the single-tick rule and the clouds' own autoscalers (issue 27).

Run: ``python bench/bench_scaling.py [--baseline DIR]``; writes ``bench/RESULTS-scaling.md``.

Two traces of ``bench/scaling_inputs.py`` (12 destinations, 40 lanes, 3 resources, 4 shared
pools, 3 noisy neighbours, two flash crowds, a coupled pool): a week and one noisy day. Each runs
at 1- and 5-minute ticks and at launch delays of 120, 300 and 600 s through ``arklow simulate``
as a user runs it (a child process, ``--policies arklow,single-tick,cloud-autoscaler --format
json --ticks-csv``). From its JSON and its ticks CSV, per policy:

- quiet lanes' held work as a share of their demand (goal ≤ 0.1 %, and never above
  ``single-tick``'s nor ``cloud-autoscaler``'s);
- replica-hours (goal ≤ 1.06× ``single-tick``'s and ≤ ``cloud-autoscaler``'s), and their ratio
  to the floor Σ ⌈demand × (1 + headroom) / units⌉ × tick over pools and ticks (the single-tick
  sizing of each tick's pool demand, bounds included, through ``core.scaling.desired_replicas``);
- scale actions (goal ≤ 0.5× ``single-tick``'s at 5-minute ticks, ≤ 0.25× at 1-minute ticks);
- reversals: per target and day, moves that turn the previous move around less than 10 minutes
  after it (reported, no goal), and inside the pool's window (must be 0 but for held work);
- each decision's reason, counted over the run (the JSON's ``pools.<pool>.reasons``).

Then a grid of the knobs (``tolerance`` and ``headroom_kept`` at the 300 s window, and the window
at 120 and 600 s at the defaults, set on every pool) on both traces at their own ticks and the
slowest launch (600 s): which goals each setting meets. Then the reproductions (tolerance eating
the headroom, twice; a pool scaling for work a coupled pool holds; a staged scale-up), each a
small topology and trace replayed through ``arklow simulate``; with ``--baseline DIR`` (a
checkout of the commit before this round) through that tree's ``arklow simulate`` too.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import yaml
from scaling_inputs import quiet_lanes, write_inputs

from arklow_pulumi.core.policy import DEFAULT_POLICY
from arklow_pulumi.core.scaling import desired_replicas
from arklow_pulumi.reading.files import load_topology

POLICIES = ("arklow", "single-tick", "cloud-autoscaler")
CHURN_S = 600.0
TICKS = (60.0, 300.0)
DELAYS = (120.0, 300.0, 600.0)
GRID_DELAY = 600.0
# the knob grid, set on every pool: tolerance × headroom_kept at the default window, and the
# window at the other defaults
DEFAULTS = {
    "scale_down_window_s": DEFAULT_POLICY.scale_down_window_s,
    "tolerance": DEFAULT_POLICY.tolerance,
    "headroom_kept": DEFAULT_POLICY.headroom_kept,
}
GRID = [
    {**DEFAULTS, "tolerance": tol, "headroom_kept": kept}
    for tol in (0.02, 0.05, 0.1)
    for kept in (0.5, 0.75, 1.0)
] + [{**DEFAULTS, "scale_down_window_s": w} for w in (120.0, 600.0)]


def simulate(
    root: Path, topology: Path, trace: Path, tick: float, csv_out: Path | None,
    policies: tuple[str, ...] = POLICIES, delay: float = 120.0,
) -> tuple[dict[str, Any], float]:  # fmt: skip
    """``arklow simulate`` of the tree at ``root`` in a child process: its JSON and wall time."""
    command = [
        sys.executable, "-m", "arklow_pulumi.cli", "simulate", "--topology", str(topology),
        "--trace", str(trace), "--tick", f"{tick:g}", "--policies", ",".join(policies),
        "--format", "json", "--launch-delay", f"{delay:g}",
    ]  # fmt: skip
    if csv_out is not None:
        command += ["--ticks-csv", str(csv_out)]
    env = {**os.environ, "PYTHONPATH": str(root)}
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=root, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"simulate failed ({root}): {done.stderr.strip()}")
    return json.loads(done.stdout), wall


def read_ticks(path: Path) -> dict[str, dict[str, list[dict[str, str]]]]:
    """The ticks CSV's target and pool rows: ``{policy: {"target:<name>"|"pool:<name>": rows}}``."""
    out: dict[str, dict[str, list[dict[str, str]]]] = defaultdict(lambda: defaultdict(list))
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row["kind"] in ("target", "pool"):
                out[row["policy"]][f"{row['kind']}:{row['name']}"].append(row)
    return out


def moves(rows: list[dict[str, str]]) -> list[tuple[float, int]]:
    """A target's moves: (time, +1 / -1) of each tick whose desired count differs from the last."""
    out = []
    for a, b in itertools.pairwise(rows):
        da, db = int(a["desired"]), int(b["desired"])
        if da != db:
            out.append((float(b["time"]), 1 if db > da else -1))
    return out


def reversals(rows: list[dict[str, str]]) -> int:
    """Moves that turn the previous move around less than ``CHURN_S`` after it."""
    pairs = itertools.pairwise(moves(rows))
    return sum(1 for (t0, d0), (t1, d1) in pairs if d0 != d1 and t1 - t0 < CHURN_S)


def churn(rows: list[dict[str, str]]) -> int:
    """The looser reading: direction changes less than ``CHURN_S`` after the previous one."""
    changes = [t for (_, d0), (t, d1) in itertools.pairwise(moves(rows)) if d0 != d1]
    return sum(1 for t0, t1 in itertools.pairwise(changes) if t1 - t0 < CHURN_S)


def held_onsets(rows: list[dict[str, str]]) -> int:
    """Ticks on which a pool starts holding work (held units above 0 after a tick without)."""
    held = [float(r["held"]) > 1e-9 for r in rows]
    return sum(1 for a, b in itertools.pairwise(held) if b and not a)


def topo_has_targets(topology: Path, pool: str) -> bool:
    return bool(load_topology(topology).pools[pool].scale_targets)


def floor_replica_hours(
    topology: Path, pools: dict[str, list[dict[str, str]]], tick: float
) -> float:
    """Σ over pools and ticks of the single-tick sizing of the tick's pool demand, in hours."""
    topo = load_topology(topology)
    total = 0
    for key, rows in pools.items():
        if not key.startswith("pool:"):
            continue
        pool = topo.pools[key[5:]]
        if not pool.scale_targets:
            continue
        for row in rows:
            demand = float(row["demand"])
            total += sum(desired_replicas(demand, pool.headroom, pool.scale_targets, pool.capacity))
    return total * tick / 3600


def inside_window(rows: list[dict[str, str]], window: float) -> int:
    """Moves that turn the previous one around at most ``window`` seconds after it, other than
    a scale-up for held work (the reason the ticks CSV gives)."""
    out = 0
    last: tuple[float, int] | None = None
    for a, b in itertools.pairwise(rows):
        da, db = int(a["desired"]), int(b["desired"])
        if da == db:
            continue
        move = (float(b["time"]), 1 if db > da else -1)
        held = b.get("reason") in ("held-work", "at-max") and move[1] > 0
        if last is not None and move[1] != last[1] and move[0] - last[0] <= window and not held:
            out += 1
        last = move
    return out


def figures(
    result: dict[str, Any], ticks: dict[str, dict[str, list[dict[str, str]]]], topology: Path,
    tick: float, days: float, policies: tuple[str, ...] = POLICIES,
) -> dict[str, dict[str, Any]]:  # fmt: skip
    quiet = set(quiet_lanes())
    out = {}
    for policy in policies:
        figure = result["policies"][policy]
        lanes = figure["lanes"]
        demand = sum(v["demand"] for k, v in lanes.items() if k in quiet)
        held = sum(v["held"] for k, v in lanes.items() if k in quiet)
        rows = ticks[policy]
        targets = {k: v for k, v in rows.items() if k.startswith("target:")}
        flips = [reversals(v) / days for v in targets.values()]
        window = DEFAULT_POLICY.scale_down_window_s
        reasons: dict[str, int] = defaultdict(int)
        for pool in figure.get("pools", {}).values():
            for reason, n in pool.get("reasons", {}).items():
                reasons[reason] += n
        out[policy] = {
            "quiet_held": held / demand,
            "replica_hours": figure["replica_hours"],
            "scale_actions": figure["scale_actions"],
            "floor": floor_replica_hours(topology, rows, tick),
            "reversals_max": max(flips),
            "reversals_mean": sum(flips) / len(flips),
            "inside_window": sum(inside_window(v, window) for v in targets.values()),
            "reasons": dict(reasons),
        }
    return out


# -- the three reproductions -----------------------------------------------------------


def _target(name: str, lo: int, hi: int, units: float, replicas: int) -> dict[str, Any]:
    return {
        "kind": "aws_asg", "name": name, "region": "us-east-1", "min_replicas": lo,
        "max_replicas": hi, "units_per_replica": units, "replicas": replicas,
    }  # fmt: skip


REPRODUCTIONS: dict[str, tuple[str, dict[str, Any], list[tuple[float, str, float]]]] = {
    # 10 replicas of 1 unit, headroom 0.1, a pool tolerance of 0.2: demand 9, then 10.8 at 10 min
    # (needed 11.88 is within 20 % of the 10 supplied, but 0.8 units are held)
    "tolerance": (
        "demand rises from 9 to 10.8 on a pool of 10 (headroom 0.1, tolerance 0.2)",
        {
            "destinations": [
                {"name": "a", "resources": ["gpu"], "lanes": [{"name": "x", "limit": 100}]}
            ],
            "pools": [
                {
                    "name": "p",
                    "resource": "gpu",
                    "members": ["a"],
                    "scale_policy": {"tolerance": 0.2},
                    "scale_targets": [_target("g", 1, 50, 1.0, 10)],
                }
            ],
        },
        [(0, "a/x", 9.0), (600, "a/x", 10.8), (1800, "a/x", 10.8)],
    ),
    # issue 27's: 9 replicas of 4 units, tolerance and headroom 0.1, demand rising one unit
    # every 10 minutes from 30 to 37; launches take 180 s
    "slow-tolerance": (
        "demand rising 30 → 37 by one unit every 10 minutes on 9 replicas of 4 units "
        "(tolerance and headroom 0.1, launch delay 180 s)",
        {
            "destinations": [
                {"name": "a", "resources": ["gpu"], "lanes": [{"name": "x", "limit": 1000}]}
            ],
            "pools": [
                {
                    "name": "p",
                    "resource": "gpu",
                    "members": ["a"],
                    "scale_policy": {"tolerance": 0.1},
                    "scale_targets": [_target("g", 1, 40, 4.0, 9)],
                }
            ],
        },
        [(600.0 * k, "a/x", 30.0 + k) for k in range(8)] + [(4800.0, "a/x", 37.0)],
    ),
    # a lane costs gpu 1 + llm 10; the llm quota (100, fixed) lets 10 units through
    "coupled": (
        "gpu pool at 1 replica of 4 units beside a fixed llm quota of 100; the lane demands 40",
        {
            "destinations": [
                {
                    "name": "a",
                    "resources": ["gpu", "llm"],
                    "lanes": [{"name": "x", "limit": 100, "cost": {"gpu": 1, "llm": 10}}],
                }
            ],
            "pools": [
                {
                    "name": "gpu",
                    "resource": "gpu",
                    "members": ["a"],
                    "scale_targets": [_target("g", 1, 20, 4.0, 1)],
                },
                {"name": "llm", "resource": "llm", "members": ["a"], "capacity": 100},
            ],
        },
        [(0, "a/x", 40.0), (1200, "a/x", 40.0)],
    ),
    # a pool at 2 replicas of 4 units meets 150 units of work
    "staged": (
        "a pool at 2 replicas of 4 units meets 150 units of work (max 60)",
        {
            "destinations": [
                {"name": "a", "resources": ["gpu"], "lanes": [{"name": "x", "limit": 200}]}
            ],
            "pools": [
                {
                    "name": "p",
                    "resource": "gpu",
                    "members": ["a"],
                    "scale_targets": [_target("g", 2, 60, 4.0, 2)],
                }
            ],
        },
        [(0, "a/x", 4.0), (300, "a/x", 150.0), (1200, "a/x", 150.0)],
    ),
}


def reproduction(root: Path, folder: Path, name: str) -> dict[str, Any]:
    """Replay one reproduction through the tree at ``root``: the target's desired counts per
    tick (arklow), the replica-hours and held unit-hours of ``arklow`` (and ``single-tick`` when
    the tree has it)."""
    _what, doc, rows = REPRODUCTIONS[name]
    topology, trace = folder / f"{name}.yaml", folder / f"{name}.csv"
    topology.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    trace.write_text(
        "time,lane,demand\n" + "".join(f"{t:g},{lane},{d:g}\n" for t, lane, d in rows),
        encoding="utf-8",
    )
    csv_out = folder / f"{name}-{abs(hash(str(root)))}.ticks.csv"
    current = root == ROOT
    policies = POLICIES if current else ("arklow", "single-tick")
    delay = 180.0 if name == "slow-tolerance" else 120.0
    result, _ = simulate(root, topology, trace, 60.0, csv_out if current else None, policies, delay)
    out: dict[str, Any] = {}
    for policy in policies:
        figure = result["policies"][policy]
        out[policy] = {
            "replica_hours": figure["replica_hours"],
            "held": sum(v["held"] for v in figure["lanes"].values()),
        }
    if current:
        ticks = read_ticks(csv_out)
        for policy in policies:
            series = next(v for k, v in ticks[policy].items() if k.startswith("target:"))
            out[policy]["desired"] = runs([int(r["desired"]) for r in series])
    return out


def runs(values: list[int]) -> str:
    """``[2, 2, 42, 42, 42]`` as ``2 ×2, 42 ×3``."""
    return ", ".join(f"{v} ×{len(list(g))}" for v, g in itertools.groupby(values))


def one_run(
    folder: Path, name: str, topology: Path, trace: Path, tick: float, delay: float
) -> dict[str, Any]:
    csv_out = folder / f"{name}-{tick:g}-{delay:g}.ticks.csv"
    result, wall = simulate(ROOT, topology, trace, tick, csv_out, POLICIES, delay)
    days = 7.0 if name == "week" else 1.0
    figs = figures(result, read_ticks(csv_out), topology, tick, days)
    csv_out.unlink()
    return {"trace": name, "tick": tick, "delay": delay, "wall": wall, "figures": figs}


def run_matrix(folder: Path, inputs: dict[str, tuple[Path, Path, float]]) -> list[dict[str, Any]]:
    """Every trace at every tick and launch delay (two child processes at a time)."""
    jobs = [
        (name, topology, trace, tick, delay)
        for name, (topology, trace, _own) in inputs.items()
        for tick in TICKS
        for delay in DELAYS
    ]
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(lambda job: one_run(folder, *job), jobs))


def run_grid(
    folder: Path, inputs: dict[str, tuple[Path, Path, float]]
) -> list[tuple[dict[str, float], dict[str, dict[str, Any]]]]:
    """Every grid setting on both traces at their own tick and the slowest launch: its figures
    (arklow, with single-tick and cloud-autoscaler of the same run beside it)."""

    def one(k: int, setting: dict[str, float]) -> dict[str, dict[str, Any]]:
        out = {}
        for name, (topology, trace, tick) in inputs.items():
            doc = yaml.safe_load(topology.read_text(encoding="utf-8"))
            for pool in doc["pools"]:
                pool["scale_policy"] = setting
            changed = folder / f"grid-{k}.yaml"
            changed.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
            csv_out = folder / f"grid-{k}-{name}.ticks.csv"
            result, _ = simulate(ROOT, changed, trace, tick, csv_out, ("arklow",), GRID_DELAY)
            days = 7.0 if name == "week" else 1.0
            ticks = read_ticks(csv_out)
            csv_out.unlink()
            out[name] = figures(result, ticks, changed, tick, days, ("arklow",))["arklow"]
        return out

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(one, range(len(GRID)), GRID))
    return list(zip(GRID, results, strict=True))


def goals_met(a: dict[str, Any], s: dict[str, Any], c: dict[str, Any] | None, tick: float
              ) -> dict[str, bool]:  # fmt: skip
    """Issue 27's goals for one run: ``a`` against single-tick's ``s`` and cloud's ``c``."""
    eps = 1 + 1e-9
    met = {
        "quiet held ≤ 0.1 %": a["quiet_held"] <= 0.001,
        "held ≤ single-tick's": a["quiet_held"] <= s["quiet_held"] * eps + 1e-12,
        "replica-hours ≤ 1.06× single-tick's": a["replica_hours"] <= 1.06 * s["replica_hours"],
        f"actions ≤ {0.25 if tick < 300 else 0.5}× single-tick's": a["scale_actions"]
        <= (0.25 if tick < 300 else 0.5) * s["scale_actions"],
    }
    if c is not None:
        met["held ≤ cloud-autoscaler's"] = a["quiet_held"] <= c["quiet_held"] * eps + 1e-12
        met["replica-hours ≤ cloud-autoscaler's"] = a["replica_hours"] <= c["replica_hours"] * eps
    return met


def _pct(x: float) -> str:
    return f"{100 * x:.4f}%"


def _cell(text: str, ok: bool) -> str:
    return text if ok else f"**{text}**"


def matrix_report(matrix: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| trace | tick | launch delay | policy | quiet held | replica-hours | ÷ single-tick | "
        "÷ floor | scale actions | ÷ single-tick | reversals < 10 min / target / day (max) | "
        "inside the window | simulate wall |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in matrix:
        f = r["figures"]
        s = f["single-tick"]
        for policy in POLICIES:
            p = f[policy]
            lines.append(
                f"| {r['trace']} | {r['tick']:g} s | {r['delay']:g} s | {policy} | "
                f"{_pct(p['quiet_held'])} | {p['replica_hours']:,.1f} | "
                f"{p['replica_hours'] / s['replica_hours']:.3f}× | "
                f"{p['replica_hours'] / p['floor']:.3f}× | {p['scale_actions']:,} | "
                f"{p['scale_actions'] / s['scale_actions']:.3f}× | {p['reversals_max']:.1f} | "
                f"{p['inside_window']} | {r['wall']:.1f} s |"
            )
    lines += ["", "Goals at the defaults (arklow), per run:", ""]
    missed: dict[str, int] = defaultdict(int)
    for r in matrix:
        f = r["figures"]
        met = goals_met(f["arklow"], f["single-tick"], f["cloud-autoscaler"], r["tick"])
        for k, v in met.items():
            if not v:
                missed[k] += 1
        lines.append(
            f"- {r['trace']}, {r['tick']:g} s ticks, {r['delay']:g} s launches: "
            + "; ".join(f"{k}: {'met' if v else '**missed**'}" for k, v in met.items())
        )
    lines += ["", "Goals missed (runs of 12): " + (", ".join(f"{k} {v}" for k, v in missed.items())
              or "none") + "."]  # fmt: skip
    reasons: dict[str, int] = defaultdict(int)
    for r in matrix:
        for k, v in r["figures"]["arklow"]["reasons"].items():
            reasons[k] += v
    total = sum(reasons.values()) or 1
    lines += [
        "",
        "Why targets were where they were (arklow, every run, (tick, target) decisions): "
        + ", ".join(f"{k} {100 * v / total:.1f} %" for k, v in sorted(reasons.items(),
                                                                     key=lambda kv: -kv[1]))
        + ".",
    ]  # fmt: skip
    return lines


def grid_report(
    grid: list[tuple[dict[str, float], dict[str, dict[str, Any]]]], matrix: list[dict[str, Any]],
    inputs: dict[str, tuple[Path, Path, float]],
) -> list[str]:  # fmt: skip
    base = {
        r["trace"]: r["figures"]
        for r in matrix
        if r["delay"] == GRID_DELAY and r["tick"] == inputs[r["trace"]][2]
    }
    lines = [
        "",
        "## The knobs, every pool set alike (600 s launches, each trace at its own tick)",
        "",
        "Ratios are to the same trace's single-tick run above. **Bold**: a goal missed. The "
        "defaults are marked.",
        "",
        "| window s | tolerance | headroom kept | week held | week rh ÷ st | week actions ÷ st | "
        "day held | day rh ÷ st | day actions ÷ st | goals met (of 12) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for setting, figs in grid:
        cells, count = [], 0
        for name in ("week", "noisy_day"):
            a, s, c = figs[name], base[name]["single-tick"], base[name]["cloud-autoscaler"]
            met = goals_met(a, s, c, inputs[name][2])
            count += sum(met.values())
            held_ok = met["quiet held ≤ 0.1 %"] and met["held ≤ single-tick's"]
            act_key = next(k for k in met if k.startswith("actions"))
            cells += [
                _cell(_pct(a["quiet_held"]), held_ok),
                _cell(f"{a['replica_hours'] / s['replica_hours']:.3f}×",
                      met["replica-hours ≤ 1.06× single-tick's"]),
                _cell(f"{a['scale_actions'] / s['scale_actions']:.3f}×", met[act_key]),
            ]  # fmt: skip
        mark = " (defaults)" if setting == DEFAULTS else ""
        lines.append(
            f"| {setting['scale_down_window_s']:g}{mark} | {setting['tolerance']:g} | "
            f"{setting['headroom_kept']:g} | " + " | ".join(cells) + f" | {count} |"
        )
    return lines


def repro_report(repro: dict[str, dict[str, Any]], revision: str) -> list[str]:
    lines = ["", "## The reproductions", ""]
    for name, r in repro.items():
        what = REPRODUCTIONS[name][0]
        cur = r["current"]
        lines.append(f"- **{name}** ({what}), 1-minute ticks:")
        for policy in POLICIES:
            lines.append(
                f"  - {policy}: desired per tick {cur[policy]['desired']}; held "
                f"{cur[policy]['held']:.3f} unit-hours, {cur[policy]['replica_hours']:.2f} "
                "replica-hours"
            )
        if r["before"]:
            b = r["before"]["arklow"]
            lines.append(
                f"  - arklow before ({revision}): held {b['held']:.3f} unit-hours, "
                f"{b['replica_hours']:.2f} replica-hours"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="a checkout of the commit before this round")
    args = parser.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        inputs = write_inputs(folder)
        matrix = run_matrix(folder, inputs)
        grid = run_grid(folder, inputs)
        repro = {
            name: {
                "current": reproduction(ROOT, folder, name),
                "before": reproduction(Path(args.baseline), folder, name) if args.baseline else None,
            }
            for name in REPRODUCTIONS
        }  # fmt: skip
    revision = ""
    if args.baseline:
        revision = subprocess.run(
            ["git", "-C", args.baseline, "rev-parse", "--short", "HEAD"], capture_output=True,
            text=True, check=False,
        ).stdout.strip() or args.baseline  # fmt: skip
    load = os.getloadavg()
    lines = [
        "# Scale policy against single-tick and the clouds' autoscalers (issue 27)",
        "",
        f"Machine: {os.cpu_count()} cores; Python {platform.python_version()}; load average at the "
        f"end {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}; {time.perf_counter() - started:.0f} s "
        "in all. Recorded with `python bench/bench_scaling.py"
        + (" --baseline DIR`" if args.baseline else "`") + ".",
        "",
        "Inputs: `bench/scaling_inputs.py` (12 destinations, 40 lanes, 3 resources, 4 shared "
        "pools, 3 noisy neighbours with bursts and one-minute blips, two flash crowds at 10× for "
        "20 minutes a day, a coupled pool: a fixed llm quota beside `gpu-east`). Each trace runs "
        "at each tick and launch delay through `arklow simulate --policies "
        "arklow,single-tick,cloud-autoscaler --format json --ticks-csv` as a child process, at "
        "the defaults (window 300 s, step-down 100 %, tolerance "
        f"{DEFAULT_POLICY.tolerance:g}, headroom kept {DEFAULT_POLICY.headroom_kept:g}).",
        "",
    ]  # fmt: skip
    lines += matrix_report(matrix)
    lines += grid_report(grid, matrix, inputs)
    lines += repro_report(repro, revision)
    (ROOT / "bench" / "RESULTS-scaling.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
