"""``Pulumi.yaml`` is read by the one document reader wherever it is read: a key given twice is
refused by ``arklow store orphans`` (it then names no project) and by the demo's stack copy, as
everywhere else."""

from __future__ import annotations

from pathlib import Path

import pytest

from arklow_pulumi.cli.orphans import _project_of
from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.scenario.stack import DevStack

TWICE = "name: one\nname: two\nruntime: python\n"


def test_orphans_names_the_project_of_pulumi_yaml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: arklow\nruntime: python\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert _project_of({}) == "arklow"


def test_orphans_refuses_a_key_given_twice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "Pulumi.yaml").write_text(TWICE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert _project_of({}) is None


def test_the_dev_stack_copy_refuses_a_key_given_twice(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    engine = repo / ".tools" / "bin" / "pulumi"  # found, never run: the read fails first
    engine.parent.mkdir(parents=True)
    engine.write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")
    engine.chmod(0o755)
    (repo / "Pulumi.yaml").write_text(TWICE, encoding="utf-8")
    stack = DevStack(repo, tmp_path / "work", {})
    with pytest.raises(InvalidInput, match=r"project file .*duplicate key 'name'"):
        stack.prepare()


def test_the_dev_stack_copy_keeps_yaml_1_1_scalars_as_text(tmp_path: Path) -> None:
    """``on`` is a boolean to YAML 1.1 but text to the reader (and to Pulumi's YAML 1.2): the
    copy's Pulumi.yaml holds it as text."""
    repo = tmp_path / "repo"
    engine = repo / ".tools" / "bin" / "pulumi"
    engine.parent.mkdir(parents=True)
    engine.write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")
    engine.chmod(0o755)
    (repo / "Pulumi.yaml").write_text("name: on\nruntime: python\n", encoding="utf-8")
    stack = DevStack(repo, tmp_path / "work", {})
    with pytest.raises(FileNotFoundError):  # __main__.py is not in this repository
        stack.prepare()
    copied = (stack.project / "Pulumi.yaml").read_text(encoding="utf-8")
    assert copied.startswith("name: 'on'\nruntime:\n")
