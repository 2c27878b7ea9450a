"""What `make run` and `make test` install (read from make's dry run: nothing is installed)."""

from __future__ import annotations

import subprocess

from tests.e2e.pulumi_cli import REPO


def recipe(target: str) -> str:
    """The commands ``make TARGET`` would run from scratch (-B: as if nothing were made)."""
    result = subprocess.run(
        ["make", "-n", "-B", target],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return result.stdout


def test_make_run_installs_only_what_it_runs() -> None:
    commands = recipe("run")
    # the main job's extras and the policy pack's (`pulumi preview --policy-pack policy`)
    assert '-e ".[gcp,charts,local-clouds,policy]"' in commands
    assert ".[test]" not in commands and "pytest" not in commands


def test_the_package_is_one_install_with_its_kernel() -> None:
    """No second distribution: the kernel is compiled by the package's own install."""
    for target in ("run", "test"):
        installs = [line for line in recipe(target).splitlines() if "pip install" in line]
        assert [line for line in installs if "kernel" in line] == []
        assert len([line for line in installs if " -e " in line]) == 1


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
