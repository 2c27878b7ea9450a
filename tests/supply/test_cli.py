"""``arklow supply`` and ``arklow dev compute-server`` run as a user would: a subprocess with env."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from arklow_pulumi.devservers.compute import ComputeServer
from tests.supply.conftest import REGION, make_asg

ARKLOW = str(Path(sys.executable).parent / "arklow")
P, Z = "demo-project", "us-central1-a"


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **env}
    return subprocess.run(
        [ARKLOW, "supply", *args], env=full_env, capture_output=True, text=True, timeout=60
    )


def desired_of(client: Any, name: str) -> int:
    groups = client.describe_auto_scaling_groups(AutoScalingGroupNames=[name])
    return int(groups["AutoScalingGroups"][0]["DesiredCapacity"])


ASG = ("--kind", "aws_asg", "--name", "web", "--region", REGION)


def test_describe_asg(asg: Any, aws_env: dict[str, str]) -> None:
    make_asg(asg, "web", 1, 5, 2)
    out = run(aws_env, "describe", *ASG, "--format", "json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert {k: got[k] for k in ("kind", "name", "desired", "in_service", "min", "max")} == {
        "kind": "aws_asg",
        "name": "web",
        "desired": 2,
        "in_service": 2,
        "min": 1,
        "max": 5,
    }
    assert got["autoscaler"] is False and got["policies"] == [] and got["stable"] is True


def test_set_asg_within_bounds(asg: Any, aws_env: dict[str, str]) -> None:
    make_asg(asg, "web", 1, 5, 2)
    out = run(
        aws_env,
        "set",
        *ASG,
        "--replicas",
        "4",
        "--min-replicas",
        "1",
        "--max-replicas",
        "5",
        "--format",
        "json",
    )
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["desired"] == 4 and got["method"] == "set_desired_capacity"
    assert desired_of(asg, "web") == 4


@pytest.mark.parametrize(
    "extra",
    [
        ("--replicas", "9"),  # above MaxSize
        ("--replicas", "4", "--min-replicas", "1", "--max-replicas", "3"),  # above the target max
    ],
)
def test_set_asg_out_of_bounds_fails_without_writing(
    asg: Any, aws_env: dict[str, str], extra: tuple[str, ...]
) -> None:
    make_asg(asg, "web", 1, 5, 2)
    out = run(aws_env, "set", *ASG, *extra)
    assert out.returncode != 0
    assert out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1 and "outside" in out.stderr
    assert desired_of(asg, "web") == 2


def test_set_asg_with_policy_is_refused(asg: Any, aws_env: dict[str, str]) -> None:
    make_asg(asg, "web", 1, 5, 2)
    asg.put_scaling_policy(
        AutoScalingGroupName="web",
        PolicyName="bump",
        PolicyType="SimpleScaling",
        AdjustmentType="ChangeInCapacity",
        ScalingAdjustment=1,
    )
    out = run(aws_env, "set", *ASG, "--replicas", "3")
    assert out.returncode != 0 and "bump" in out.stderr and desired_of(asg, "web") == 2
    ok = run(aws_env, "set", *ASG, "--replicas", "3", "--override-policies")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["policies"] == ["bump"] and desired_of(asg, "web") == 3


def test_dry_run_prints_the_plan_and_writes_nothing(asg: Any, aws_env: dict[str, str]) -> None:
    make_asg(asg, "web", 1, 5, 2)
    out = run(aws_env, "set", *ASG, "--replicas", "3", "--dry-run")
    assert out.returncode == 0, out.stderr
    plan = json.loads(out.stdout)
    assert plan["dry_run"] is True and plan["method"] == "set_desired_capacity"
    assert (plan["previous"], plan["desired"]) == (2, 3)
    assert desired_of(asg, "web") == 2


def test_missing_asg(asg: Any, aws_env: dict[str, str]) -> None:
    out = run(aws_env, "describe", "--kind", "aws_asg", "--name", "nope", "--region", REGION)
    assert out.returncode != 0 and "not found" in out.stderr and out.stdout == ""


def mig_env(server: ComputeServer) -> dict[str, str]:
    return {"ARKLOW_GCP_COMPUTE_ENDPOINT": server.url}


MIG = ("--kind", "gcp_mig", "--name", "web", "--zone", Z, "--project", P)


def test_describe_and_set_mig(compute: ComputeServer) -> None:
    compute.add_group({"project": P, "zone": Z, "name": "web", "targetSize": 2})
    got = json.loads(run(mig_env(compute), "describe", *MIG, "--format", "json").stdout)
    assert got == {
        **got,
        "kind": "gcp_mig",
        "name": "web",
        "desired": 2,
        "min": None,
        "max": None,
        "autoscaler": False,
        "stable": True,
    }
    out = run(mig_env(compute), "set", *MIG, "--replicas", "5", "--max-replicas", "6")
    assert out.returncode == 0, out.stderr
    after = json.loads(out.stdout)
    assert after["desired"] == 5 and after["method"] == "resize" and after["stable"] is False
    assert [r["size"] for r in compute.call_report()["resizes"]] == [5]


def test_set_autoscaled_mig_moves_window(compute: ComputeServer) -> None:
    compute.add_group(
        {
            "project": P,
            "region": "us-central1",
            "name": "api",
            "targetSize": 2,
            "autoscaler": {"min": 1, "max": 4},
        }
    )
    args = ("--kind", "gcp_mig", "--name", "api", "--region", "us-central1", "--project", P)
    out = run(mig_env(compute), "set", *args, "--replicas", "3", "--max-replicas", "6")
    assert out.returncode == 0, out.stderr
    after = json.loads(out.stdout)
    assert after["method"] == "autoscaler_window" and after["window"] == [3, 6]
    assert (after["min"], after["max"], after["autoscaler"]) == (3, 6, True)


def test_set_mig_out_of_bounds_fails_without_writing(compute: ComputeServer) -> None:
    compute.add_group({"project": P, "zone": Z, "name": "web", "targetSize": 2})
    out = run(mig_env(compute), "set", *MIG, "--replicas", "7", "--max-replicas", "6")
    assert out.returncode != 0 and "outside" in out.stderr and out.stdout == ""
    assert "POST instanceGroupManagers.resize" not in compute.call_report()["by_route"]


def test_mig_needs_project_and_one_location(compute: ComputeServer) -> None:
    out = run(mig_env(compute), "describe", "--kind", "gcp_mig", "--name", "web", "--zone", Z)
    assert out.returncode != 0 and "project" in out.stderr


def test_dev_compute_server_serves_the_api() -> None:
    proc = subprocess.Popen(
        [ARKLOW, "dev", "compute-server", "--port", "0", "--latency-ms", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = line.strip().rsplit(" ", 1)[-1]
        body = json.dumps({"project": P, "zone": Z, "name": "web", "targetSize": 1}).encode()
        req = urllib.request.Request(f"{url}/_admin/groups", data=body, method="POST")
        urllib.request.urlopen(req).read()
        with urllib.request.urlopen(
            f"{url}/compute/v1/projects/{P}/zones/{Z}/instanceGroupManagers/web"
        ) as resp:
            mig = json.loads(resp.read())
        assert mig["targetSize"] == 1 and mig["status"]["isStable"] is True
    finally:
        proc.terminate()
        proc.wait(timeout=10)
