"""What `make run` and `make test` install (read from make's dry run: nothing is installed)."""

from __future__ import annotations

import subprocess

from tests.e2e.pulumi_cli import REPO


def recipe(target: str) -> str:
    """The commands ``make TARGET`` would run from scratch (-B: as if nothing were made)."""
    result = subprocess.run(
        ["make", "-n", "-B", target], cwd=REPO, capture_output=True, text=True, timeout=60,
        check=True,
    )
    return result.stdout


def test_make_run_installs_only_what_it_runs() -> None:
    commands = recipe("run")
    assert '-e ".[gcp,charts,local-clouds]"' in commands
    assert ".[test]" not in commands and "requirements.txt" not in commands
    assert "pytest" not in commands


def test_make_test_installs_every_extra() -> None:
    assert '-e ".[test]"' in recipe("test")
    # the test extra brings every other one (tests/test_extras.py)
