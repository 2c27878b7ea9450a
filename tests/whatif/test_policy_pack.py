"""``pulumi preview --policy-pack policy`` under the real engine (file backend, the project's
virtualenv): a stack change that starves a lane is reported by the ``capacity-what-if`` policy
naming the lane and its held share before and after; advisory by default (the preview
succeeds), mandatory by policy config (the preview fails); nothing to compare is not a failure.
Previews only: no cloud is called."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from arklow_pulumi.store.engine import close_stores
from tests.e2e.pulumi_cli import MISSING_ENGINE, REPO, Stack, engine_available, write_project
from tests.whatif.stacking import BEFORE, HISTORY, fill_history, fill_store, moved

pytestmark = pytest.mark.e2e

QUIET = "lane quiet/q: held share 0.00% -> 37.50%"


@pytest.fixture(scope="module", autouse=True)
def pulumi_engine() -> None:
    """Fail (never skip) without the engine, unless ARKLOW_SKIP_E2E=1 says so explicitly."""
    if not engine_available():
        if os.environ.get("ARKLOW_SKIP_E2E") == "1":
            pytest.skip("ARKLOW_SKIP_E2E=1: " + MISSING_ENGINE)
        pytest.fail(MISSING_ENGINE, pytrace=False)


# The stack's group is on AWS, which these tests do not reach: credentials (or the preview fails
# on their absence, as it should), and an endpoint that refuses at once, so the provider's check
# leaves the group's bounds to ``create``.
UNREACHABLE_AWS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_ENDPOINT_URL": "http://127.0.0.1:9",
}


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    """A copy of the root program and policy/ whose stack file moves quiet into busy."""
    project = write_project(tmp_path / "project")
    shutil.copytree(REPO / "policy", project / "policy")
    made = Stack(project, tmp_path, env=UNREACHABLE_AWS)
    made.set_topology(moved())
    made.init()
    yield made
    close_stores()


def filled(stack: Stack) -> Stack:
    fill_history(fill_store(stack.store_url, BEFORE), HISTORY)
    close_stores()
    return stack


def test_starving_change_is_an_advisory_violation(stack: Stack) -> None:
    result = filled(stack).run("preview", "--stack", "dev", "--policy-pack", "policy")
    assert "[advisory]  capacity-what-if" in result.stdout, result.stdout
    assert QUIET in result.stdout
    assert "change: quiet moved from pool quiet/cpu to busy for cpu" in result.stdout


def test_mandatory_by_policy_config_fails_the_preview(stack: Stack, tmp_path: Path) -> None:
    config = tmp_path / "policy-config.json"
    config.write_text(json.dumps({"capacity-what-if": {"enforcementLevel": "mandatory"}}))
    args = ("--policy-pack", "policy", "--policy-pack-config", str(config))
    result = filled(stack).run("preview", "--stack", "dev", *args, check=False)
    assert result.returncode != 0
    assert "[mandatory]  capacity-what-if" in result.stdout, result.stdout
    assert QUIET in result.stdout
    # Raising busy's max removes the flag: the same mandatory pack lets the preview through.
    stack.set_topology(moved(max_replicas=4))
    result = stack.run("preview", "--stack", "dev", *args)
    assert "capacity-what-if" not in result.stdout.split("Policies:")[-1].split("Outputs:")[0]


def test_no_store_yet_is_not_applicable_and_passes(stack: Stack) -> None:
    result = stack.run("preview", "--stack", "dev", "--policy-pack", "policy")
    assert "arklow-capacity@v0.0.1 (local: policy)" in result.stdout, result.stdout
    assert "[advisory]" not in result.stdout and "[mandatory]" not in result.stdout
    assert not stack.default_store_path.exists()  # reviewing creates no store


def test_the_packs_dependency_is_the_policy_extra_and_installed_with_its_own() -> None:
    """The pack's SDK is the package's ``policy`` extra (one ``pip install``), installed here
    with its own dependencies: pip finds nothing broken in this virtualenv (the extra's
    protobuf pin is met by every other part, the ``gcp`` extra's client included)."""
    import subprocess
    import sys
    import tomllib
    from importlib import metadata

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["optional-dependencies"]["policy"] == ["pulumi-policy==1.21.0"]
    assert metadata.version("pulumi-policy") == "1.21.0"
    assert not (REPO / "policy" / "requirements.txt").exists()  # one place declares it
    result = subprocess.run(
        [sys.executable, "-m", "pip", "check", "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout
