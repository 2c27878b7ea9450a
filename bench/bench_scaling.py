"""The scale policy against the single-tick rule on harder traces (issue 21).

Run: ``python bench/bench_scaling.py [--baseline DIR]``; writes ``bench/RESULTS-scaling.md``.

Two traces of ``bench/scaling_inputs.py`` (12 destinations, 40 lanes, 3 resources, 4 shared
pools, 3 noisy neighbours, two flash crowds, a coupled pool): a week at 1-minute ticks and one
noisy day at 5-minute ticks. Each runs through ``arklow simulate`` as a user runs it (a child
process, ``--policies arklow,single-tick --format json --ticks-csv``), timed end to end. From
its JSON and its ticks CSV, per policy:

- quiet lanes' held work as a share of their demand (goal ≤ 0.1 %, and never above
  ``single-tick``'s);
- replica-hours (goal ≤ 1.03× ``single-tick``'s), and their ratio to the floor
  Σ ⌈demand × (1 + headroom) / units⌉ × tick over pools and ticks (the single-tick sizing of
  each tick's pool demand, bounds included, through ``core.scaling.desired_replicas``);
- scale actions (goal ≤ 1/3 of ``single-tick``'s);
- reversal churn: per target and day, the moves of its desired count that turn the previous
  move around less than 10 minutes after it (goal ≤ 1; also shown in the looser reading, a
  direction change less than 10 minutes after the previous direction change);
- held onsets: per pool and day, the ticks on which the pool starts holding work (the scale-ups
  the policy must make at once), which bound how few reversals any policy can make.

Then a grid of the documented knobs (``scale_down_window_s``, ``max_step_down_percent``,
``tolerance``, set on every pool) on both traces: which goals each setting meets.

Then the issue's three reproductions (tolerance eating the headroom, a pool scaling for work a
coupled pool holds, staged scale-up from a low count), each a small topology and trace replayed
through ``arklow simulate``; with ``--baseline DIR`` (a checkout of the commit before this
round) each runs through that tree's ``arklow simulate`` too, in the same run, as the "before".
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import math
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
from scaling_inputs import quiet_lanes, write_inputs, write_trace

from arklow_pulumi.core.scaling import desired_replicas
from arklow_pulumi.reading.files import load_topology

POLICIES = ("arklow", "single-tick")
CHURN_S = 600.0
# the knob grid, set on every pool (the defaults are 300 s, 10 %, 0.1)
GRID = {
    "scale_down_window_s": (120, 300, 600),
    "max_step_down_percent": (10, 50, 100),
    "tolerance": (0.1, 0.15, 0.2),
}
DEFAULTS = {"scale_down_window_s": 300, "max_step_down_percent": 10, "tolerance": 0.1}


def simulate(
    root: Path, topology: Path, trace: Path, tick: float, csv_out: Path | None,
    policies: tuple[str, ...] = POLICIES,
) -> tuple[dict[str, Any], float]:  # fmt: skip
    """``arklow simulate`` of the tree at ``root`` in a child process: its JSON and wall time."""
    command = [
        sys.executable, "-m", "arklow_pulumi.cli", "simulate", "--topology", str(topology),
        "--trace", str(trace), "--tick", f"{tick:g}", "--policies", ",".join(policies),
        "--format", "json",
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
        churns = [churn(v) / days for v in targets.values()]
        onsets = {
            k[5:]: held_onsets(v) / days
            for k, v in rows.items()
            if k.startswith("pool:") and topo_has_targets(topology, k[5:])
        }
        out[policy] = {
            "quiet_held": held / demand,
            "replica_hours": figure["replica_hours"],
            "scale_actions": figure["scale_actions"],
            "floor": floor_replica_hours(topology, rows, tick),
            "reversals_max": max(flips),
            "reversals_mean": sum(flips) / len(flips),
            "churn_max": max(churns),
            "churn_mean": sum(churns) / len(churns),
            "held_onsets": onsets,
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
    policies = POLICIES if current else ("arklow",)
    # the baseline tree has no --ticks-csv: it reports its figures only
    result, _ = simulate(root, topology, trace, 60.0, csv_out if current else None, policies)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="a checkout of the commit before this round")
    args = parser.parse_args()
    lines: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        inputs = write_inputs(folder)
        traces: dict[str, dict[str, Any]] = {}
        for name, (topology, trace, tick) in inputs.items():
            csv_out = folder / f"{name}.ticks.csv"
            result, wall = simulate(ROOT, topology, trace, tick, csv_out)
            days = 7.0 if name == "week" else 1.0
            traces[name] = {
                "tick": tick,
                "wall": wall,
                "figures": figures(result, read_ticks(csv_out), topology, tick, days),
            }
            if args.baseline:
                before, before_wall = simulate(
                    Path(args.baseline), topology, trace, tick, None, ("arklow",)
                )
                b = before["policies"]["arklow"]
                traces[name]["before"] = {
                    "replica_hours": b["replica_hours"],
                    "scale_actions": b["scale_actions"],
                    "quiet_held": sum(v["held"] for k, v in b["lanes"].items() if k in set(quiet_lanes()))
                    / sum(v["demand"] for k, v in b["lanes"].items() if k in set(quiet_lanes())),
                    "wall": before_wall,
                }  # fmt: skip
        grid = run_grid(folder, inputs)
        calm = calmer_week(folder, inputs["week"][0])
        repro = {
            name: {
                "current": reproduction(ROOT, folder, name),
                "before": reproduction(Path(args.baseline), folder, name)
                if args.baseline
                else None,
            }
            for name in REPRODUCTIONS
        }
    lines += report(traces, repro, args.baseline)
    lines += grid_report(grid, traces)
    lines += calm_report(calm)
    (ROOT / "bench" / "RESULTS-scaling.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


CALM = 0.25  # the calmer week: a quarter of the noisy neighbours' bursts and blips


def calmer_week(folder: Path, topology: Path) -> dict[str, dict[str, Any]]:
    """The week with a quarter of the bursts and blips (same seed, same noise), defaults."""
    trace = folder / "week-calm.csv"
    write_trace(trace, days=7, every_s=60, quiet_noise=0.05, seed=21, episodes=CALM)
    csv_out = folder / "week-calm.ticks.csv"
    result, _ = simulate(ROOT, topology, trace, 60.0, csv_out)
    return figures(result, read_ticks(csv_out), topology, 60.0, 7.0)


def calm_report(calm: dict[str, dict[str, Any]]) -> list[str]:
    a, s = calm["arklow"], calm["single-tick"]
    met = goals_met(a, s, True)
    return [
        "",
        "## The same week with fewer bursts (defaults)",
        "",
        f"The week again with {CALM:g}× the noisy neighbours' bursts and blips (same seed, same "
        "noise), every pool at the defaults: replica-hours "
        f"{a['replica_hours'] / s['replica_hours']:.3f}× single-tick's, scale actions "
        f"{a['scale_actions'] / s['scale_actions']:.3f}×, reversals "
        f"{a['reversals_max']:.2f} / target / day (max; looser reading {a['churn_max']:.2f}), "
        "held onsets per pool and day "
        + ", ".join(f"{k} {v:.1f}" for k, v in sorted(a["held_onsets"].items()))
        + ". Goals: "
        + "; ".join(f"{k}: {'met' if v else '**missed**'}" for k, v in met.items())
        + ". The demand's own noise brings most of the held onsets, so the reversals stay.",
    ]


def grid_settings() -> list[dict[str, float]]:
    names = list(GRID)
    return [dict(zip(names, values, strict=True)) for values in itertools.product(*GRID.values())]


def run_grid(
    folder: Path, inputs: dict[str, tuple[Path, Path, float]]
) -> list[tuple[dict[str, float], dict[str, dict[str, Any]]]]:
    """Every grid setting on every trace (two child processes at a time): its arklow figures."""

    def one(k: int, setting: dict[str, float]) -> dict[str, dict[str, Any]]:
        out = {}
        for name, (topology, trace, tick) in inputs.items():
            doc = yaml.safe_load(topology.read_text(encoding="utf-8"))
            for pool in doc["pools"]:
                pool["scale_policy"] = setting
            changed = folder / f"grid-{k}.yaml"
            changed.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
            csv_out = folder / f"grid-{k}-{name}.ticks.csv"
            result, _ = simulate(ROOT, changed, trace, tick, csv_out, ("arklow",))
            days = 7.0 if name == "week" else 1.0
            ticks = read_ticks(csv_out)
            csv_out.unlink()
            out[name] = figures(result, ticks, changed, tick, days, ("arklow",))["arklow"]
        return out

    settings = grid_settings()
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(one, range(len(settings)), settings))
    return list(zip(settings, results, strict=True))


def goals_met(a: dict[str, Any], s: dict[str, Any], week: bool) -> dict[str, bool]:
    """The issue's goals for one trace: policy figures ``a`` against single-tick's ``s``."""
    met = {
        "quiet held ≤ 0.1 %": a["quiet_held"] <= 0.001,
        "quiet held ≤ single-tick's": a["quiet_held"] <= s["quiet_held"] * (1 + 1e-9),
        "replica-hours ≤ 1.03×": a["replica_hours"] <= 1.03 * s["replica_hours"],
        "scale actions ≤ 1/3": 3 * a["scale_actions"] <= s["scale_actions"],
    }
    if week:
        met["reversals ≤ 1 / target / day"] = a["reversals_max"] <= 1.0
    return met


def grid_report(
    grid: list[tuple[dict[str, float], dict[str, dict[str, Any]]]], traces: dict[str, Any]
) -> list[str]:
    single = {name: t["figures"]["single-tick"] for name, t in traces.items()}
    lines = [
        "",
        "## The documented knobs, every pool set alike",
        "",
        "Each row sets `scale_down_window_s`, `max_step_down_percent` and `tolerance` on every "
        "pool (the other knobs at their defaults) and replays both traces; ratios are to this "
        "run's single-tick figures. **Bold**: a goal missed. The defaults are marked.",
        "",
        "| window s | step-down % | tolerance | week rh ÷ st | week actions ÷ st | week "
        "reversals / target / day (max) | day rh ÷ st | day actions ÷ st | goals met (of 9) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    best: tuple[int, str] = (-1, "")
    for setting, figs in grid:
        w, d = figs["week"], figs["noisy_day"]
        met_w = goals_met(w, single["week"], True)
        met_d = goals_met(d, single["noisy_day"], False)
        count = sum(met_w.values()) + sum(met_d.values())

        def cell(text: str, ok: bool) -> str:
            return text if ok else f"**{text}**"

        mark = " (defaults)" if setting == DEFAULTS else ""
        row = (
            f"| {setting['scale_down_window_s']:g}{mark} | {setting['max_step_down_percent']:g} | "
            f"{setting['tolerance']:g} | "
            + cell(f"{w['replica_hours'] / single['week']['replica_hours']:.3f}×", met_w["replica-hours ≤ 1.03×"])
            + " | "
            + cell(f"{w['scale_actions'] / single['week']['scale_actions']:.3f}×", met_w["scale actions ≤ 1/3"])
            + " | "
            + cell(f"{w['reversals_max']:.2f}", met_w["reversals ≤ 1 / target / day"])
            + " | "
            + cell(f"{d['replica_hours'] / single['noisy_day']['replica_hours']:.3f}×", met_d["replica-hours ≤ 1.03×"])
            + " | "
            + cell(f"{d['scale_actions'] / single['noisy_day']['scale_actions']:.3f}×", met_d["scale actions ≤ 1/3"])
            + f" | {count} |"
        )  # fmt: skip
        lines.append(row)
        if count > best[0]:
            best = (count, str(setting))
    lines += ["", f"Most goals met by one setting: {best[0]} of 9 ({best[1]})."]
    return lines


def _pct(x: float) -> str:
    return f"{100 * x:.3f}%"


def report(
    traces: dict[str, dict[str, Any]], repro: dict[str, dict[str, Any]], baseline: str | None
) -> list[str]:
    load = os.getloadavg()
    revision = ""
    if baseline:
        revision = subprocess.run(
            ["git", "-C", baseline, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
            check=False,
        ).stdout.strip() or baseline  # fmt: skip
    lines = [
        "# Scale policy against the single-tick rule (issue 21)",
        "",
        f"Machine: {os.cpu_count()} cores; Python {platform.python_version()}; load average at the "
        f"end {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}. Recorded with "
        "`python bench/bench_scaling.py" + (" --baseline DIR`" if baseline else "`") + ".",
        "",
        "Inputs: `bench/scaling_inputs.py` (12 destinations, 40 lanes, 3 resources, 4 shared "
        "pools, 3 noisy neighbours with bursts and one-minute blips, two flash crowds at 10× for "
        "20 minutes a day, a coupled pool: a fixed llm quota beside `gpu-east`). Each trace runs "
        "through `arklow simulate --policies arklow,single-tick --format json --ticks-csv` as a "
        "child process (launch delay 120 s, the default). The before tree runs `--policies "
        "arklow` alone and without `--ticks-csv` (it has neither single-tick nor the CSV): its "
        "wall time is not comparable with the others.",
        "",
        "| trace | policy | quiet held | replica-hours | ÷ single-tick | ÷ floor | scale actions | "
        "÷ single-tick | reversals / target / day (max, mean) | looser reading (max, mean) | "
        "simulate wall |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, t in traces.items():
        f = t["figures"]
        single = f["single-tick"]
        for policy in POLICIES:
            p = f[policy]
            lines.append(
                f"| {name} ({t['tick']:g} s ticks) | {policy} | {_pct(p['quiet_held'])} | "
                f"{p['replica_hours']:,.1f} | {p['replica_hours'] / single['replica_hours']:.3f}× | "
                f"{p['replica_hours'] / p['floor']:.3f}× | {p['scale_actions']:,} | "
                f"{p['scale_actions'] / single['scale_actions']:.3f}× | "
                f"{p['reversals_max']:.2f}, {p['reversals_mean']:.2f} | "
                f"{p['churn_max']:.2f}, {p['churn_mean']:.2f} | {t['wall']:.1f} s |"
            )
        if "before" in t:
            b = t["before"]
            lines.append(
                f"| {name} ({t['tick']:g} s ticks) | arklow before ({revision}) | "
                f"{_pct(b['quiet_held'])} | {b['replica_hours']:,.1f} | "
                f"{b['replica_hours'] / single['replica_hours']:.3f}× | | {b['scale_actions']:,} | "
                f"{b['scale_actions'] / single['scale_actions']:.3f}× | | | {b['wall']:.1f} s |"
            )
    lines += ["", "Goals: quiet held ≤ 0.1 % and never above single-tick's; replica-hours ≤ 1.03× "
              "single-tick's; scale actions ≤ 1/3 of single-tick's; reversals ≤ 1 per target per "
              "day (week).", ""]  # fmt: skip
    for name, t in traces.items():
        a, s = t["figures"]["arklow"], t["figures"]["single-tick"]
        met = goals_met(a, s, name == "week")
        lines.append(
            f"- {name}: "
            + "; ".join(f"{k}: {'met' if v else '**missed**'}" for k, v in met.items())
        )
    onsets = traces["week"]["figures"]["arklow"]["held_onsets"]
    lines += [
        "",
        "Held onsets per pool and day on the week (ticks on which a pool starts holding work; "
        "each is a scale-up the policy must make on that tick): "
        + ", ".join(f"{k} {v:.1f}" for k, v in sorted(onsets.items()))
        + ".",
    ]
    odds = {k: 1 - math.exp(-v * CHURN_S / 86400) for k, v in sorted(onsets.items())}
    lines += [
        "",
        "Reading (the figures are this run's; the words were written against them and the grid "
        "below):",
        "",
        "- Quiet lanes are held no more than under single-tick: fairness keeps the noisy "
        "neighbours' bursts and the flash crowds off them, and held work scales its pool on the "
        "tick it appears.",
        "- Replica-hours above single-tick's are the price of the scale-down window (a pool keeps "
        "the highest recommendation of the last `scale_down_window_s`) and of the 10 %-per-tick "
        "step-down. Single-tick itself runs below the floor (its replicas arrive a launch delay "
        "late and leave at once). In the grid, the week's ≤ 1.03× needs a 120 s window: no step "
        "or tolerance brings the 300 s default under it.",
        "- Scale actions at 5-minute ticks follow from the 10 %-per-tick step-down: a burst's way "
        "down is many small actions. In the grid, the day's ≤ 1/3 needs a step-down of 50 % or "
        "more (or tolerance 0.2 with a 600 s window, at 1.11× the replica-hours).",
        "- Reversals: no setting of the knobs meets ≤ 1 per target per day; the fewest, with a "
        "600 s window, cost 7-12 % more replica-hours. They are of two kinds. A target turning "
        "down one window after an up (a one-minute blip, a burst's end): a window of 10 minutes "
        "or more removes those. And a scale-up on held work soon after a scale-down, which the "
        "policy must make on that tick (held work never waits): a pool starts holding work "
        + ", ".join(f"{k} {v:.1f}" for k, v in sorted(onsets.items()))
        + " times a day on the week, so any scale-down is followed within 10 minutes by work to "
        "scale up for with odds "
        + ", ".join(f"{k} {100 * v:.0f} %" for k, v in odds.items())
        + " (arrivals at that rate, at random). Every scale-up for a burst needs a scale-down "
        "after it, or replica-hours grow without end, so these pools make tens of scale-downs a "
        "day and, at those odds, several reversals a day whatever the knobs.",
        "- What meets the most goals here is a 120 s window, a 50 % (or 100 %) step-down and "
        "tolerance 0.15 on every pool: 8 of 9, all but the reversals. The defaults stay as the "
        "contract documents them (docs/scale-policy.md); each pool may set these knobs.",
    ]
    lines += ["", "## The three reproductions", ""]
    for name, r in repro.items():
        what = REPRODUCTIONS[name][0]
        cur = r["current"]
        lines.append(f"- **{name}** ({what}), 1-minute ticks:")
        lines.append(
            f"  - arklow: desired per tick {cur['arklow']['desired']}; held "
            f"{cur['arklow']['held']:.3f} unit-hours, {cur['arklow']['replica_hours']:.2f} replica-hours"
        )
        lines.append(
            f"  - single-tick: desired per tick {cur['single-tick']['desired']}; held "
            f"{cur['single-tick']['held']:.3f} unit-hours, "
            f"{cur['single-tick']['replica_hours']:.2f} replica-hours"
        )
        if r["before"]:
            b = r["before"]["arklow"]
            lines.append(
                f"  - arklow before ({revision}): held {b['held']:.3f} unit-hours, "
                f"{b['replica_hours']:.2f} replica-hours"
            )
    return lines


if __name__ == "__main__":
    main()
