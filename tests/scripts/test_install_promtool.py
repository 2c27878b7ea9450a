"""scripts/install-promtool: the promtool on PATH is linked into .tools/bin; without one, Debian's
prometheus package is installed first (through scripts/install-system-deps); one too old is
refused with one line naming its version.

The script runs from a copy of itself in a temporary checkout whose scripts/install-system-deps is
a stand-in (the real one runs apt-get as root): it logs each call and, like the package, puts a
``promtool`` in a directory on PATH (its version line from FAKE_VERSION)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.pulumi_cli import REPO

DEBIAN = "promtool, version 2.42.0+ds (branch: debian/sid, revision: 2.42.0+ds-5+deb12u1)"
FAKE_SYSTEM_DEPS = """#!/bin/sh
echo called >> "$FAKE_LOG"
mkdir -p "$FAKE_USR_BIN"
printf '#!/bin/sh\\necho "%s"\\n' "$FAKE_VERSION" > "$FAKE_USR_BIN/promtool"
chmod +x "$FAKE_USR_BIN/promtool"
"""


class Checkout:
    def __init__(self, root: Path) -> None:
        self.repo = root / "repo"
        self.usr_bin = root / "usr-bin"  # where the stand-in package puts promtool
        self.log = root / "system-deps.log"
        (self.repo / "scripts").mkdir(parents=True)
        shutil.copy(REPO / "scripts" / "install-promtool", self.repo / "scripts")
        deps = self.repo / "scripts" / "install-system-deps"
        deps.write_text(FAKE_SYSTEM_DEPS)
        deps.chmod(0o755)

    @property
    def link(self) -> Path:
        return self.repo / ".tools" / "bin" / "promtool"

    def put_promtool(self, version_line: str) -> Path:
        self.usr_bin.mkdir(exist_ok=True)
        path = self.usr_bin / "promtool"
        path.write_text(f'#!/bin/sh\necho "{version_line}"\n')
        path.chmod(0o755)
        return path

    def run(self, first: Path | None = None) -> subprocess.CompletedProcess[str]:
        # PATH: only the stand-in's directory and the commands the script uses, so a promtool
        # installed on this machine is not found.
        path = [*([str(first)] if first else []), str(self.usr_bin), str(self.commands())]
        env = {
            "PATH": os.pathsep.join(path),
            "HOME": str(self.repo.parent),
            "FAKE_LOG": str(self.log),
            "FAKE_USR_BIN": str(self.usr_bin),
            "FAKE_VERSION": DEBIAN,
        }
        return subprocess.run(
            [str(self.repo / "scripts" / "install-promtool")],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def commands(self) -> Path:
        commands = self.repo.parent / "commands"
        if not commands.exists():
            commands.mkdir()
            for name in (
                "bash",
                "sh",
                "env",
                "dirname",
                "sed",
                "sort",
                "head",
                "mkdir",
                "ln",
                "chmod",
            ):
                found = shutil.which(name)
                assert found, name
                (commands / name).symlink_to(found)
        return commands

    def installs(self) -> int:
        return len(self.log.read_text().splitlines()) if self.log.exists() else 0


@pytest.fixture
def checkout(tmp_path: Path) -> Checkout:
    return Checkout(tmp_path)


def test_a_promtool_on_path_is_linked(checkout: Checkout) -> None:
    installed = checkout.put_promtool(DEBIAN)
    result = checkout.run()
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(
        f"install-promtool: promtool 2.42.0 in .tools/bin ({installed}, found on PATH;"
    )
    assert checkout.link.resolve() == installed and checkout.installs() == 0
    again = checkout.run()  # idempotent
    assert again.returncode == 0 and checkout.link.resolve() == installed


def test_without_one_debians_package_is_installed_first(checkout: Checkout) -> None:
    result = checkout.run()
    assert result.returncode == 0, result.stderr
    assert "installing Debian's prometheus package" in result.stderr
    assert "installed from Debian's prometheus package" in result.stdout
    assert checkout.installs() == 1
    assert checkout.link.resolve() == checkout.usr_bin / "promtool"
    assert checkout.run().returncode == 0 and checkout.installs() == 1  # installed: not again


@pytest.mark.parametrize(
    "line",
    [
        "promtool, version 2.30.3 (branch: HEAD)",
        "promtool, version v0.316.0 (branch: )",
        "nonsense",
    ],
)
def test_one_too_old_is_refused_in_one_line(checkout: Checkout, line: str) -> None:
    old = checkout.put_promtool(line)
    result = checkout.run()
    assert result.returncode == 1
    (message,) = result.stderr.splitlines()
    assert message.startswith(f"install-promtool: ERROR: {old} is version ")
    assert message.count("2.42.0 or newer") == 1
    assert not checkout.link.exists()


@pytest.mark.parametrize("version", ["3.16.0", "2.53.4"])
def test_newer_ones_are_taken(checkout: Checkout, version: str) -> None:
    checkout.put_promtool(f"promtool, version {version} (branch: HEAD, revision: abc)")
    result = checkout.run()
    assert result.returncode == 0, result.stderr
    assert f"promtool {version} in .tools/bin" in result.stdout


def test_its_own_link_is_not_taken_for_a_promtool(checkout: Checkout) -> None:
    installed = checkout.put_promtool(DEBIAN)
    assert checkout.run().returncode == 0
    # .tools/bin first on PATH (as `make unit` puts it): the link is refreshed, never made a loop
    result = checkout.run(first=checkout.link.parent)
    assert result.returncode == 0, result.stderr
    assert checkout.link.resolve() == installed


def test_a_failed_package_install_fails_the_script(checkout: Checkout) -> None:
    (checkout.repo / "scripts" / "install-system-deps").write_text(
        "#!/bin/sh\necho 'install-system-deps: missing Debian packages: prometheus' >&2\nexit 1\n"
    )
    result = checkout.run()
    assert result.returncode == 1
    assert (
        result.stderr.splitlines()[-1] == "install-system-deps: missing Debian packages: prometheus"
    )
    assert not checkout.link.exists()
