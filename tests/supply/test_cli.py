"""``arklow supply`` and ``arklow dev compute-server`` run as a user would, with env: a real process
for each kind's describe, a group not found, the --timeout watchdog (SIGALRM) and the dev server;
the other cases through the same entry point in this process (``arklow``)."""

from __future__ import annotations

import json
import subprocess
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from arklow_pulumi.devservers.compute import ComputeServer
from tests import arklow_cli, aws_moto
from tests.arklow_cli import ARKLOW, Invoke, Result
from tests.supply.conftest import REGION, make_asg

P, Z = "demo-project", "us-central1-a"
# The GCP project a user's shell may name, dropped unless a test's ``env`` sets it.
PROJECT_ENVS = ("GOOGLE_CLOUD_PROJECT", "CLOUDSDK_CORE_PROJECT")
CLEARED = (*arklow_cli.CLEARED, *PROJECT_ENVS)


def run(env: dict[str, str], *args: str, timeout: float = 60) -> Result:
    """``arklow supply ARGS`` as a real process, with ``env``."""
    return arklow_cli.run(["supply", *args], env, timeout=timeout, cleared=CLEARED)


@pytest.fixture
def arklow(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Invoke:
    """``run`` in this process (the Compute client's import is paid once, not per command):
    the same entry point, exit codes and streams, with ``env`` applied for that call only."""
    invoke = arklow_cli.in_process(monkeypatch, capsys, cleared=CLEARED)

    def supply(env: dict[str, str], *args: str) -> Result:
        return invoke(["supply", *args], env)

    return supply


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


def test_set_asg_within_bounds(asg: Any, aws_env: dict[str, str], arklow: Invoke) -> None:
    make_asg(asg, "web", 1, 5, 2)
    out = arklow(
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
    asg: Any, aws_env: dict[str, str], arklow: Invoke, extra: tuple[str, ...]
) -> None:
    make_asg(asg, "web", 1, 5, 2)
    out = arklow(aws_env, "set", *ASG, *extra)
    assert out.returncode != 0
    assert out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1 and "outside" in out.stderr
    assert desired_of(asg, "web") == 2


def test_set_asg_with_policy_is_refused(asg: Any, aws_env: dict[str, str], arklow: Invoke) -> None:
    make_asg(asg, "web", 1, 5, 2)
    aws_moto.add_step_policy(asg, "web", "bump")
    out = arklow(aws_env, "set", *ASG, "--replicas", "3")
    assert out.returncode != 0 and "bump" in out.stderr and desired_of(asg, "web") == 2
    ok = arklow(aws_env, "set", *ASG, "--replicas", "3", "--override-policies")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["policies"] == ["bump"] and desired_of(asg, "web") == 3


def test_dry_run_prints_the_plan_and_writes_nothing(
    asg: Any, aws_env: dict[str, str], arklow: Invoke
) -> None:
    make_asg(asg, "web", 1, 5, 2)
    out = arklow(aws_env, "set", *ASG, "--replicas", "3", "--dry-run")
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


CONTRACT_KEYS = {
    "kind",
    "name",
    "desired",
    "in_service",
    "min",
    "max",
    "autoscaler",
    "policies",
    "stable",
}
REGIONAL = ("--kind", "gcp_mig", "--name", "api", "--region", "us-central1", "--project", P)
WRITES = ("POST instanceGroupManagers.resize", "PATCH autoscalers.patch")


def writes(server: ComputeServer) -> list[dict[str, Any]]:
    """Every write call the server saw, from its request log."""
    return [e for e in server.call_report()["log"] if e["route"] in WRITES]


def set_regional(compute: ComputeServer, arklow: Invoke, *args: str) -> dict[str, Any]:
    """``arklow supply set`` on the regional MIG ``api`` with ``args``, which must exit 0: its
    JSON."""
    out = arklow(mig_env(compute), "set", *REGIONAL, *args)
    assert out.returncode == 0, out.stderr
    done: dict[str, Any] = json.loads(out.stdout)
    return done


def autoscaled(server: ComputeServer, size: int, low: int, high: int, **extra: Any) -> None:
    server.add_group(
        {
            "project": P,
            "region": "us-central1",
            "name": "api",
            "targetSize": size,
            "autoscaler": {"min": low, "max": high, **extra},
        }
    )


def test_describe_and_set_mig(compute: ComputeServer, arklow: Invoke) -> None:
    compute.add_group({"project": P, "zone": Z, "name": "web", "targetSize": 2})
    got = json.loads(run(mig_env(compute), "describe", *MIG, "--format", "json").stdout)
    assert set(got) >= CONTRACT_KEYS
    assert {k: got[k] for k in ("kind", "name", "desired", "min", "max", "autoscaler")} == {
        "kind": "gcp_mig",
        "name": "web",
        "desired": 2,
        "min": None,
        "max": None,
        "autoscaler": False,
    }
    assert got["stable"] is True and got["policies"] == []
    out = arklow(mig_env(compute), "set", *MIG, "--replicas", "5", "--max-replicas", "6")
    assert out.returncode == 0, out.stderr
    after = json.loads(out.stdout)
    assert after["desired"] == 5 and after["method"] == "resize" and after["stable"] is False
    assert after["previous"] == 2 and after["previous_window"] is None
    assert [r["size"] for r in compute.call_report()["resizes"]] == [5]


def test_describe_regional_mig(compute: ComputeServer, arklow: Invoke) -> None:
    autoscaled(compute, 3, 2, 6)
    out = arklow(mig_env(compute), "describe", *REGIONAL)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert set(got) >= CONTRACT_KEYS
    assert (got["name"], got["desired"], got["min"], got["max"], got["autoscaler"]) == (
        "api",
        3,
        2,
        6,
        True,
    )
    assert compute.call_report()["by_route"]["GET instanceGroupManagers.get"] == 1


def test_set_autoscaled_mig_moves_the_window_min_only(
    compute: ComputeServer, arklow: Invoke
) -> None:
    autoscaled(compute, 2, 1, 4)
    after = set_regional(compute, arklow, "--replicas", "3", "--max-replicas", "6")
    assert after["method"] == "autoscaler_window" and after["window"] == [3, 4]
    assert (after["min"], after["max"], after["autoscaler"]) == (3, 4, True)
    # previous is the group's target size before the change; the old window is reported apart
    assert after["previous"] == 2 and after["previous_window"] == [1, 4]
    [patch] = writes(compute)
    assert patch["body"]["autoscalingPolicy"] == {"minNumReplicas": 3}
    assert compute.call_report()["resizes"] == []


def test_set_autoscaled_mig_above_the_autoscaler_max_is_refused(
    compute: ComputeServer, arklow: Invoke
) -> None:
    autoscaled(compute, 2, 1, 4)
    out = arklow(mig_env(compute), "set", *REGIONAL, "--replicas", "5", "--max-replicas", "8")
    assert out.returncode == 2 and out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1
    assert "outside the group's bounds [0, 4]" in out.stderr
    assert writes(compute) == []
    assert set(compute.call_report()["by_route"]) <= {
        "GET instanceGroupManagers.get",
        "GET autoscalers.get",
    }


def test_set_autoscaled_mig_below_the_window_min_moves_it_down(
    compute: ComputeServer, arklow: Invoke
) -> None:
    autoscaled(compute, 4, 3, 6)
    after = set_regional(compute, arklow, "--replicas", "1")
    assert after["method"] == "autoscaler_window" and after["window"] == [1, 6]
    assert (after["min"], after["max"]) == (1, 6)
    assert after["previous"] == 4 and after["previous_window"] == [3, 6]
    assert [w["body"]["autoscalingPolicy"] for w in writes(compute)] == [{"minNumReplicas": 1}]


def test_min_replicas_alone_sends_no_placeholder_max(
    compute: ComputeServer, arklow: Invoke
) -> None:
    autoscaled(compute, 2, 1, 4)
    assert set_regional(compute, arklow, "--replicas", "3", "--min-replicas", "2")["window"] == [
        3,
        4,
    ]
    assert "2147483647" not in json.dumps(compute.call_report()["log"])
    below = arklow(mig_env(compute), "set", *REGIONAL, "--replicas", "1", "--min-replicas", "2")
    assert below.returncode == 2 and "target's bounds [2, unbounded]" in below.stderr


@pytest.mark.parametrize("scaler", [None, {"min": 1, "max": 4}])
def test_gcp_dry_run_makes_no_write_call(
    compute: ComputeServer, arklow: Invoke, scaler: dict[str, int] | None
) -> None:
    compute.add_group(
        {"project": P, "region": "us-central1", "name": "api", "targetSize": 2}
        | ({"autoscaler": scaler} if scaler else {})
    )
    plan = set_regional(compute, arklow, "--replicas", "3", "--dry-run")
    assert plan["dry_run"] is True and plan["previous"] == 2
    if scaler:
        assert (plan["method"], plan["window"], plan["previous_window"]) == (
            "autoscaler_window",
            [3, 4],
            [1, 4],
        )
    else:
        assert (plan["method"], plan["window"]) == ("resize", None)
    assert writes(compute) == []
    assert all(e["route"].startswith("GET ") for e in compute.call_report()["log"])


def test_autoscaler_in_mode_off_is_resized(compute: ComputeServer, arklow: Invoke) -> None:
    autoscaled(compute, 2, 1, 4, mode="OFF")
    got = json.loads(arklow(mig_env(compute), "describe", *REGIONAL).stdout)
    assert (got["autoscaler"], got["min"], got["max"]) == (False, None, None)
    after = set_regional(compute, arklow, "--replicas", "7")
    assert (after["method"], after["desired"], after["window"]) == ("resize", 7, None)
    assert [r["size"] for r in compute.call_report()["resizes"]] == [7]


def test_set_mig_out_of_bounds_fails_without_writing(
    compute: ComputeServer, arklow: Invoke
) -> None:
    compute.add_group({"project": P, "zone": Z, "name": "web", "targetSize": 2})
    out = arklow(mig_env(compute), "set", *MIG, "--replicas", "7", "--max-replicas", "6")
    assert out.returncode != 0 and "outside" in out.stderr and out.stdout == ""
    assert "POST instanceGroupManagers.resize" not in compute.call_report()["by_route"]


NO_PROJECT = ("--kind", "gcp_mig", "--name", "web", "--zone", Z)


@pytest.mark.parametrize("variable", PROJECT_ENVS)
def test_mig_project_falls_back_to_the_environment(
    compute: ComputeServer, arklow: Invoke, variable: str
) -> None:
    compute.add_group({"project": P, "zone": Z, "name": "web", "targetSize": 2})
    out = arklow({**mig_env(compute), variable: P}, "describe", *NO_PROJECT)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["desired"] == 2


def test_google_cloud_project_wins_over_cloudsdk_core_project(
    compute: ComputeServer, arklow: Invoke
) -> None:
    compute.add_group({"project": P, "zone": Z, "name": "web", "targetSize": 2})
    env = {**mig_env(compute), "GOOGLE_CLOUD_PROJECT": P, "CLOUDSDK_CORE_PROJECT": "other"}
    assert arklow(env, "describe", *NO_PROJECT).returncode == 0


def test_mig_needs_project_and_one_location(compute: ComputeServer, arklow: Invoke) -> None:
    out = arklow(mig_env(compute), "describe", *NO_PROJECT)
    assert out.returncode == 2 and out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1 and "field 'project'" in out.stderr
    assert compute.call_report()["total"] == 0
    both = arklow(mig_env(compute), "describe", *MIG, "--region", "us-central1")
    assert both.returncode == 2 and "field 'zone'" in both.stderr


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


# -- --timeout: the whole command within a deadline ---------------------------------------------


def closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def silent_endpoint() -> Iterator[str]:
    """Accepts TCP connections (the kernel's backlog) and never answers a byte."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


def assert_bounded_failure(out: Result, group: str) -> str:
    assert out.returncode == 2 and out.stdout == "", out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and group in lines[0], out.stderr
    return lines[0]


def test_a_refused_aws_endpoint_fails_within_the_timeout(aws_env: dict[str, str]) -> None:
    env = {**aws_env, "AWS_ENDPOINT_URL": f"http://127.0.0.1:{closed_port()}"}
    # The process timeout only guards against a hang (before --timeout this took 36-54 s).
    out = run(env, "describe", *ASG, "--timeout", "1", timeout=30)
    line = assert_bounded_failure(out, "aws_asg:us-east-1/web")
    assert "cannot reach" in line or "--timeout" in line


def test_a_refused_compute_endpoint_fails_within_the_timeout() -> None:
    env = {"ARKLOW_GCP_COMPUTE_ENDPOINT": f"http://127.0.0.1:{closed_port()}"}
    out = run(env, "describe", *MIG, "--timeout", "1", timeout=30)
    assert_bounded_failure(out, f"gcp_mig:{P}/{Z}/web")


@pytest.mark.parametrize("kind", ["aws_asg", "gcp_mig"])
def test_a_silent_endpoint_is_cut_at_the_timeout(
    kind: str, silent_endpoint: str, aws_env: dict[str, str]
) -> None:
    env = {**aws_env, "AWS_ENDPOINT_URL": silent_endpoint}
    env["ARKLOW_GCP_COMPUTE_ENDPOINT"] = silent_endpoint
    group = ASG if kind == "aws_asg" else MIG
    # the process timeout is a hang guard: without a deadline a silent endpoint holds for minutes
    out = run(env, "set", *group, "--replicas", "3", "--timeout", "1", timeout=30)
    assert_bounded_failure(out, "/web")


def test_timeout_must_be_positive(arklow: Invoke) -> None:
    out = arklow({}, "describe", *ASG, "--timeout", "0")
    assert out.returncode == 2 and out.stdout == "" and "--timeout" in out.stderr
