"""The main job's stack (``arklow_pulumi/scenario/stack.py``) through Pulumi's Automation API and
the real CLI: creating the stack and the noon join edit only the working copy, and only the
line they mean to (one member); the tracked ``stacks/Pulumi.dev.yaml`` is not touched, and the
copy keeps every comment. The tracked file carries the empty passphrase's salt, so creating the
stack adds none. The README's own stack and Pulumi's advice after ``destroy`` (``pulumi stack
rm``) leave the tracked file alone, and the main job runs even where that advice deleted it."""

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


def _project_copy(tmp_path: Path) -> Path:
    """Pulumi.yaml, __main__.py and stacks/ of the repository, committed in a git repository of
    their own (so that a test may let Pulumi delete a file git tracks)."""
    import shutil
    import subprocess

    project = tmp_path / "project"
    project.mkdir()
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(REPO / name, project / name)
    shutil.copytree(REPO / "stacks", project / "stacks")
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
    }
    for argv in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "copy"]):
        subprocess.run(["git", *argv], cwd=project, env=env, check=True, capture_output=True)
    (project / ".tools").symlink_to(REPO / ".tools")  # the engine (untracked, as in the repo)
    return project


def test_readme_stack_survives_pulumis_advice(tmp_path: Path) -> None:
    """The README's steps (a copy of the dev stack's settings as stack ``local``, empty
    passphrase), then what Pulumi advises after ``destroy``, ``pulumi stack rm local``: it
    deletes the copy only; the tracked stack file stays byte for byte what git tracks."""
    import shutil

    from tests.e2e.pulumi_cli import Stack

    if not engine_available():
        pytest.fail(MISSING_ENGINE, pytrace=False)
    project = _project_copy(tmp_path)
    shutil.copy(project / "stacks" / "Pulumi.dev.yaml", project / "stacks" / "Pulumi.local.yaml")
    stack = Stack(project, tmp_path, name="local").init()
    assert stack.config_file.read_bytes() == TRACKED.read_bytes()  # its salt is the file's
    stack.run("stack", "rm", "--yes", "local")
    assert not stack.config_file.exists()
    assert (project / "stacks" / "Pulumi.dev.yaml").read_bytes() == TRACKED.read_bytes()
    ignored = REPO / ".gitignore"
    assert "stacks/Pulumi.local.yaml" in ignored.read_text().splitlines()


def test_main_job_stack_after_pulumi_stack_rm_dev(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``pulumi stack rm dev`` run on the tracked file itself deletes it (Pulumi's behaviour):
    the main job's stack and the local clouds then read git's committed copy, and say so. The
    user's own Pulumi state and home (destroyed, or their ``.pulumi`` deleted) are not the
    run's: it has its own."""
    from arklow_pulumi.devservers.clouds import load_stack
    from tests.e2e.pulumi_cli import Stack

    if not engine_available():
        pytest.fail(MISSING_ENGINE, pytrace=False)
    project = _project_copy(tmp_path)
    Stack(project, tmp_path, name="dev").init().run("stack", "rm", "--yes", "dev")
    assert not (project / "stacks" / "Pulumi.dev.yaml").exists()  # what Pulumi did
    said: list[str] = []
    topology, autoscaled = load_stack(project, "dev", say=said.append)
    assert "shared-gpu" in topology.pools and autoscaled == {"video-encoders"}
    assert said == [
        "stacks/Pulumi.dev.yaml is not in the working tree (`pulumi stack rm dev` deletes it): "
        "using the committed one; `git checkout -- stacks/Pulumi.dev.yaml` puts it back"
    ]
    gone = tmp_path / "deleted" / ".pulumi"  # what the user's shell points at, now gone
    monkeypatch.setenv("PULUMI_HOME", str(gone))
    monkeypatch.setenv("PULUMI_BACKEND_URL", f"file://{gone}")
    stack = DevStack(project, tmp_path / "run", {})
    stack.prepare()  # a stack of its own, on a file backend of its own
    assert stack.config_file.read_bytes() == TRACKED.read_bytes()
    assert not (project / "stacks" / "Pulumi.dev.yaml").exists()  # nothing written back
