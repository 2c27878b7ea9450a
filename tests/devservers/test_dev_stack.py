"""The main job's stack (``arklow_pulumi/scenario/stack.py``) through Pulumi's Automation API and
the real CLI: creating the stack and the noon join edit only the working copy, and only the
line they mean to (one member); the tracked ``stacks/Pulumi.dev.yaml`` is not touched, and the
copy keeps every comment. The tracked file carries the empty passphrase's salt, so creating the
stack adds none (nor does ``pulumi stack init dev`` in the README's steps)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from arklow_pulumi.scenario.stack import DevStack, ScenarioError
from tests.e2e.pulumi_cli import MISSING_ENGINE, REPO, engine_available

pytestmark = pytest.mark.e2e

TRACKED = REPO / "stacks" / "Pulumi.dev.yaml"


def test_stack_init_and_join_edit_only_the_working_copy(tmp_path: Path) -> None:
    if not engine_available():
        pytest.fail(MISSING_ENGINE, pytrace=False)
    before = hashlib.sha256(TRACKED.read_bytes()).hexdigest()
    stack = DevStack(REPO, tmp_path / "run", {})
    stack.prepare()
    assert stack.config_file.read_bytes() == TRACKED.read_bytes()  # its salt is the file's

    shared = next(p for p in stack.topology()["pools"] if p["name"] == "shared-gpu")
    assert "reports" not in shared["members"]
    stack.join("reports", "shared-gpu")
    stack.join("reports", "shared-gpu")  # already a member: nothing to do
    shared = next(p for p in stack.topology()["pools"] if p["name"] == "shared-gpu")
    assert shared["members"] == ["search", "summarize", "reports"]

    original = TRACKED.read_text().splitlines()
    edited = stack.config_file.read_text().splitlines()
    changed = [(a, b) for a, b in zip(original, edited, strict=False) if a != b]
    assert changed == [
        ("        members: [search, summarize]", "        members: [search, summarize, reports]")
    ]
    assert len(edited) == len(original)
    assert all(line in edited for line in original if line.lstrip().startswith("#"))
    assert hashlib.sha256(TRACKED.read_bytes()).hexdigest() == before

    with pytest.raises(ScenarioError, match="pool 'nope' is not declared"):
        stack.join("reports", "nope")


def test_readme_stack_init_keeps_the_stack_file(tmp_path: Path) -> None:
    """The README's ``pulumi stack init dev`` (empty passphrase), on a copy of the project: the
    stack file stays byte for byte what git tracks."""
    import shutil

    from tests.e2e.pulumi_cli import Stack

    if not engine_available():
        pytest.fail(MISSING_ENGINE, pytrace=False)
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(REPO / "Pulumi.yaml", project / "Pulumi.yaml")
    shutil.copytree(REPO / "stacks", project / "stacks")
    Stack(project, tmp_path).init()
    assert (project / "stacks" / "Pulumi.dev.yaml").read_bytes() == TRACKED.read_bytes()
