"""``arklow dev clouds``: the dev stack's groups on local servers, the environment it prints, a
clean stop, and the README's Pulumi section run as written against it (real engine)."""

from __future__ import annotations

import json
import shutil
import signal
import socket
from functools import partial
from pathlib import Path

import pytest
import yaml

from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.devservers.clouds import AsgSpec, MigSpec, load_stack, stack_groups
from tests.arklow_cli import Invoke, in_process, only, run
from tests.devservers.clouds_process import clouds
from tests.e2e.pulumi_cli import (
    MISSING_ENGINE,
    REPO,
    Stack,
    engine_available,
    write_project,
)

EXPORTED = {
    "AWS_ENDPOINT_URL",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_DEFAULT_REGION",
    "ARKLOW_GCP_COMPUTE_ENDPOINT",
    "GOOGLE_CLOUD_PROJECT",
}


def test_dev_stack_names_an_asg_a_zonal_mig_and_an_autoscaled_mig() -> None:
    groups = stack_groups(*load_stack(REPO, "dev"))
    assert groups.asgs == (AsgSpec("gpu-workers", "us-east-1", max_size=10, desired=1),)
    assert set(groups.migs) == {
        MigSpec("video-encoders", "arklow-dev", None, "europe-west1", 2, autoscaler=(2, 12)),
        MigSpec("cpu-workers", "arklow-dev", "us-central1-a", None, 1, autoscaler=None),
    }


def test_dev_clouds_hold_the_examples_groups_too() -> None:
    """Every group an example binds to, fitting the example's bounds and the stack's."""
    from arklow_pulumi.devservers.clouds import example_groups, merge_groups

    stack = stack_groups(*load_stack(REPO, "dev"))
    groups = merge_groups(stack, *example_groups(REPO))
    assert groups.asgs == (AsgSpec("gpu-workers", "us-east-1", max_size=16, desired=1),)
    assert set(groups.migs) == {
        *stack.migs,
        MigSpec("cpu-workers", "arklow-dev", None, "europe-west1", 6, autoscaler=(2, 20)),
    }


def test_compute_server_on_a_port_in_use_names_the_port_and_option() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = run(["dev", "compute-server", "--port", str(port)], cwd=REPO)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (
        f"error: option --port: field 'port': cannot listen on 127.0.0.1:{port}: "
        "Address already in use\n"
    )


def test_dev_clouds_config_must_name_a_mig_target(tmp_path: Path) -> None:
    (tmp_path / "stacks").mkdir()
    config = yaml.safe_load((REPO / "stacks" / "Pulumi.dev.yaml").read_text())
    config["config"]["arklow:devClouds"] = {"autoscaled": ["gpu-workers"]}
    (tmp_path / "stacks" / "Pulumi.x.yaml").write_text(yaml.safe_dump(config))
    with pytest.raises(InvalidInput, match="no gcp_mig scale target named 'gpu-workers'"):
        stack_groups(*load_stack(tmp_path, "x"))


def test_unknown_stack_exits_2_with_one_line() -> None:
    result = run(["dev", "clouds", "--stack", "nope"], cwd=REPO, timeout=60)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert "stack 'nope'" in result.stderr and "Pulumi.nope.yaml" in result.stderr


@pytest.mark.parametrize("option", ["--aws-port", "--gcp-port"])
def test_a_port_in_use_exits_2_with_one_line(option: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = run(["dev", "clouds", option, str(port)], cwd=REPO)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (
        f"error: option {option}: field '{option[2:]}': cannot listen on 127.0.0.1:{port}: "
        "Address already in use\n"
    )


def test_groups_are_served_and_sigterm_stops_cleanly(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each group described with exactly the environment the clouds print: the first by a real
    ``arklow`` process, the others by the same entry point in this process (no cloud SDK's import
    a group)."""
    with clouds() as running:
        assert set(running.env) >= EXPORTED
        assert running.env["AWS_ACCESS_KEY_ID"] == "testing"
        env = {**_path_env(), **running.env}
        real: Invoke = partial(run, cleared=only(env))
        invoke = in_process(monkeypatch, capsys, cleared=only(env))
        # (desired, min, max, autoscaler): a zonal MIG has no bounds of its own; the autoscaled
        # MIG's are its autoscaler's window.
        for describe, args, want in (
            (
                real,
                ["--kind", "aws_asg", "--name", "gpu-workers", "--region", "us-east-1"],
                (1, 0, 16, False),  # max: examples/gpu_pool_asg's 16 fits too
            ),
            (
                invoke,
                ["--kind", "gcp_mig", "--name", "cpu-workers", "--zone", "us-central1-a"],
                (1, None, None, False),
            ),
            (
                invoke,
                ["--kind", "gcp_mig", "--name", "video-encoders", "--region", "europe-west1"],
                (2, 2, 12, True),
            ),
            (  # examples/mig_autoscaler's (its dev-clouds.yaml gives it an autoscaler)
                invoke,
                ["--kind", "gcp_mig", "--name", "cpu-workers", "--region", "europe-west1"],
                (6, 2, 20, True),
            ),
        ):
            described = describe(["supply", "describe", *args, "--format", "json"], env=env)
            assert described.returncode == 0, described.stderr
            state = json.loads(described.stdout)
            assert (state["desired"], state["min"], state["max"], state["autoscaler"]) == want
        code, err = running.stop(signal.SIGTERM)
    assert code == 0, err
    assert "Traceback" not in err
    assert err.strip().endswith("local clouds stopped")


def test_ctrl_c_stops_cleanly() -> None:
    with clouds("--stack", "dev") as running:
        code, err = running.stop(signal.SIGINT)
    assert code == 0, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err


def _path_env() -> dict[str, str]:
    import os

    return {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/root")}


@pytest.mark.e2e
def test_readme_pulumi_section_against_dev_clouds(tmp_path: Path) -> None:
    """Start the clouds, take their environment, ``pulumi up`` the dev stack as checked in
    (file backend, SQLite store in tmp), read it back, destroy."""
    if not engine_available():
        pytest.fail(MISSING_ENGINE, pytrace=False)
    project = write_project(tmp_path / "project")
    shutil.copy(REPO / "stacks" / "Pulumi.dev.yaml", project / "stacks" / "Pulumi.dev.yaml")
    with clouds() as running:
        stack = Stack(project, tmp_path, name="dev", env=running.env).init()
        stack.up()
        shown = stack.topology()
        assert set(shown["pools"]) >= {"shared-gpu", "llm-quota", "cpu-workers", "video-encoders"}
        kinds = {t["name"]: t["kind"] for p in shown["pools"].values() for t in p["scale_targets"]}
        assert kinds == {
            "gpu-workers": "aws_asg",
            "cpu-workers": "gcp_mig",
            "video-encoders": "gcp_mig",
        }
        stack.destroy()
        assert stack.resources() == []
        code, err = running.stop()
    assert code == 0, err
