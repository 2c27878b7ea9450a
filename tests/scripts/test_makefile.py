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


def test_make_test_runs_the_ci_profile_and_make_check_the_fast_tier() -> None:
    assert "HYPOTHESIS_PROFILE=ci" in recipe("unit")
    check = recipe("check")
    assert "vulture" in check and "HYPOTHESIS_PROFILE=dev" in check
    assert '-m "not e2e and not postgres"' in check
    # neither the engine nor PostgreSQL is installed for it
    assert "install-pulumi" not in check and "install-system-deps" not in check


def test_the_lint_and_test_tools_are_installed_at_exact_versions() -> None:
    pins = (REPO / "constraints" / "tools.txt").read_text().splitlines()
    pinned = dict(line.split("==") for line in pins if line and not line.startswith("#"))
    assert {"ruff", "mypy", "import-linter", "vulture", "pytest-timeout"} <= set(pinned)
    assert all(version and "," not in version for version in pinned.values())
    assert '-e ".[test]" -c constraints/tools.txt' in recipe("test")
