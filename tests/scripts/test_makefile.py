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
