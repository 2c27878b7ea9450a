"""Soak of controller replicas on PostgreSQL under chaos (issue 11); writes bench/RESULTS-ha.md.

Three ``arklow controller run`` replicas on one PostgreSQL database (the test suite's throwaway
cluster, tests/store/postgres_server.py), each reaching the store through its own TCP proxy (so one
replica can be cut off), the Compute API test server with 50 zonal MIGs and 20% injected errors
(429/503, 30% of them after the change took effect). Topology: 100 destinations × 10 lanes = 1,000
lanes, 100 pools (50 with one MIG each, 50 with static capacity only).

**Time scale.** 30 simulated minutes run in 30 × 60 / SCALE wall seconds: every duration is the
production default divided by SCALE (interval 10 s → 1 s, lease 15/10/2 s → 1.5/1.0/0.2 s).

**Chaos schedule** (seeded): every 6–14 s one of: ``kill -9`` of the leader (restarted at once),
the leader's store connection cut for 2–4 s (it must step down; it comes back as a follower),
every replica's store cut for 2–3 s (store down), a follower killed. Demand: a client posts
batches of 50 lanes to a random live replica every 0.1 s (one at a time); a report counts as
acknowledged on HTTP 200.

Checks: every resize in the Compute log carries an epoch (its requestId), epochs never go back in
arrival order, every size within the group's [min, max]; each lane's stored report is its last
acknowledged value, or a later one whose answer was lost (none lost).

Run: ``.venv/bin/python bench/soak_ha.py [--minutes 30] [--scale 10]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sys
import threading
import time
import urllib.request
import uuid
from collections import deque
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arklow_pulumi.devservers.compute import ComputeServer
from arklow_pulumi.reading.parsing import parse_topology
from arklow_pulumi.reading.spec import build_topology
from arklow_pulumi.store.engine import close_stores, open_store
from arklow_pulumi.store.runtime import (
    load_published,
    read_lease,
)
from arklow_pulumi.supply.fencing import NAMESPACE
from tests.controller.conftest import put_topology
from tests.controller.ha_cluster import Cluster, Replica, StoreProxy
from tests.store import postgres_server
from tests.store.runtime_reads import load_demand_reports

PROJECT, ZONE = "arklow-soak", "us-central1-a"
DESTS, LANES, POOLS, TARGETS = 100, 10, 100, 50
MIN, MAX = 1, 20


def topology() -> dict[str, Any]:
    destinations = [
        {
            "name": f"d{i}",
            "resources": [f"r{i}"],
            "lanes": [{"name": f"l{j}", "limit": 40} for j in range(LANES)],
        }
        for i in range(DESTS)
    ]
    pools: list[dict[str, Any]] = []
    for i in range(POOLS):
        pool: dict[str, Any] = {"name": f"p{i}", "resource": f"r{i}", "members": [f"d{i}"]}
        if i < TARGETS:
            pool["scale_policy"] = {"scale_down_window_s": 0}
            pool["scale_targets"] = [
                {
                    "kind": "gcp_mig",
                    "name": f"mig{i}",
                    "project": PROJECT,
                    "zone": ZONE,
                    "min_replicas": MIN,
                    "max_replicas": MAX,
                    "units_per_replica": 20,
                }
            ]
        else:
            pool["capacity"] = 200
        pools.append(pool)
    return {"destinations": destinations, "pools": pools}


class Demand:
    """Posts increasing per-lane values; remembers the last acknowledged value of each lane."""

    def __init__(self, cluster: Cluster, rng: random.Random) -> None:
        self.cluster, self.rng = cluster, rng
        self.sequence = 0
        self.acked: dict[str, float] = {}
        # values sent for a lane since its last acknowledged one (a failed answer may still
        # have been stored): the stored value must be the acknowledged one or one of these
        self.later: dict[str, set[float]] = {}
        self.sent = self.ok = 0
        self.stop = threading.Event()

    def run(self) -> None:
        lanes = [f"d{i}/l{j}" for i in range(DESTS) for j in range(LANES)]
        while not self.stop.wait(0.1):
            self.sequence += 1
            batch = self.rng.sample(lanes, 50)
            # value = a slowly moving level, with the sequence as a tiny increasing fraction
            level = 10 + 60 * abs(((self.sequence // 100) % 10) - 5) / 5
            values = {
                lane: round(level * self.rng.random(), 0) + self.sequence / 1e6 for lane in batch
            }
            body = json.dumps({"reports": [{"lane": k, "demand": v} for k, v in values.items()]})
            live = [r for r in self.cluster.replicas if r.alive() and r.url]
            if not live:
                continue
            replica = self.rng.choice(live)
            self.sent += 1
            request = urllib.request.Request(
                replica.url + "/v1/demand", body.encode(), {"Content-Type": "application/json"}
            )
            acked = False
            try:
                with urllib.request.urlopen(request, timeout=2) as answer:
                    acked = answer.status == 200
            except OSError:
                pass
            if acked:
                self.ok += 1
            for lane, value in values.items():
                if acked:
                    self.acked[lane] = value
                    self.later[lane] = set()
                else:
                    self.later.setdefault(lane, set()).add(value)

    def lost(self, stored: dict[str, tuple[float, float]]) -> int:
        """Lanes whose last acknowledged report is not what the store holds (nor a later one)."""
        return sum(
            1
            for lane, value in self.acked.items()
            if lane not in stored
            or (stored[lane][0] != value and stored[lane][0] not in self.later.get(lane, set()))
        )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--scale", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    scale = args.scale
    wall_s = args.minutes * 60 / scale
    pg = postgres_server.cluster()
    store_url = pg.create_database()
    store = open_store(store_url)
    put_topology(store, build_topology(parse_topology(topology())))
    close_stores()
    compute = ComputeServer(port=0, op_delay=0.01, settle_delay=0.1).start()
    compute.log = deque(maxlen=10_000_000)
    for i in range(TARGETS):
        compute.add_group({"project": PROJECT, "zone": ZONE, "name": f"mig{i}", "targetSize": MIN})
    compute.set_faults({"error_rate": 0.2, "codes": [429, 503], "after_apply": 0.3})
    work = Path(os.environ.get("TMPDIR", "/tmp")) / f"soak-ha-{uuid.uuid4().hex[:6]}"
    work.mkdir(parents=True)
    cluster = Cluster(store_url, compute, work)
    cluster.timing = (
        "--lease-seconds",
        f"{15 / scale:g}",
        "--renew-deadline",
        f"{10 / scale:g}",
        "--retry-period",
        f"{2 / scale:g}",
    )
    cluster.interval = f"{10 / scale:g}"
    slots: dict[str, tuple[str, StoreProxy]] = {}
    started = 0

    def launch(slot: str) -> Replica:
        nonlocal started
        if slot not in slots:
            slots[slot] = cluster.proxied_url()
        url, _ = slots[slot]
        started += 1
        replica = cluster.start(f"{slot}-{started}", store_url=url, wait=False)
        replica.slot = slot  # type: ignore[attr-defined]
        return replica

    for slot in ("a", "b", "c"):
        launch(slot)
    demand = Demand(cluster, rng)
    threading.Thread(target=demand.run, daemon=True).start()

    events: list[str] = []
    no_leader_longest = 0.0
    no_leader_since: float | None = None
    epochs_seen: set[int] = set()
    start = time.monotonic()
    next_chaos = start + 10
    while time.monotonic() - start < wall_s:
        now = time.monotonic()
        leaders = [(r, e) for r, e in cluster.leaders()]
        epochs_seen.update(e for _, e in leaders)
        if leaders:
            if no_leader_since is not None:
                no_leader_longest = max(no_leader_longest, now - no_leader_since)
                no_leader_since = None
        elif no_leader_since is None and now - start > 15:
            no_leader_since = now
        for replica in cluster.replicas:
            if replica.process.poll() is not None and not getattr(replica, "replaced", False):
                replica.replaced = True  # type: ignore[attr-defined]
                launch(replica.slot)  # type: ignore[attr-defined]
        if now >= next_chaos and leaders:
            leader = leaders[0][0]
            kind = rng.choice(["kill", "kill", "cut", "down", "kill-follower"])
            at = f"{(now - start) * scale / 60:.1f} sim-min"
            if kind == "kill":
                os.kill(leader.process.pid, signal.SIGKILL)
            elif kind == "kill-follower":
                followers = [r for r in cluster.replicas if r.alive() and r is not leader]
                if followers:
                    os.kill(rng.choice(followers).process.pid, signal.SIGKILL)
            elif kind == "cut":
                proxy = slots[leader.slot][1]  # type: ignore[attr-defined]
                proxy.cut()
                threading.Timer(rng.uniform(2, 4), proxy.mend).start()
            else:
                for _, proxy in slots.values():
                    proxy.cut()
                mend_in = rng.uniform(2, 3)
                for _, proxy in slots.values():
                    threading.Timer(mend_in, proxy.mend).start()
            events.append(f"{at}: {kind}")
            next_chaos = now + rng.uniform(6, 14)
        time.sleep(0.1)
    demand.stop.set()
    time.sleep(1.0)
    for _, proxy in slots.values():
        proxy.mend()
    time.sleep(2.0)

    store = open_store(store_url)
    lease, published = read_lease(store), load_published(store)
    stored = load_demand_reports(store)
    close_stores()
    ticks = published.tick if published else 0
    with compute.lock:
        entries = [e for e in compute.log if e["route"].endswith(".resize")]
    sizes = {int(e["query"]["size"]) for e in entries}
    known: dict[str, tuple[int, int]] = {}
    for epoch in range(1, lease.epoch + 1):
        for tick in range(ticks + 2):
            for i in range(TARGETS):
                group = f"gcp_mig:{PROJECT}/{ZONE}/mig{i}"
                for size in sizes:
                    known[str(uuid.uuid5(NAMESPACE, f"{epoch}/{tick}/{group}/{size}"))] = (epoch, i)
    tagged = [
        (known.get(e["query"].get("requestId", "")), int(e["query"]["size"])) for e in entries
    ]
    untagged = sum(1 for t, _ in tagged if t is None)
    stale = 0
    newest = 0
    for t, _ in tagged:
        if t is None:
            continue
        if t[0] < newest:
            stale += 1
        newest = max(newest, t[0])
    out_of_bounds = sum(1 for _, size in tagged if not MIN <= size <= MAX)
    lost = demand.lost(stored)
    cluster.stop_all()
    compute.stop()

    lines = [
        "# Controller HA soak (bench/soak_ha.py)",
        "",
        f"Machine: {os.cpu_count()} cores, shared with other work while it ran. "
        f"{args.minutes:g} simulated minutes in {wall_s:.0f} s of wall time (every duration "
        f"divided by {scale:g}: interval {10 / scale:g} s, lease {15 / scale:g} s / renew "
        f"{10 / scale:g} s / retry {2 / scale:g} s). 3 replicas on PostgreSQL, each through its own "
        f"TCP proxy; Compute API test server with {TARGETS} MIGs, 20% errors (429/503, 30% after "
        f"apply); {DESTS * LANES} lanes, {POOLS} pools, {TARGETS} targets. Seed {args.seed}.",
        "",
        "| measure | value |",
        "|---|---|",
        f"| ticks published | {ticks} |",
        f"| take-overs (epochs after the first) | {lease.epoch - 1} |",
        f"| longest time without a leader | {no_leader_longest:.1f} s wall "
        f"({no_leader_longest * scale:.0f} s simulated) |",
        f"| resize requests (with retries) | {len(entries)} |",
        f"| resize requests without an epoch | {untagged} |",
        f"| counts out of [min, max] | {out_of_bounds} |",
        f"| resizes from a stale epoch (after a newer one acted) | {stale} |",
        f"| demand batches sent / acknowledged | {demand.sent} / {demand.ok} |",
        f"| acknowledged demand reports lost | {lost} |",
        f"| replicas started (restarts after kills) | {started} |",
        "",
        "Chaos events: " + "; ".join(events),
        "",
        "The longest time without a leader is sampled every 0.1 s by asking each replica's "
        "`GET /v1/leader`; it includes the lease expiry after a kill (lease + one interval at "
        "most by design) and the whole of each store-down window.",
    ]
    target = Path(__file__).with_name("RESULTS-ha.md")
    target.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if (untagged, out_of_bounds, stale, lost) == (0, 0, 0, 0) else 1


if __name__ == "__main__":
    sys.exit(main())
