"""reconcile_pass (the one act path), verify_target, supply_for and the in-memory binding's
parity with the clouds."""

from __future__ import annotations

import threading
from typing import Any

import dill
import pytest

from arklow_pulumi.core.topology import GroupRef, ScaleTarget
from arklow_pulumi.devservers.compute import ComputeServer
from arklow_pulumi.supply import (
    EndpointConfig,
    GroupState,
    InMemorySupply,
    OutOfBounds,
    PassReport,
    PolicyConflict,
    ReplicaLimits,
    RetryPolicy,
    SupplyRouter,
    TemporarySupplyError,
    reconcile_pass,
    supply_for,
    verify_target,
)
from arklow_pulumi.supply.aws import AwsAsgSupply
from arklow_pulumi.supply.errors import SupplyError
from arklow_pulumi.supply.gcp import GcpMigSupply
from arklow_pulumi.supply.groups import Plan
from arklow_pulumi.supply.planning import plan_text
from tests import aws_moto
from tests.supply.conftest import REGION, count_calls, make_asg, set_size

P, Z = "demo-project", "us-central1-a"


def asg_ref(name: str) -> GroupRef:
    return GroupRef("aws_asg", name, region=REGION)


def mig_ref(name: str) -> GroupRef:
    return GroupRef("gcp_mig", name, zone=Z, project=P)


def target(ref: GroupRef, low: int, high: int, override: bool = False) -> ScaleTarget:
    return ScaleTarget("t-" + ref.name, ref, low, high, 1.0, low, override)


# -- reconcile_pass -------------------------------------------------------------------------------


def test_pass_over_asgs_batches_describes_and_writes_only_differences(asg: Any) -> None:
    for k in range(150):
        make_asg(asg, f"g{k:03d}", 0, 5, 1)
    supply = AwsAsgSupply(REGION)
    calls = count_calls(supply._client(REGION))
    decisions = {asg_ref(f"g{k:03d}"): (2 if k < 10 else 1) for k in range(150)}
    router = SupplyRouter.of(supply)
    report = reconcile_pass(router, decisions)
    assert report.converged and len(report.changed) == 10 and len(report.unchanged) == 140
    # 2 batches of 100 for all, then 1 with policies for the 10 about to change
    assert calls["DescribeAutoScalingGroups"] == 3
    assert calls["DescribePolicies"] == calls["DescribeScheduledActions"] == 1
    assert calls["SetDesiredCapacity"] == 10 == report.set_calls
    calls.clear()
    steady = reconcile_pass(router, decisions)
    assert dict(calls) == {"DescribeAutoScalingGroups": 2} and not steady.changed
    assert steady.set_calls == 0


def test_pass_never_writes_outside_bounds(asg: Any) -> None:
    make_asg(asg, "a", 1, 5, 2)
    make_asg(asg, "b", 1, 5, 2)
    supply = AwsAsgSupply(REGION)
    calls = count_calls(supply._client(REGION))
    decisions = {asg_ref("a"): 9, asg_ref("b"): 4}
    targets = {asg_ref("b"): target(asg_ref("b"), 1, 3)}
    report = reconcile_pass(SupplyRouter.of(supply), decisions, targets=targets)
    assert isinstance(report.failed[asg_ref("a")], OutOfBounds)
    assert isinstance(report.failed[asg_ref("b")], OutOfBounds)
    assert calls["SetDesiredCapacity"] == 0


def test_pass_leaves_groups_with_policies_alone_unless_overridden(asg: Any) -> None:
    make_asg(asg, "a", 1, 5, 2)
    aws_moto.add_step_policy(asg, "a", "p1")
    router = SupplyRouter.of(AwsAsgSupply(REGION))
    report = reconcile_pass(router, {asg_ref("a"): 3})
    assert isinstance(report.failed[asg_ref("a")], PolicyConflict)
    report = reconcile_pass(
        router, {asg_ref("a"): 3}, targets={asg_ref("a"): target(asg_ref("a"), 1, 5, True)}
    )
    assert report.changed[asg_ref("a")].desired == 3


def test_pass_over_migs_uses_aggregated_listing(compute: ComputeServer) -> None:
    for k in range(30):
        compute.add_group({"project": P, "zone": Z, "name": f"m{k:02d}", "targetSize": 1})
    supply = GcpMigSupply(compute.url)
    decisions = {mig_ref(f"m{k:02d}"): 1 for k in range(30)}
    compute.reset_calls()
    report = reconcile_pass(SupplyRouter.of(supply), decisions)
    assert report.converged and not report.changed
    assert compute.call_report()["by_route"] == {"GET aggregated/instanceGroupManagers": 1}


def test_pass_converges_under_injected_errors_without_duplicate_resizes(
    compute: ComputeServer,
) -> None:
    for k in range(30):
        compute.add_group({"project": P, "zone": Z, "name": f"m{k:02d}", "targetSize": 1})
    compute.set_faults({"error_rate": 0.2, "codes": [429, 503], "after_apply": 0.5})
    supply = GcpMigSupply(compute.url, RetryPolicy(deadline=5.0, base=0.01, cap=0.05))
    decisions = {mig_ref(f"m{k:02d}"): 1 + k % 4 for k in range(30)}
    targets = {r: target(r, 1, 4) for r in decisions}
    for _ in range(3):
        if reconcile_pass(SupplyRouter.of(supply), decisions, targets=targets).converged:
            break
    compute.set_faults({})
    states = supply.describe(list(decisions))
    assert {r: s.desired for r, s in states.items()} == decisions
    resizes = compute.call_report()["resizes"]
    assert len({r["requestId"] for r in resizes}) == len(resizes)
    assert len(resizes) == sum(1 for n in decisions.values() if n != 1)
    assert all(1 <= r["size"] <= 4 for r in resizes)
    assert sum(compute.call_report()["injected"].values()) > 0


# -- the in-memory binding behaves as the others --------------------------------------------------


def scenario(supply: Any, ref: GroupRef) -> list[Any]:
    """The same steps against any binding; returns what was observed."""
    seen: list[Any] = [supply.describe([ref])[ref].desired]
    seen.append(set_size(supply, ref, 3, limits=ReplicaLimits(1, 4)).method)
    seen.append(set_size(supply, ref, 3, limits=ReplicaLimits(1, 4)).method)
    with pytest.raises(OutOfBounds):
        set_size(supply, ref, 5, limits=ReplicaLimits(1, 4))
    seen.append(supply.describe([ref])[ref].desired)
    seen.append(
        supply.describe([ref.__class__(ref.kind, "missing", ref.region, ref.zone, ref.project)])
    )
    return seen


def test_in_memory_matches_aws(asg: Any) -> None:
    make_asg(asg, "web", 1, 5, 2)
    memory = InMemorySupply([GroupState(asg_ref("web"), 2, 2, min=1, max=5)])
    assert scenario(memory, asg_ref("web")) == scenario(AwsAsgSupply(REGION), asg_ref("web"))
    with pytest.raises(OutOfBounds, match="group's"):
        set_size(memory, asg_ref("web"), 6)


def test_in_memory_matches_gcp(compute: ComputeServer) -> None:
    compute.add_group({"project": P, "zone": Z, "name": "web", "targetSize": 2})
    memory = InMemorySupply([GroupState(mig_ref("web"), 2, 2)])
    assert scenario(memory, mig_ref("web")) == scenario(GcpMigSupply(compute.url), mig_ref("web"))
    assert memory.calls["write"] == 1


def test_in_memory_pass_and_pickling() -> None:
    refs = [GroupRef("aws_asg", f"g{k}", region=REGION) for k in range(5)]
    memory = InMemorySupply([GroupState(r, 1, 1, min=0, max=3) for r in refs])
    report = reconcile_pass(SupplyRouter.of(memory), dict.fromkeys(refs, 2))
    assert len(report.changed) == 5 and memory.calls == {"describe": 1, "detail": 1, "write": 5}
    copy = dill.loads(dill.dumps(memory))
    assert copy.describe(refs)[refs[0]].desired == 2


# -- verify_target --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("low", "high", "fields"),
    [
        (1, 5, []),
        (2, 4, []),
        (0, 5, ["min_replicas"]),
        (1, 6, ["max_replicas"]),
        (0, 9, ["min_replicas", "max_replicas"]),
    ],
)
def test_verify_target_against_an_asg(asg: Any, low: int, high: int, fields: list[str]) -> None:
    make_asg(asg, "web", 1, 5, 2)
    problems = verify_target(target(asg_ref("web"), low, high), AwsAsgSupply(REGION))
    assert [p.field for p in problems] == fields
    assert all(p.obj == "scale target 't-web'" for p in problems)


def test_verify_target_missing_group(asg: Any, compute: ComputeServer) -> None:
    for ref, supply in (
        (asg_ref("gone"), AwsAsgSupply(REGION)),
        (mig_ref("gone"), GcpMigSupply(compute.url)),
    ):
        problems = verify_target(target(ref, 1, 2), supply)
        assert [(p.obj, p.field) for p in problems] == [("scale target 't-gone'", "group")]
        assert "does not exist" in problems[0].message


def test_verify_target_mig(compute: ComputeServer) -> None:
    compute.add_group({"project": P, "zone": Z, "name": "web", "targetSize": 2})
    supply = GcpMigSupply(compute.url)
    assert verify_target(target(mig_ref("web"), 1, 50), supply) == []
    assert [p.field for p in verify_target(target(mig_ref("web"), 1, 5000), supply)] == [
        "max_replicas"
    ]


def test_verify_target_autoscaled_mig_must_fit_under_the_autoscaler_max(
    compute: ComputeServer,
) -> None:
    compute.add_group(
        {
            "project": P,
            "zone": Z,
            "name": "web",
            "targetSize": 2,
            "autoscaler": {"min": 2, "max": 8},
        }
    )
    supply = GcpMigSupply(compute.url)
    # the window's min is what a count moves: a target min below it is fine
    assert verify_target(target(mig_ref("web"), 0, 8), supply) == []
    [problem] = verify_target(target(mig_ref("web"), 1, 9), supply)
    assert problem.field == "max_replicas" and "maxNumReplicas 8" in problem.message


# -- supply_for -----------------------------------------------------------------------------------


def test_supply_for_reads_endpoints_from_config_then_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARKLOW_GCP_COMPUTE_ENDPOINT", "http://127.0.0.1:9")
    from_env = supply_for("gcp_mig")
    assert isinstance(from_env, GcpMigSupply) and from_env.endpoint == "http://127.0.0.1:9"
    from_config = supply_for("gcp_mig", {"arklow:gcpComputeEndpoint": "http://127.0.0.1:8"})
    assert isinstance(from_config, GcpMigSupply) and from_config.endpoint == "http://127.0.0.1:8"
    aws = supply_for("aws_asg", EndpointConfig(aws_region="eu-west-1"))
    assert isinstance(aws, AwsAsgSupply) and aws.region == "eu-west-1"
    assert dill.loads(dill.dumps(aws)).region == "eu-west-1"
    from arklow_pulumi.core.errors import InvalidInput

    with pytest.raises(InvalidInput, match="kind"):
        supply_for("azure_vmss")


@pytest.mark.parametrize(
    ("config", "env", "project"),
    [
        ({"arklow:gcpProject": "from-config"}, {"GOOGLE_CLOUD_PROJECT": "g"}, "from-config"),
        ({}, {"GOOGLE_CLOUD_PROJECT": "g", "CLOUDSDK_CORE_PROJECT": "c"}, "g"),
        ({}, {"CLOUDSDK_CORE_PROJECT": "c"}, "c"),
        ({}, {"GOOGLE_CLOUD_PROJECT": " ", "CLOUDSDK_CORE_PROJECT": ""}, None),
    ],
)
def test_gcp_project_from_config_then_env(
    config: dict[str, object], env: dict[str, str], project: str | None
) -> None:
    found = EndpointConfig.from_provider_config(config, env)
    assert found.gcp_project == project
    supply = supply_for("gcp_mig", found)
    assert isinstance(supply, GcpMigSupply) and supply.project == project


def test_a_group_without_project_uses_the_configured_one(compute: ComputeServer) -> None:
    compute.add_group({"project": P, "zone": Z, "name": "web", "targetSize": 2})
    supply = supply_for("gcp_mig", {"arklow:gcpComputeEndpoint": compute.url, "gcpProject": P})
    ref = GroupRef("gcp_mig", "web", zone=Z)
    assert supply.describe([ref])[ref].desired == 2
    from arklow_pulumi.supply import PermanentSupplyError

    with pytest.raises(PermanentSupplyError, match="project: a GCP project is required"):
        GcpMigSupply(compute.url).describe([ref])


# -- the router, dry-run, parallel writes (in memory) ---------------------------------------------


class Recording(InMemorySupply):
    """Records each describe's batch; ``gate`` makes writes wait for each other."""

    def __init__(self, groups: list[GroupState], gate: threading.Barrier | None = None) -> None:
        super().__init__(groups)
        self.batches: list[tuple[GroupRef, ...]] = []
        self.gate = gate

    def describe(self, refs: Any, *, detail: bool = True) -> Any:
        self.batches.append(tuple(refs))
        return super().describe(refs, detail=detail)

    def apply(self, plan: Any, current: GroupState) -> Any:
        if self.gate is not None:
            self.gate.wait()  # breaks (and fails the test) unless the writes run together
        return super().apply(plan, current)


def regions_and_projects() -> tuple[list[GroupRef], list[GroupRef]]:
    asgs = [GroupRef("aws_asg", f"a{k}", region=f"r{k % 3}") for k in range(9)]
    migs = [GroupRef("gcp_mig", f"m{k}", zone="z", project=f"p{k % 2}") for k in range(4)]
    return asgs, migs


def test_router_describes_each_region_and_project_once() -> None:
    asgs, migs = regions_and_projects()
    aws = Recording([GroupState(r, 1, 1, min=0, max=5) for r in asgs])
    gcp = Recording([GroupState(r, 1, 1) for r in migs])
    router = SupplyRouter({"aws_asg": aws, "gcp_mig": gcp})
    report = reconcile_pass(router, dict.fromkeys(asgs + migs, 1))
    assert report.converged and not report.changed and report.set_calls == 0
    assert sorted({r.region for r in b} for b in aws.batches) == [{"r0"}, {"r1"}, {"r2"}]
    assert sorted({r.project for r in b} for b in gcp.batches) == [{"p0"}, {"p1"}]
    assert report.describe_calls == 5 == router.describe_calls
    assert aws.calls["write"] == gcp.calls["write"] == 0


def test_a_failing_partition_does_not_hide_the_others() -> None:
    asgs, migs = regions_and_projects()
    aws = InMemorySupply([GroupState(r, 1, 1, min=0, max=5) for r in asgs])
    gcp = InMemorySupply([GroupState(r, 1, 1) for r in migs])
    gcp.fail_next = [TemporarySupplyError("503: unavailable")]
    report = reconcile_pass(SupplyRouter({"aws_asg": aws, "gcp_mig": gcp}, max_workers=1),
                            dict.fromkeys(asgs + migs, 2))  # fmt: skip
    failed = {r for r in migs if r.project == "p0"}  # the first project asked fails
    assert set(report.failed) == failed
    assert all(isinstance(e, TemporarySupplyError) for e in report.failed.values())
    assert set(report.changed) == set(asgs) | (set(migs) - failed)


def plan_lines(report: PassReport) -> list[str]:
    """One line per group of a dry run's report that would change or is refused, by group."""
    writes = {r: p for r, p in report.plans.items() if p.method != "unchanged"}
    said: dict[GroupRef, Plan | SupplyError] = {**report.failed, **writes}
    return [plan_text(str(ref), said[ref]) for ref in sorted(said)]


def test_dry_run_returns_the_plan_and_writes_nothing() -> None:
    refs = [GroupRef("aws_asg", f"g{k}", region=REGION) for k in range(4)]
    memory = InMemorySupply([GroupState(r, 2, 2, min=1, max=5) for r in refs])
    decisions = {refs[0]: 2, refs[1]: 4, refs[2]: 9, refs[3]: 1}
    report = reconcile_pass(SupplyRouter.of(memory), decisions, dry_run=True)
    assert memory.calls["write"] == 0 and report.set_calls == 0 and not report.changed
    assert plan_lines(report) == [
        f"set_desired_capacity aws_asg:{REGION}/g1: 2 -> 4",
        f"refuse aws_asg:{REGION}/g2: " + str(report.failed[refs[2]]),
        f"set_desired_capacity aws_asg:{REGION}/g3: 2 -> 1",
    ]
    assert not report.converged
    assert {r: s.desired for r, s in memory.describe(refs).items()} == dict.fromkeys(refs, 2)


def test_writes_run_in_parallel_across_groups() -> None:
    refs = [GroupRef("aws_asg", f"g{k}", region=REGION) for k in range(8)]
    gate = threading.Barrier(4, timeout=30)
    memory = Recording([GroupState(r, 1, 1, min=0, max=5) for r in refs], gate)
    report = reconcile_pass(SupplyRouter.of(memory, max_workers=4), dict.fromkeys(refs, 3))
    assert report.converged and len(report.changed) == 8 and memory.calls["write"] == 8


class FailOnce(InMemorySupply):
    """The first write to ``broken`` fails as a throttled call would."""

    broken = GroupRef("aws_asg", "g2", region=REGION)

    def apply(self, plan: Any, current: GroupState) -> Any:
        if plan.ref == self.broken and not self.calls["failed"]:
            self.calls["failed"] += 1
            raise TemporarySupplyError("throttled", plan.ref)
        return super().apply(plan, current)


def test_one_failing_write_does_not_stop_the_others() -> None:
    refs = [GroupRef("aws_asg", f"g{k}", region=REGION) for k in range(6)]
    memory = FailOnce([GroupState(r, 1, 1, min=0, max=5) for r in refs])
    report = reconcile_pass(SupplyRouter.of(memory, max_workers=1), dict.fromkeys(refs, 4))
    assert list(report.failed) == [FailOnce.broken] and len(report.changed) == 5
    again = reconcile_pass(SupplyRouter.of(memory), dict.fromkeys(refs, 4))
    assert list(again.changed) == [FailOnce.broken] and again.converged


def test_a_pass_reuses_the_ticks_describe() -> None:
    refs = [GroupRef("aws_asg", f"g{k}", region=REGION) for k in range(5)]
    memory = InMemorySupply([GroupState(r, 1, 1, min=0, max=5) for r in refs])
    router = SupplyRouter.of(memory)
    seen = router.describe_partial(refs, detail=False)
    steady = reconcile_pass(router, dict.fromkeys(refs, 1), observed=seen)
    assert steady.describe_calls == 0 and memory.calls == {"describe": 1}
    moving = reconcile_pass(router, {refs[0]: 3, refs[1]: 1}, observed=seen)
    # only the group about to change is described again, with its policies
    assert moving.describe_calls == 1 and memory.calls == {"describe": 1, "detail": 1, "write": 1}
    assert moving.changed[refs[0]].desired == 3
