"""Supply bench: API calls and wall time of a tick's supply work over 1,000 groups.

Each pass is what one controller tick does to the supply, on the path the product runs: the
observe step's one cheap describe of every group (``SupplyRouter.describe_partial``, as
``controller/tick/observing.py`` makes it), then the act step (``controller/tick/acting.py``
``apply_changes``, on a long-lived pool of ``MAX_PARALLEL`` threads as the controller keeps one)
with the groups whose count differs. The lease fence is left out (there is no store here).

Runs against a moto server (reached through AWS_ENDPOINT_URL) and the project's Compute API test
server, both on 127.0.0.1. ``python bench/bench_supply.py`` prints a markdown section and writes
``bench/RESULTS-supply.md``. ``--baseline DIR`` (a checkout of another commit, e.g. ``git worktree
add /tmp/baseline-supply f9a4e48``) runs the same passes on that checkout's package too, in the
same run (each side in a process of its own), and prints both.
"""

from __future__ import annotations

import argparse
import datetime
import json
import logging
import os
import platform
import statistics
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

N = 1000
REGION = "us-east-1"
P, Z = "bench-project", "us-central1-a"
ROOT = Path(__file__).resolve().parent.parent


def tick_pass(
    router: Any, targets: dict[Any, Any], decisions: dict[Any, int], pool: Any
) -> tuple[Any, float]:
    """The tick's describe, then its act step for the groups whose count differs: (the act
    step's report, the seconds the act step took)."""
    from arklow_pulumi.controller.tick.acting import Change, apply_changes
    from arklow_pulumi.core.deciding import TargetId
    from arklow_pulumi.supply.planning import needs_change

    seen = router.describe_partial(list(targets), detail=False).found
    changes = [
        Change(TargetId("bench", t.name), t, seen[ref], decisions[ref])
        for ref, t in targets.items()
        if ref in seen and needs_change(seen[ref], decisions[ref])
    ]
    start = time.perf_counter()
    report = apply_changes(router, changes, None, pool)
    return report, time.perf_counter() - start


def aws_rows(pool: Any) -> list[dict[str, Any]]:
    import boto3
    from moto.server import ThreadedMotoServer

    from arklow_pulumi.core.topology import GroupRef, ScaleTarget
    from arklow_pulumi.supply.aws import AwsAsgSupply
    from arklow_pulumi.supply.routing import SupplyRouter

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    os.environ.update(
        AWS_ENDPOINT_URL=f"http://{host}:{port}",
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_DEFAULT_REGION=REGION,
    )
    raw = boto3.session.Session().client("autoscaling", region_name=REGION)
    raw.create_launch_configuration(
        LaunchConfigurationName="lc", ImageId="ami-12345678", InstanceType="t3.micro"
    )
    for k in range(N):
        raw.create_auto_scaling_group(
            AutoScalingGroupName=f"asg-{k:04d}",
            LaunchConfigurationName="lc",
            MinSize=0,
            MaxSize=5,
            DesiredCapacity=0,
            AvailabilityZones=[f"{REGION}a"],
        )
    supply = AwsAsgSupply(REGION)
    calls: Counter[str] = Counter()
    supply._client(REGION).meta.events.register(
        "before-call", lambda model, **_: calls.update([model.name])
    )
    router = SupplyRouter.of(supply)
    refs = [GroupRef("aws_asg", f"asg-{k:04d}", region=REGION) for k in range(N)]
    targets = {r: ScaleTarget(r.name, r, 0, 5, 1.0, 0) for r in refs}
    rows = []
    for label, decisions in (
        ("steady (all at decision)", dict.fromkeys(refs, 0)),
        ("100 groups change", {r: (1 if k < 100 else 0) for k, r in enumerate(refs)}),
        ("steady again", {r: (1 if k < 100 else 0) for k, r in enumerate(refs)}),
    ):
        calls.clear()
        start = time.perf_counter()
        report, act = tick_pass(router, targets, decisions, pool)
        wall = time.perf_counter() - start
        describe = calls["DescribeAutoScalingGroups"]
        writes = calls["SetDesiredCapacity"]
        rows.append(
            {
                "pass": label,
                "describe": describe,
                "writes": writes,
                "other": sum(calls.values()) - describe - writes,
                "wall": wall,
                "act": act,
                "changed": sum(1 for _c, r in report.done if r.changed),
                "failed": len(report.failed),
            }
        )
    server.stop()
    return rows


def gcp_rows(pool: Any) -> dict[str, Any]:
    from arklow_pulumi.core.topology import GroupRef, ScaleTarget
    from arklow_pulumi.devservers.compute import ComputeServer
    from arklow_pulumi.supply.gcp import GcpMigSupply
    from arklow_pulumi.supply.retrying import RetryPolicy
    from arklow_pulumi.supply.routing import SupplyRouter

    server = ComputeServer(op_delay=0.01, settle_delay=0.05, seed=7).start()
    for k in range(N):
        server.add_group({"project": P, "zone": Z, "name": f"mig-{k:04d}", "targetSize": 1})
    supply = GcpMigSupply(server.url, RetryPolicy(deadline=20.0, base=0.05, cap=1.0))
    router = SupplyRouter.of(supply)
    refs = [GroupRef("gcp_mig", f"mig-{k:04d}", zone=Z, project=P) for k in range(N)]
    targets = {r: ScaleTarget(r.name, r, 1, 4, 1.0, 1) for r in refs}
    rows: list[dict[str, Any]] = []

    def run(label: str, decisions: dict[Any, int]) -> tuple[Any, Any]:
        server.reset_calls()
        start = time.perf_counter()
        report, act = tick_pass(router, targets, decisions, pool)
        wall = time.perf_counter() - start
        calls = server.call_report()
        by = calls["by_route"]
        rows.append(
            {
                "pass": label,
                "aggregated": by.get("GET aggregated/instanceGroupManagers", 0),
                "gets": by.get("GET instanceGroupManagers.get", 0),
                "resizes": len(calls["resizes"]),
                "injected": sum(calls["injected"].values()),
                "total": calls["total"],
                "wall": wall,
                "act": act,
                "changed": sum(1 for _c, r in report.done if r.changed),
                "failed": len(report.failed),
            }
        )
        return report, calls

    run("steady (all at decision)", dict.fromkeys(refs, 1))
    decisions = {r: 1 + (k % 4) for k, r in enumerate(refs)}
    server.set_faults({"error_rate": 0.2, "codes": [429, 503], "after_apply": 0.5})
    resizes: list[dict[str, Any]] = []
    passes = 0
    for passes in range(1, 4):
        report, calls = run(f"20% errors, pass {passes}", decisions)
        resizes.extend(calls["resizes"])
        if not report.failed:
            break
    server.set_faults({})
    states = supply.describe(refs)
    ids = [r["requestId"] for r in resizes]
    run("steady after convergence", decisions)
    server.stop()
    return {
        "rows": rows,
        "converged": sum(1 for r in refs if states[r].desired == decisions[r]),
        "passes": passes,
        "resizes": len(resizes),
        "needed": sum(1 for r in refs if decisions[r] != 1),
        "duplicates": len(ids) - len(set(ids)),
        "outside": sum(1 for r in resizes if not 1 <= r["size"] <= 4),
    }


def measure() -> dict[str, Any]:
    from arklow_pulumi.controller.tick.acting import MAX_PARALLEL

    with ThreadPoolExecutor(MAX_PARALLEL, thread_name_prefix="arklow-resize") as pool:
        return {"aws": aws_rows(pool), "gcp": gcp_rows(pool)}


def measured_in(root: Path) -> dict[str, Any]:
    """:func:`measure` in a process of its own, on the package under ``root``."""
    env = dict(os.environ, PYTHONPATH=str(root))
    done = subprocess.run(
        [sys.executable, __file__, "--json"], env=env, check=True, capture_output=True, text=True
    )
    return dict(json.loads(done.stdout))


def median_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The first run, with each pass's wall and act-step seconds the median over ``runs``."""

    def rows(first: list[dict[str, Any]], each: list[list[dict[str, Any]]]) -> list[Any]:
        return [
            {**row, **{k: statistics.median(r[i][k] for r in each) for k in ("wall", "act")}}
            for i, row in enumerate(first)
        ]

    first = runs[0]
    return {
        "aws": rows(first["aws"], [r["aws"] for r in runs]),
        "gcp": {
            **first["gcp"],
            "rows": rows(first["gcp"]["rows"], [r["gcp"]["rows"] for r in runs]),
        },
    }


def commit_of(root: Path) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), "log", "-1", "--format=%h"], capture_output=True, text=True
    )
    return done.stdout.strip() or "?"


def aws_table(rows: list[dict[str, Any]]) -> list[str]:
    out = [
        "| pass | describe calls | write calls | other calls | wall s | act step s | changed "
        "| failed |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['pass']} | {r['describe']} | {r['writes']} | {r['other']} | {r['wall']:.3f} | "
            f"{r['act']:.3f} | {r['changed']} | {r['failed']} |"
        )
    return out


def gcp_table(gcp: dict[str, Any]) -> list[str]:
    out = [
        "| pass | aggregated list calls | get calls | resizes applied | errors injected "
        "| all calls | wall s | act step s | changed | failed |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in gcp["rows"]:
        out.append(
            f"| {r['pass']} | {r['aggregated']} | {r['gets']} | {r['resizes']} | "
            f"{r['injected']} | {r['total']} | {r['wall']:.3f} | {r['act']:.3f} | "
            f"{r['changed']} | {r['failed']} |"
        )
    out += [
        "",
        f"Under a 20% 429/503 error rate (half of the injected errors on mutations arrive *after* "
        f"the resize took effect): {gcp['converged']}/{N} groups at their decision after "
        f"{gcp['passes']} pass(es); {gcp['resizes']} resizes applied for {gcp['needed']} groups "
        f"that needed one; duplicate request ids applied: {gcp['duplicates']}; sizes outside "
        f"[1, 4]: {gcp['outside']}.",
    ]
    return out


def section(current: dict[str, Any], baseline: dict[str, Any] | None, base: str) -> list[str]:
    lines = [
        "## Supply bindings",
        "",
        f"Machine: {os.cpu_count()} cores (nproc), Python {platform.python_version()}, "
        f"{platform.machine()}. Wall times include the local servers' work on the same cores.",
        "",
        "Each pass is one tick's supply work on the path the product runs: the observe step's "
        "cheap describe of every group, then the act step (`controller/tick/acting.py` "
        "`apply_changes`) for the groups whose count differs, which goes through the one act "
        "path (`supply/reconciling.py` `reconcile_pass`: the groups about to change described "
        "again with their policies, planned by the pure planner, applied in parallel on the "
        "controller's pool of 8 threads). The lease fence is not in these figures (no store).",
        "",
        f"### AWS: {N} Auto Scaling groups, moto server (AWS_ENDPOINT_URL)",
        "",
        *aws_table(current["aws"]),
    ]
    if baseline is not None:
        lines += ["", f"Baseline {base}, same run:", "", *aws_table(baseline["aws"])]
    lines += ["", f"### GCP: {N} zonal MIGs, project's Compute API test server", ""]
    lines += gcp_table(current["gcp"])
    if baseline is not None:
        lines += ["", f"Baseline {base}, same run:", "", *gcp_table(baseline["gcp"])]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", action="store_true", help="measure here, print JSON")
    parser.add_argument("--baseline", type=Path, help="a checkout to measure too")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each side, alternating")
    args = parser.parse_args()
    if args.json:
        print(json.dumps(measure()))
        return
    bases: list[dict[str, Any]] = []
    currents: list[dict[str, Any]] = []
    for _ in range(args.repeat):
        if args.baseline:
            bases.append(measured_in(args.baseline))
        currents.append(measured_in(ROOT))
    baseline = median_of(bases) if bases else None
    current = median_of(currents)
    base = f"`{commit_of(args.baseline)}`" if args.baseline else ""
    lines = section(current, baseline, base)
    note = (
        f"Recorded with `python bench/bench_supply.py"
        f"{' --baseline DIR' if args.baseline else ''} --repeat {args.repeat}` at "
        f"`{commit_of(ROOT)}` on {datetime.date.today()}; `nproc` = {os.cpu_count()}; wall "
        f"times are the median of {args.repeat} run(s) of each side, the sides alternating, on a "
        f"machine shared with other work (load average {os.getloadavg()[0]:.1f} at the end). "
        "Each resize is polled to DONE, "
        "backoff base 0.05 s, cap 1 s; the steady passes are the controller's per-tick cost."
    )
    if args.baseline:
        note += (
            " The baseline's act step planned each group inside the binding (`set_desired`) and "
            "looked up an ASG's policies per group being changed; the one act path describes "
            "the groups about to change again, in batches, with their policies."
        )
    text = "\n".join([*lines, "", note])
    print(text)
    (Path(__file__).resolve().parent / "RESULTS-supply.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
