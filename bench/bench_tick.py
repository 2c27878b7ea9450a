"""Tick bench (issue 9): the controller's own tick, steady-state API calls, and the scale policy
on a noisy day. Writes ``bench/RESULTS-tick.md``.
``python bench/bench_tick.py [--quick] [--tick-only] [--baseline DIR]`` (``--baseline``: the tick
cost of a checkout of an earlier commit, against this tree's, in the same run).

1. **Tick cost**: :meth:`arklow_pulumi.controller.tick.ticking.Controller.tick`, the code
   ``arklow controller run`` runs (observe → decide → act → publish), at 10,000 lanes / 1,000
   pools / 1,000 targets with the in-memory binding and a SQLite store in a temporary directory
   (the store users run). Before each tick every lane reports its demand × (1 ± 10% uniform
   noise) through the controller's demand sink (the store write behind ``POST /v1/demand``, not
   timed). Median over the ticks after a warm-up, wall and process CPU, the split by step, and
   :func:`allocate` alone on the same demand, interleaved, as the yardstick of how busy the
   machine was. Target: ≤ 150 ms median.
2. **Steady state on a moto server**: N ASGs at their decision, the controller's tick through the
   AWS binding; 100 ticks make 0 write calls and ⌈N/100⌉ DescribeAutoScalingGroups per tick.
3. **Noisy day**: 288 ticks of 5 minutes, each lane's demand × (1 ± 10% uniform noise), launches
   pending for 2 ticks then in service (simulated supply). The scale policy (DESIGN.md defaults)
   against the single-tick decision (the same code with a policy that follows it at once:
   no window, no tolerance, unbounded steps). Targets: scale actions ≤ 1/3 of the single-tick
   decision's; quiet lanes' held work no more than 0.1 percentage point higher.
"""

from __future__ import annotations

import contextlib
import datetime
import gc
import math
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def tick_child(root: str, ticks: int, warm_up: int) -> None:
    """In a fresh process: the tick cost (1.) as the tree at ``root`` measures it, with its own
    package and its own copy of this bench; prints the figures as JSON."""
    import importlib.util
    import json

    bench = Path(root) / "bench" / "bench_tick.py"
    spec = importlib.util.spec_from_file_location("bench_tick_of_tree", bench)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # its top puts its own tree first on sys.path
    figures = module.tick_cost(ticks, warm_up)
    keys = ("median_ms", "cpu_ms", "allocate_ms", "min_ms", "load")
    print(json.dumps({key: figures[key] for key in keys}))


if __name__ == "__main__" and "--tick-json" in sys.argv:
    at = sys.argv.index("--tick-json")
    tick_child(sys.argv[at + 1], int(sys.argv[at + 2]), int(sys.argv[at + 3]))
    sys.exit(0)

sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from topologies import document

import arklow_pulumi.controller.tick.ticking as ticking
from arklow_pulumi.controller.ports import DemandReport
from arklow_pulumi.controller.tick.ticking import Controller, TickSettings
from arklow_pulumi.core.allocating import allocate
from arklow_pulumi.core.deciding import Observed, Recommendation, TargetId, decide
from arklow_pulumi.core.policy import ScalePolicy
from arklow_pulumi.core.topology import Topology, frozen_map
from arklow_pulumi.reading.parsing import parse_topology
from arklow_pulumi.reading.spec import build_topology
from arklow_pulumi.store.engine import open_store, writing
from arklow_pulumi.store.runtime import acquire_lease
from arklow_pulumi.store.snapshots import load_all, write_changes
from arklow_pulumi.supply.groups import GroupState
from arklow_pulumi.supply.memory import InMemorySupply
from arklow_pulumi.supply.routing import SupplyRouter

REGION = "us-east-1"
HERE = Path(__file__).resolve().parent
QUIET = 25.0
FOLLOW = ScalePolicy(max_step_up=10**9, max_step_down=10**9, scale_down_window_s=0.0, tolerance=0.0)


# -- the controller, as ``arklow controller run`` makes it ------------------------------------------


class Clock:
    """The controller's clock: wall time set by the bench (10 s per tick), real monotonic time."""

    def __init__(self, now: float) -> None:
        self.now = now

    def time(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return time.monotonic()


def controller_on(topo: Topology, router: SupplyRouter, work: Path, clock: Clock) -> Controller:
    """A controller over a SQLite store in ``work`` holding ``topo`` (as ``pulumi up`` leaves it),
    leading at epoch 1 (the SQLite single-controller lease)."""
    store = open_store(f"sqlite:///{work / 'arklow.db'}")
    with writing(store) as conn:
        write_changes(conn, load_all(conn), topo)
    lease = acquire_lease(store, "bench", 15.0, force=True)
    assert lease is not None
    settings = TickSettings(settle_heap=True)  # as `arklow controller run` sets it
    controller = Controller(
        store, router, lease, settings=settings, clock=clock, say=lambda line: None
    )
    controller.restore()
    return controller


def report_demand(controller: Controller, demand: Mapping[str, float]) -> None:
    """Every lane's report through the controller's sink, in batches of 1,000."""
    reports = [DemandReport(lane, value) for lane, value in demand.items()]
    sink = controller.demand_sink()
    for start in range(0, len(reports), 1000):
        sink.accept(reports[start : start + 1000])


# Where a tick's time goes: the Controller's own steps, timed where the tick calls them.
STEPS = {
    "observe": "topology check (and load when changed), demand reports, one describe",
    "decide": "allocation, single-tick decision, scale policy",
    "act": "changes against the described groups; each resize fenced (one lease renewal shared by the resizes of a tick)",
    "publish": "published value (kept in memory, served by the API), its stored document, "
    "the demand-history rows",
    "persist": "one fenced SQLite transaction: lease renewal, changed target rows, 1,000 "
    "recommendations, history rows, the document, pruning",
}


def _timed_steps(controller: Controller) -> dict[str, list[float]]:
    """Wrap the tick's steps (instance attributes over the methods the tick calls, and the
    ticking module's functions between them) with wall-clock timers."""
    times: dict[str, list[float]] = {name: [] for name in STEPS}
    pending: dict[str, float] = dict.fromkeys(STEPS, 0.0)

    def wrap(owner: Any, attr: str, step: str, last: bool) -> None:
        real = getattr(owner, attr)

        def timed(*args: Any, **kw: Any) -> Any:
            start = time.perf_counter()
            try:
                return real(*args, **kw)
            finally:
                pending[step] += time.perf_counter() - start
                if last:
                    times[step].append(pending[step])
                    pending[step] = 0.0

        setattr(owner, attr, timed)

    wrap(controller, "observe", "observe", last=True)
    wrap(controller, "decide", "decide", last=True)
    wrap(ticking, "changes_to_make", "act", last=False)
    wrap(controller, "_act", "act", last=True)
    wrap(ticking, "write_tick", "persist", last=True)
    wrap(ticking, "build_published", "publish", last=False)
    wrap(controller, "_publish", "publish", last=True)
    return times


def _without_persist(steps: dict[str, list[float]]) -> dict[str, list[float]]:
    """The publish step's times without the store write inside it."""
    publish = [p - w for p, w in zip(steps["publish"], steps["persist"], strict=True)]
    return {**steps, "publish": publish}


def with_targets(doc: dict[str, Any], region: str | None, lo: int = 1, hi: int = 20,
                 upr: float = 8.0) -> dict[str, Any]:  # fmt: skip
    """Every pool gets one ASG target (the generator puts one on a third of them)."""
    rng = random.Random(11)
    for p in doc["pools"]:
        target = {"kind": "aws_asg", "name": f"asg-{p['name']}", "min_replicas": lo,
                  "max_replicas": hi, "units_per_replica": upr, "replicas": rng.randint(lo, hi)}  # fmt: skip
        if region:
            target["region"] = region
        p["scale_targets"] = [target]
    return doc


def noisy(demand: Mapping[str, float], rng: random.Random, noise: float = 0.1) -> dict[str, float]:
    return {k: v * (1 + rng.uniform(-noise, noise)) for k, v in demand.items()}


# -- 1. tick cost ---------------------------------------------------------------------------------


class CollectorClock:
    """Time spent in the cyclic garbage collector while counting (it runs inside the steps)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._on = False
        self._start = 0.0
        gc.callbacks.append(self._seen)

    def _seen(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        elif self._on:
            self.seconds += time.perf_counter() - self._start

    @contextlib.contextmanager
    def counting(self) -> Iterator[None]:
        self._on = True
        try:
            yield
        finally:
            self._on = False

    def stop(self) -> None:
        gc.callbacks.remove(self._seen)


def tick_cost(ticks: int, warm_up: int) -> dict[str, Any]:
    doc, demand = document(10_000, 1_000)
    topo = build_topology(parse_topology(with_targets(doc, REGION)))
    groups = [
        GroupState(t.group, t.replicas, t.replicas, min=0, max=t.max_replicas)
        for p in topo.pools.values()
        for t in p.scale_targets
    ]
    memory = InMemorySupply(groups)
    clock = Clock(1_800_000_000.0)
    work = Path(tempfile.mkdtemp(prefix="bench-tick-"))
    controller = controller_on(topo, SupplyRouter.of(memory), work, clock)
    rng = random.Random(3)
    for _ in range(warm_up):  # the first compiles the topology; then the groups settle
        report_demand(controller, noisy(demand, rng))
        controller.after_tick(controller.tick().next_delay_s)
        clock.now += 10.0
    steps = _timed_steps(controller)
    collector = CollectorClock()
    times, alone, alone_cpu, writes, cpu, upkeep = [], [], [], [], [], []
    load = os.getloadavg()[0]
    for _ in range(ticks):
        d = noisy(demand, rng)
        report_demand(controller, d)
        before = memory.calls["write"]
        start, start_cpu = time.perf_counter(), time.process_time()
        with collector.counting():
            controller.tick()
        took, took_cpu = time.perf_counter() - start, time.process_time() - start_cpu
        start = time.perf_counter()
        controller.after_tick(10.0)  # as run_loop does between two ticks: SQLite's checkpoint
        upkeep.append(time.perf_counter() - start)
        clock.now += 10.0
        start, start_cpu = time.perf_counter(), time.process_time()
        allocate(topo, d)  # the engine alone, same inputs, interleaved: the load's yardstick
        alone.append(time.perf_counter() - start)
        alone_cpu.append(time.process_time() - start_cpu)
        times.append(took)
        cpu.append(took_cpu)
        writes.append(memory.calls["write"] - before)
    shutil.rmtree(work, ignore_errors=True)
    collector.stop()
    return {
        "collector_ms": collector.seconds / ticks * 1e3,
        "allocate_ms": statistics.median(alone) * 1e3,
        "upkeep_ms": statistics.median(upkeep) * 1e3,
        "allocate_cpu_ms": statistics.median(alone_cpu) * 1e3,
        "cpu_ms": statistics.median(cpu) * 1e3,
        "load": (load + os.getloadavg()[0]) / 2,
        "lanes": len(topo.lanes),
        "pools": len(topo.pools),
        "targets": len(groups),
        "median_ms": statistics.median(times) * 1e3,
        "p90_ms": sorted(times)[int(0.9 * (len(times) - 1))] * 1e3,
        "min_ms": min(times) * 1e3,
        "ticks": ticks,
        "warm_up": warm_up,
        "writes_per_tick": statistics.mean(writes),
        "steps_ms": {
            name: statistics.median(t) * 1e3 for name, t in _without_persist(steps).items()
        },
    }


# -- 2. steady state on moto ----------------------------------------------------------------------


def steady_on_moto(n_groups: int, ticks: int) -> dict[str, Any]:
    from tests import aws_moto

    server, url = aws_moto.start_server()
    try:
        os.environ.update(aws_moto.aws_env(url))
        raw = aws_moto.autoscaling_client(url)
        doc, demand = document(n_groups * 4, n_groups, seed=5)
        doc = with_targets(doc, REGION, lo=1, hi=6, upr=40.0)
        topo = build_topology(parse_topology(doc))
        # converge on the in-memory binding first: the groups then start at their decision
        memory = InMemorySupply(
            [
                GroupState(t.group, t.replicas, t.replicas, min=0, max=t.max_replicas)
                for p in topo.pools.values()
                for t in p.scale_targets
            ]
        )
        clock = Clock(1_800_000_000.0)
        work = Path(tempfile.mkdtemp(prefix="bench-tick-moto-"))
        warm = controller_on(topo, SupplyRouter.of(memory), work, clock)
        for _ in range(60):
            report_demand(warm, demand)
            warm.tick()
            clock.now += 10.0
        for t in (t for p in topo.pools.values() for t in p.scale_targets):
            aws_moto.make_asg(raw, t.group.name, 0, t.max_replicas, memory.groups[t.group].desired)
        from arklow_pulumi.supply.aws import AwsAsgSupply

        supply = AwsAsgSupply(REGION)
        calls: Counter[str] = Counter()
        supply._client(REGION).meta.events.register(
            "before-call", lambda model, **_: calls.update([model.name])
        )
        # the same store, now over the AWS binding: a restarted controller continues from it
        controller = Controller(
            warm.store,
            SupplyRouter.of(supply),
            warm.lease,
            settings=warm.settings,
            clock=clock,
            say=lambda line: None,
        )
        controller.restore()
        per_tick: list[Counter[str]] = []
        start = time.perf_counter()
        for _ in range(ticks):
            report_demand(controller, demand)
            calls.clear()
            controller.tick()
            per_tick.append(Counter(calls))
            clock.now += 10.0
        wall = time.perf_counter() - start
        shutil.rmtree(work, ignore_errors=True)
    finally:
        server.stop()
    describes = [c["DescribeAutoScalingGroups"] for c in per_tick]
    return {
        "groups": n_groups,
        "ticks": ticks,
        "expected_describes": math.ceil(n_groups / 100),
        "describes_min": min(describes),
        "describes_max": max(describes),
        "writes": sum(c["SetDesiredCapacity"] for c in per_tick),
        "other": sum(sum(c.values()) for c in per_tick)
        - sum(describes)
        - sum(c["SetDesiredCapacity"] for c in per_tick),
        "wall_s": wall,
    }


# -- 3. noisy day ---------------------------------------------------------------------------------


class SimGroup:
    """A group whose launches are pending for ``delay`` ticks; scale-in takes pending first."""

    def __init__(self, size: int, delay: int) -> None:
        self.in_service, self.delay = size, delay
        self.pending: list[tuple[int, int]] = []

    def observe(self, tick: int) -> Observed:
        self.in_service += sum(n for at, n in self.pending if at <= tick)
        self.pending = [(at, n) for at, n in self.pending if at > tick]
        return Observed(self.in_service, sum(n for _, n in self.pending))

    def resize(self, desired: int, tick: int) -> None:
        current = self.in_service + sum(n for _, n in self.pending)
        if desired > current:
            self.pending.append((tick + self.delay, desired - current))
            return
        cut = current - desired
        while cut and self.pending:
            at, n = self.pending.pop()
            take = min(n, cut)
            if n > take:
                self.pending.append((at, n - take))
            cut -= take
        self.in_service -= cut


def day_topology(pools: int, policy: ScalePolicy) -> tuple[Topology, set[str]]:
    """Each pool shared by 2 busy and 2 quiet destinations (2 lanes each)."""
    destinations: list[dict[str, Any]] = []
    pool_docs: list[dict[str, Any]] = []
    quiet: set[str] = set()
    for p in range(pools):
        members: list[str] = []
        for kind in ("busy", "busy", "quiet", "quiet"):
            name = f"{kind}{p}-{len(members)}"
            members.append(name)
            limit = 200.0 if kind == "busy" else 20.0
            lanes = [{"name": f"l{k}", "limit": limit} for k in range(2)]
            destinations.append({"name": name, "resources": ["gpu"], "lanes": lanes})
            if kind == "quiet":
                quiet.update(f"{name}/l{k}" for k in range(2))
        target = {"kind": "aws_asg", "name": f"t{p}", "min_replicas": 1, "max_replicas": 200,
                  "units_per_replica": 4.0, "replicas": 20}  # fmt: skip
        pool_docs.append({"name": f"p{p}", "resource": "gpu", "members": members,
                          "scale_targets": [target]})  # fmt: skip
    topo = build_topology(parse_topology({"destinations": destinations, "pools": pool_docs}))
    pools_map = {k: replace(v, scale_policy=policy) for k, v in topo.pools.items()}
    return Topology(topo.destinations, frozen_map(pools_map), topo.memberships), quiet


def day_trace(
    topo: Topology, ticks: int, noise: float, seed: int, bursts: float = 0.0
) -> list[dict[str, float]]:
    """Busy lanes follow a daily curve (40 ± 60%), quiet lanes stay near 8; every value gets
    ± ``noise`` uniform noise. With ``bursts`` > 0 a busy lane starts, with that probability per
    tick, a 3-tick burst at 4× its demand (the pool is then short while launches warm up)."""
    rng = random.Random(seed)
    phase = {lane.key: rng.uniform(0, 2 * math.pi) for lane in topo.lanes}
    burst_left = dict.fromkeys(phase, 0)
    trace = []
    for k in range(ticks):
        day = 2 * math.pi * k / ticks
        row = {}
        for lane in topo.lanes:
            key = lane.key
            if not lane.destination.startswith("busy"):
                row[key] = QUIET * (1 + rng.uniform(-noise, noise))
                continue
            if burst_left[key] == 0 and rng.random() < bursts:
                burst_left[key] = 3
            factor = 4.0 if burst_left[key] else 1.0
            burst_left[key] = max(0, burst_left[key] - 1)
            base = 40.0 * (1 + 0.6 * math.sin(day + phase[key] * 0.2))
            row[key] = factor * base * (1 + rng.uniform(-noise, noise))
        trace.append(row)
    return trace


def simulate_day(policy: ScalePolicy, trace: list[dict[str, float]], pools: int, tick_s: float,
                 delay: int) -> dict[str, float]:  # fmt: skip
    topo, quiet = day_topology(pools, policy)
    groups = {
        TargetId(p.name, t.name): SimGroup(t.replicas, delay)
        for p in topo.pools.values()
        for t in p.scale_targets
    }
    history: dict[TargetId, list[Recommendation]] = {}
    last = {tid: g.in_service for tid, g in groups.items()}
    actions = 0
    held = {"quiet": 0.0, "busy": 0.0}
    wanted = {"quiet": 0.0, "busy": 0.0}
    replica_ticks = 0
    for k, demand in enumerate(trace):
        now = k * tick_s
        observed = {tid: g.observe(k) for tid, g in groups.items()}
        decision = decide(topo, demand, observed, history, now)
        for tid, td in decision.targets.items():
            history.setdefault(tid, []).append(Recommendation(now, td.recommended))
            history[tid] = [r for r in history[tid] if r.at >= now - 900]
            if td.desired != last[tid]:
                actions += 1
                last[tid] = td.desired
            groups[tid].resize(td.desired, k)
            replica_ticks += observed[tid].in_service
        for key, result in decision.allocation.lanes.items():
            side = "quiet" if key in quiet else "busy"
            held[side] += result.held
            wanted[side] += result.held + result.allocation
    return {
        "actions": actions,
        "quiet_held_pct": 100 * held["quiet"] / wanted["quiet"],
        "busy_held_pct": 100 * held["busy"] / wanted["busy"],
        "replica_hours": replica_ticks * tick_s / 3600,
    }


def noisy_day(pools: int, bursts: float = 0.0) -> dict[str, Any]:
    ticks, tick_s, delay = 288, 300.0, 2
    topo, _ = day_topology(pools, FOLLOW)
    trace = day_trace(topo, ticks, 0.10, seed=9, bursts=bursts)
    single = simulate_day(FOLLOW, trace, pools, tick_s, delay)
    policy = simulate_day(ScalePolicy(), trace, pools, tick_s, delay)
    return {"pools": pools, "ticks": ticks, "single": single, "policy": policy, "bursts": bursts}


# -- report ---------------------------------------------------------------------------------------


def tick_section(timed: Mapping[str, Any]) -> list[str]:
    steps = timed["steps_ms"]
    rest = timed["median_ms"] - sum(steps.values())
    return [
        f"### One tick: {timed['lanes']:,} lanes / {timed['pools']:,} pools / "
        f"{timed['targets']:,} targets, in-memory binding, SQLite store",
        "",
        "`Controller.tick()`, the tick `arklow controller run` runs, on a SQLite store in a "
        "temporary directory (the store users run) and the in-memory supply binding. Before each "
        "tick every lane reports its demand × (1 ± 10% uniform noise) through the controller's "
        "demand sink (the store write behind `POST /v1/demand`, not timed); the clock moves 10 s "
        f"per tick. {timed['warm_up']} ticks of warm-up first (the first compiles the topology, "
        "the others let the groups settle from their random starting sizes), then "
        f"{timed['ticks']} timed ticks.",
        "",
        "| ticks | median (wall) | p90 | min | median (process CPU) | target "
        "| `allocate` alone, median (wall / CPU) | resizes per tick (mean) | load average |",
        "|---|---|---|---|---|---|---|---|---|",
        f"| {timed['ticks']} | {timed['median_ms']:.1f} ms | {timed['p90_ms']:.1f} ms | "
        f"{timed['min_ms']:.1f} ms | {timed['cpu_ms']:.1f} ms | ≤ 150 ms | "
        f"{timed['allocate_ms']:.1f} / {timed['allocate_cpu_ms']:.1f} ms | "
        f"{timed['writes_per_tick']:.1f} | {timed['load']:.1f} |",
        "",
        "Where a tick goes (median of each step over the timed ticks, wall):",
        "",
        "| step | what it includes | ms |",
        "|---|---|---|",
        *(f"| {name} | {STEPS[name]} | {steps[name]:.1f} |" for name in STEPS),
        f"| the rest | the end-of-tick collection, logging, metrics hooks | {rest:.1f} |",
        "",
        f"The cyclic garbage collector ran {timed['collector_ms']:.1f} ms per tick (mean), inside "
        "the steps above: as `arklow controller run` sets it (`controller/tick/heap.py`), the long-lived "
        "heap is frozen after a topology is loaded and a tick runs no automatic collection, only "
        "one young-generation collection at its end (in the rest row).",
        "",
        f"Tick / `allocate` alone = {timed['median_ms'] / timed['allocate_ms']:.2f}. Process "
        "CPU counts every thread (the act step resizes in parallel). The load average (2 cores) "
        "says how busy the machine was.",
        "",
        f"Between two ticks, in the time the loop waits anyway, `run_loop` checkpoints SQLite's "
        f"write-ahead log (`Controller.after_tick`): {timed['upkeep_ms']:.1f} ms (median), not "
        "in the tick above. Without it SQLite runs the checkpoint inside the commit that takes "
        "the log past 1,000 pages, every second or third tick here (persist then takes about "
        "25-30 ms more).",
        "",
        f"Where the time beyond `allocate` goes: decide adds "
        f"{steps['decide'] - timed['allocate_ms']:.0f} ms to the allocation alone (capacity "
        "from the observed groups, the single-tick decision and the scale policy of 1,000 "
        f"targets: `core/deciding.py`); observe {steps['observe']:.0f} ms (the topology "
        "revision, reading 10,000 reports from SQLite, one describe of 1,000 groups); publish "
        f"{steps['publish']:.0f} ms and persist {steps['persist']:.0f} ms (the published value "
        "and its packed document; the demand history, one packed row per tick though every "
        "lane's demand changed; the 1,000 recommendations); act "
        f"{steps['act']:.0f} ms (one lease renewal, shared by the tick's resizes, then the "
        "resizes).",
        "",
        "The tick's persistence stays on the critical path: the fenced write happens before the "
        "tick is published in memory (both in `Controller._publish`), so the API never serves "
        "a tick the store does not hold, a standby serves what the leader wrote, and a replica that lost its lease publishes "
        'nothing (issue 9 and DESIGN.md "Controller contract": published admission, ETag, '
        "epochs and fencing, export-trace). Moving it behind the tick would take the "
        "persist step off the wall time, not its CPU; here observe + decide alone take "
        f"{steps['observe'] + steps['decide']:.0f} ms.",
        "",
    ]


def against_baseline(baseline: str, rounds: int, ticks: int, warm_up: int) -> dict[str, Any]:
    """The tick cost (1.) of this tree and of ``baseline`` (a checkout of an earlier commit, its
    compiled parts built in place), each measured by its own tree's bench in fresh processes,
    ``rounds`` each, alternating, so both see the same load."""
    import json
    import subprocess

    runs: dict[str, list[dict[str, float]]] = {"baseline": [], "current": []}
    for _ in range(rounds):
        for side, root in (("baseline", baseline), ("current", str(ROOT))):
            out = subprocess.run(
                [sys.executable, __file__, "--tick-json", root, str(ticks), str(warm_up)],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            runs[side].append(json.loads(out.stdout))
    result: dict[str, Any] = {"rounds": rounds, "ticks": ticks, "baseline": baseline}
    for side, figures in runs.items():
        for key in ("median_ms", "cpu_ms", "allocate_ms"):
            result[f"{side}_{key}"] = statistics.median(f[key] for f in figures)
    result["ratio"] = result["current_median_ms"] / result["baseline_median_ms"]
    result["allocate_ratio"] = result["current_allocate_ms"] / result["baseline_allocate_ms"]
    return result


def baseline_section(v: Mapping[str, Any]) -> list[str]:
    import subprocess

    revision = subprocess.run(
        ["git", "-C", v["baseline"], "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    return [
        f"#### Against the baseline ({revision or v['baseline']}), same run",
        "",
        f"Each tree's own tick bench (its package, its `tick_cost`) in fresh processes, {v['rounds']} "
        f"each, alternating; {v['ticks']} timed ticks per process; medians over the processes' "
        "medians.",
        "",
        "| tree | tick median (wall) | tick median (process CPU) | `allocate` alone |",
        "|---|---|---|---|",
        f"| baseline {revision} | {v['baseline_median_ms']:.1f} ms | {v['baseline_cpu_ms']:.1f} ms | {v['baseline_allocate_ms']:.1f} ms |",
        f"| this tree | {v['current_median_ms']:.1f} ms | {v['current_cpu_ms']:.1f} ms | {v['current_allocate_ms']:.1f} ms |",
        "",
        f"Tick, this tree / baseline: **{v['ratio']:.2f}×** (target ≤ 1.2×, and ≤ 150 ms); "
        f"`allocate` alone: {v['allocate_ratio']:.2f}×.",
        "",
    ]


def main() -> None:
    quick = "--quick" in sys.argv
    timed = _timed(tick_cost, 10 if quick else 30, 5 if quick else 35)
    baseline = sys.argv[sys.argv.index("--baseline") + 1] if "--baseline" in sys.argv else None
    versus = (
        _timed(
            against_baseline, baseline, 2 if quick else 3, 10 if quick else 20, 10 if quick else 20
        )
        if baseline
        else None
    )
    compared = baseline_section(versus) if versus else []
    if "--tick-only" in sys.argv:
        print("\n".join([*tick_section(timed), *compared]))
        return
    steady = _timed(steady_on_moto, 150 if quick else 250, 20 if quick else 100)
    day = _timed(noisy_day, 20)
    bursty = _timed(noisy_day, 20, 0.02)
    s, p = day["single"], day["policy"]
    ratio = p["actions"] / s["actions"] if s["actions"] else 0.0
    delta = p["quiet_held_pct"] - s["quiet_held_pct"]
    bs, bp = bursty["single"], bursty["policy"]
    lines = [
        "## Controller tick (issue 9)",
        "",
        f"Machine: {os.cpu_count()} cores (nproc), Python {platform.python_version()}, "
        f"{platform.machine()}. Recorded with `python bench/bench_tick.py` on "
        f"{datetime.date.today()}.",
        "",
        *tick_section(timed),
        *compared,
        f"### Steady state: {steady['groups']} ASGs on a moto server, {steady['ticks']} ticks",
        "",
        "| DescribeAutoScalingGroups per tick | expected ⌈N/100⌉ | write calls | other calls "
        "| wall s |",
        "|---|---|---|---|---|",
        f"| {steady['describes_min']}–{steady['describes_max']} | "
        f"{steady['expected_describes']} | {steady['writes']} (target 0) | {steady['other']} | "
        f"{steady['wall_s']:.1f} |",
        "",
        f"### Noisy day: {day['pools']} pools (2 busy + 2 quiet destinations each), "
        f"{day['ticks']} ticks of 5 min, 10% noise, 2-tick launch delay",
        "",
        "| trace | decision | scale actions | quiet lanes held % | busy lanes held % "
        "| replica-hours |",
        "|---|---|---|---|---|---|",
        *[
            f"| {trace} | {label} | {r['actions']} | {r['quiet_held_pct']:.3f} | "
            f"{r['busy_held_pct']:.3f} | {r['replica_hours']:.0f} |"
            for trace, label, r in (
                ("10% noise", "single tick", s),
                ("10% noise", "scale policy (defaults)", p),
                ("10% noise + bursts", "single tick", bs),
                ("10% noise + bursts", "scale policy (defaults)", bp),
            )
        ],
        "",
        f"10% noise (the issue's trace): scale actions, policy / single tick = **{ratio:.3f}** "
        f"(target ≤ 1/3); quiet lanes' held work **{delta:+.3f}** percentage points with the "
        "policy (target ≤ +0.1). Busy lanes follow a daily curve (40 units ± 60%), quiet lanes "
        f"stay near {QUIET:g}; each pool has 2 busy and 2 quiet destinations of 2 lanes, one "
        "target of 4 units per replica starting at 20 replicas (the quiet lanes' only held work "
        "is in the first ticks, while the first launches warm up, in both rows).",
        "",
        "With bursts (not in the issue: each busy lane, with probability 2% per tick, runs at 4× "
        f"for 3 ticks) the ratio is {bp['actions'] / bs['actions']:.3f}: after each burst the "
        "policy steps down by 10% of current per tick once the window has passed, one action "
        "per tick, as HPA's default does; quiet lanes' held work "
        f"{bp['quiet_held_pct'] - bs['quiet_held_pct']:+.3f} pp, busy lanes' "
        f"{bp['busy_held_pct'] - bs['busy_held_pct']:+.3f} pp.",
        "",
        "A scale action is a (tick, target) pair whose desired count changed; held % = Σ held "
        "/ Σ min(demand, limit) over the day. The single-tick decision is the same `decide` "
        "with a policy that follows it at once (no window, no tolerance, unbounded steps).",
    ]
    text = "\n".join(lines)
    print(text)
    (HERE / "RESULTS-tick.md").write_text(text + "\n")


def _timed(fn: Callable[..., Any], *args: Any) -> Any:
    start = time.perf_counter()
    out = fn(*args)
    print(f"{fn.__name__}: {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return out


if __name__ == "__main__":
    main()
