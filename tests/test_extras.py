"""A missing optional part (an extra of pyproject.toml) is one line naming the extra to install.

Each case runs ``arklow`` in a process where the extra's module cannot be imported (its entry in
``sys.modules`` is ``None``, which is how the import system sees a package that is not there)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from arklow_pulumi.extras import EXTRAS, MAKE_RUN_EXTRAS, MissingExtra, installed, require
from tests.e2e.pulumi_cli import REPO


def arklow_without(module: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    program = (
        "import sys\n"
        f"sys.modules[{module!r}] = None\n"
        f"sys.argv = ['arklow', *{list(args)!r}]\n"
        "from arklow_pulumi.cli.main import run\n"
        "run()\n"
    )
    return python(program, cwd)


def python(program: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -c PROGRAM`` in ``cwd``: its exit code and output."""
    return subprocess.run(
        [sys.executable, "-c", program],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("extra", "args", "needed_by"),
    [
        (
            "gcp",
            [
                "supply",
                "describe",
                "--kind",
                "gcp_mig",
                "--name",
                "w",
                "--zone",
                "z",
                "--project",
                "p",
            ],
            "--kind gcp_mig",
        ),
        (
            "postgres",
            ["store", "upgrade", "--store", "postgresql://arklow:s3cret@127.0.0.1:1/arklow"],
            "store postgresql+psycopg://arklow:***@127.0.0.1:1/arklow",
        ),
        ("charts", ["dev", "run"], "the main job's report (its charts)"),
        ("local-clouds", ["dev", "clouds"], "the local clouds (arklow dev clouds, make run)"),
    ],
)
def test_a_missing_extra_is_one_line_naming_it(
    extra: str, args: list[str], needed_by: str, tmp_path: Path
) -> None:
    # `dev clouds` reads the repository's dev stack first; the others fail before reading anything
    cwd = REPO if args[:2] == ["dev", "clouds"] else tmp_path
    result = arklow_without(EXTRAS[extra][0], *args, cwd=cwd)
    package = EXTRAS[extra][1]
    made = "make test installs it" if extra == "postgres" else "make run and make test install it"
    assert result.stderr == (
        f"error: {needed_by} needs {package}, which is optional: "
        f"pip install 'arklow-pulumi[{extra}]' ({made})\n"
    )
    assert result.returncode == 2
    assert "s3cret" not in result.stderr
    assert list(tmp_path.iterdir()) == []  # nothing started, nothing written


def test_require_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    for extra in EXTRAS:
        assert installed(extra), f"make test installs every extra; {extra} is missing"
        require(extra, "x")
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert not installed("charts")
    with pytest.raises(MissingExtra, match=r"^the report needs matplotlib, which is optional"):
        require("charts", "the report")


def test_every_extra_is_declared_in_pyproject() -> None:
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = project["optional-dependencies"]
    for extra, (_module, package) in EXTRAS.items():
        assert any(req.startswith(package) for req in declared[extra]), extra
        assert not any(req.startswith(package) for req in project["dependencies"]), extra
    # the test extra brings every other one
    assert any(
        req.startswith("arklow-pulumi[") and all(e in req for e in EXTRAS)
        for req in declared["test"]
    )


def test_the_extras_make_run_is_said_to_install_are_the_makefiles() -> None:
    """The message says which make target installs an extra: `make run` installs RUN_EXTRAS."""
    (line,) = [
        x for x in (REPO / "Makefile").read_text().splitlines() if x.startswith("RUN_EXTRAS")
    ]
    assert set(line.split(":=")[1].strip().split(",")) == MAKE_RUN_EXTRAS


def test_the_policy_pack_without_its_extra_is_one_line(tmp_path: Path) -> None:
    program = (
        "import runpy, sys\n"
        "sys.modules['pulumi_policy'] = None\n"
        f"runpy.run_path({str(REPO / 'policy')!r}, run_name='__main__')\n"
    )
    result = python(program, tmp_path)
    assert result.stderr == (
        "error: the policy pack (pulumi preview --policy-pack policy) needs pulumi-policy, which "
        "is optional: pip install 'arklow-pulumi[policy]' (make run and make test install it)\n"
    )
    assert result.returncode == 2
