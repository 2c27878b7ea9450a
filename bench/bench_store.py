"""Bench: PoolMembership provider create + read for 1,000 memberships, SQLite and PostgreSQL.

Targets: median per operation <= 5 ms on SQLite, <= 10 ms on PostgreSQL over loopback.
Usage: .venv/bin/python bench/bench_store.py [--postgres-url URL] [--skip-postgres]
Without --postgres-url a throwaway cluster is started from Debian's postgresql binaries (the same
helper the tests use). Writes bench/RESULTS-store.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from arklow_pulumi.providers.destinations import DestinationProvider
from arklow_pulumi.providers.memberships import PoolMembershipProvider
from arklow_pulumi.providers.pools import PoolProvider
from arklow_pulumi.store.engine import close_stores

N = 1000
POOLS = 4
TARGETS_MS = {"sqlite": 5.0, "postgresql": 10.0}


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def run(url: str) -> dict[str, list[float]]:
    dests, pools, members = DestinationProvider(), PoolProvider(), PoolMembershipProvider()
    for p in range(POOLS):
        pools.create({"arklow_name": f"pool-{p}", "resource": "gpu", "store": url})
    times: dict[str, list[float]] = {
        "destination create": [],
        "membership create": [],
        "membership read": [],
    }
    for i in range(N):
        props = {
            "arklow_name": f"d{i}",
            "resources": ["gpu", "cpu"],
            "store": url,
            "lanes": [{"name": "default", "limit": 8.0, "weight": 1.0, "cost": None}],
            "standalone_capacity": {},
        }
        times["destination create"].append(timed(lambda props=props: dests.create(props)))
    for i in range(N):
        props = {"destination": f"d{i}", "pool": f"pool-{i % POOLS}", "store": url}
        times["membership create"].append(timed(lambda props=props: members.create(props)))
    for i in range(N):
        props = {"destination": f"d{i}", "pool": f"pool-{i % POOLS}", "store": url}
        times["membership read"].append(timed(lambda props=props: members.read("", props)))
    close_stores()
    return times


def summary(backend: str, times: dict[str, list[float]]) -> list[str]:
    rows = []
    for op, values in times.items():
        q = statistics.quantiles(values, n=100)
        rows.append(
            f"| {backend} | {op} | {statistics.median(values):.2f} | {q[94]:.2f} | {q[98]:.2f} |"
        )
    both = times["membership create"] + times["membership read"]
    ok = statistics.median(both) <= TARGETS_MS[backend]
    rows.append(
        f"| {backend} | **membership create + read** | **{statistics.median(both):.2f}** "
        f"| target <= {TARGETS_MS[backend]:g} ms | {'PASS' if ok else 'FAIL'} |"
    )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--postgres-url")
    parser.add_argument("--skip-postgres", action="store_true")
    args = parser.parse_args()
    rows: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        rows += summary("sqlite", run(f"sqlite:///{tmp}/arklow.db"))
    if not args.skip_postgres:
        url = args.postgres_url
        cluster = None
        if url is None:
            from tests.store import postgres_server

            cluster = postgres_server.cluster()
            url = cluster.create_database()
        try:
            rows += summary("postgresql", run(url))
        finally:
            if cluster is not None:
                postgres_server.stop()
    text = "\n".join(
        [
            "# Store bench: provider create + read, 1,000 memberships",
            "",
            f"`bench/bench_store.py` on {os.cpu_count()} cores (nproc), Python {sys.version.split()[0]}."
            f" {N} destinations (2 resources each), {POOLS} shared pools, then {N} PoolMembership"
            " creates (joins) and reads, each a full provider call in its own transaction.",
            "PostgreSQL: a local cluster over loopback TCP (fsync off, as in the tests).",
            "",
            "| backend | operation | median ms | p95 ms | p99 ms |",
            "|---|---|---|---|---|",
            *rows,
            "",
        ]
    )
    (ROOT / "bench" / "RESULTS-store.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
