"""Fixtures of the packaging tests: the wheel and the sdist built from this checkout, and a local
directory standing in for the package index, holding every dependency as a wheel.

The index (``deps/``) is filled once per session with ``pip download`` of what
``arklow-pulumi[gcp,postgres,policy]`` needs and of maturin (the sdist's build backend); pip's own
cache makes it quick when the packages were installed before. Everything after it installs with
``--no-index --find-links``: nothing is fetched but what a user's index would serve. Builds run
with a cargo target directory of the session's own (``CARGO_TARGET_DIR``), so the crate is
compiled from each source tree handed to cargo; only the compiled dependencies (pyo3) are reused.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.pulumi_cli import REPO

BUILD_TIMEOUT = 1800  # a first compile of the kernel and its crates on a loaded 2-core machine
EXTRAS = "gcp,postgres,policy"  # what the CI workflow installs (examples/ci)


def run(
    args: Sequence[str | Path],
    cwd: Path,
    env: Mapping[str, str] | None = None,
    timeout: float = BUILD_TIMEOUT,
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=dict(env) if env is not None else None,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert result.returncode == 0, (
        f"{' '.join(map(str, args))} exited {result.returncode}\n"
        f"--- stdout ---\n{result.stdout[-4000:]}\n--- stderr ---\n{result.stderr[-4000:]}"
    )
    return result


def base_python() -> Path:
    """The interpreter this test venv was made from (a fresh venv must not start from ours)."""
    return Path(getattr(sys, "_base_executable", sys.executable))


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without what points into the repository or its venv."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PIP_", "PYTHON", "VIRTUAL_ENV", "ARKLOW_", "PULUMI_"))
    }
    keep = [p for p in env.get("PATH", "").split(os.pathsep) if p and not p.startswith(str(REPO))]
    env["PATH"] = os.pathsep.join(keep)
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return {**env, **extra}


@dataclass(frozen=True)
class Index:
    """Local directories standing in for the package index."""

    deps: Path  # every dependency (and maturin) as a wheel
    wheel: Path  # arklow-pulumi's wheel
    sdist: Path  # arklow-pulumi's sdist
    cargo_target: Path

    def pip_env(self, *links: Path, **extra: str) -> dict[str, str]:
        """pip reading only these directories (the variables pip takes its options from)."""
        return clean_env(
            PIP_NO_INDEX="1",
            PIP_FIND_LINKS=" ".join(str(p) for p in (self.deps, *links)),
            CARGO_TARGET_DIR=str(self.cargo_target),
            **extra,
        )


@pytest.fixture(scope="session")
def index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    root = tmp_path_factory.mktemp("index")
    made = Index(root / "deps", root / "wheel", root / "sdist", root / "cargo-target")
    env = clean_env(CARGO_TARGET_DIR=str(made.cargo_target))
    download = [sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:"]
    download += ["--dest", made.deps]
    run([*download, "maturin>=1.8,<2"], REPO, env)
    tools = root / "tools"
    run([base_python(), "-m", "venv", tools], root, env)
    run(
        [
            tools / "bin" / "pip",
            "install",
            "--quiet",
            "--no-index",
            "--find-links",
            made.deps,
            "maturin",
        ],
        root,
        env,
    )
    maturin = tools / "bin" / "maturin"
    run([maturin, "build", "--release", "--out", made.wheel], REPO, env)
    run([maturin, "sdist", "--out", made.sdist], REPO, env)
    (wheel,) = made.wheel.glob("*.whl")
    run([*download, "--find-links", made.wheel, f"{wheel}[{EXTRAS}]"], REPO, env)
    for ours in made.deps.glob("arklow_pulumi-*"):
        ours.unlink()  # the index of dependencies holds none of the package's own builds
    return made


def fresh_venv(path: Path, index: Index, links: Path, requirement: str) -> Path:
    """A new virtualenv at ``path`` with ``requirement`` installed from the local index only."""
    env = index.pip_env(links)
    run([base_python(), "-m", "venv", path], path.parent, env)
    run([path / "bin" / "pip", "install", "--quiet", requirement], path.parent, env)
    return path
