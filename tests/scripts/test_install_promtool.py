"""scripts/install-promtool: a first build into the cache, then the cached one; its lock on the
shared cache; a cached build of another version is rebuilt; a stopped build leaves nothing.

The script runs from a copy of itself in a temporary checkout, with ARKLOW_PROMTOOL_CACHE and
HOME in a temporary directory (the machine's real cache is never touched) and a stand-in ``go``
first on PATH (a real first build takes 15 to 30 minutes): it answers ``env GOVERSION`` and
``install ...promtool@VERSION`` (taking FAKE_GO_SECONDS), writing a ``promtool`` that prints the
version given to ``-X ...version.Version``, and logs each call."""

from __future__ import annotations

import fcntl
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.pulumi_cli import REPO

VERSION = "v0.316.0"
FAKE_GO = r"""#!/usr/bin/env python3
import os, re, sys, time
args = sys.argv[1:]
with open(os.environ["FAKE_GO_LOG"], "a") as log:
    log.write(" ".join(args) + "\n")
with open(os.environ["FAKE_GO_LOG"] + ".pids", "a") as pids:
    pids.write(f"{os.getpid()}\n")
if args[:2] == ["env", "GOVERSION"]:
    print("go1.26.0")
elif args[0] == "install":
    assert args[-1].endswith("/cmd/promtool@" + os.environ["FAKE_WANT"]), args
    time.sleep(float(os.environ.get("FAKE_GO_SECONDS", "0")))
    version = os.environ.get("FAKE_BUILT") or re.search(r"Version=(\S+)", " ".join(args)).group(1)
    path = os.path.join(os.environ["GOBIN"], "promtool")
    with open(path, "w") as out:
        out.write(f'#!/bin/sh\necho "promtool, version {version} (branch: , revision: unknown)"\n')
    os.chmod(path, 0o755)
else:
    sys.exit(f"fake go: unexpected {args}")
"""


class Sandbox:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.repo = root / "repo"
        self.cache = root / "cache"
        self.log = root / "go.log"
        (self.repo / "scripts").mkdir(parents=True)
        shutil.copy(REPO / "scripts" / "install-promtool", self.repo / "scripts")
        bin_dir = root / "bin"
        bin_dir.mkdir()
        (bin_dir / "go").write_text(FAKE_GO)
        (bin_dir / "go").chmod(0o755)
        (root / "home").mkdir()
        self.env = {
            "PATH": f"{bin_dir}:/usr/bin:/bin",
            "HOME": str(root / "home"),
            "ARKLOW_PROMTOOL_CACHE": str(self.cache),
            "PROMTOOL_INSTALL_HEARTBEAT": "1",
            "FAKE_GO_LOG": str(self.log),
            "FAKE_WANT": VERSION,
            "FAKE_GO_SECONDS": "0",
        }

    def start(
        self, seconds: float = 0, repo: Path | None = None, **env: str
    ) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [str((repo or self.repo) / "scripts" / "install-promtool")],
            env={**self.env, "FAKE_GO_SECONDS": str(seconds), **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def builds(self) -> int:
        lines = self.log.read_text().splitlines() if self.log.exists() else []
        return sum(1 for line in lines if line.startswith("install"))

    def second_checkout(self) -> Path:
        other = self.root / "repo2"
        shutil.copytree(self.repo, other, ignore=shutil.ignore_patterns(".tools"))
        return other


def finish(proc: subprocess.Popen[str], timeout: float = 60) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


@pytest.fixture
def box(tmp_path: Path) -> Sandbox:
    return Sandbox(tmp_path)


def test_a_first_build_says_what_it_does_then_the_cache_is_used(box: Sandbox) -> None:
    code, out, err = finish(box.start(seconds=3))
    assert code == 0, err
    lines = err.splitlines()
    assert lines[0].startswith(f"install-promtool: building promtool {VERSION} with go1.26.0")
    assert any("still downloading and compiling promtool:" in line for line in lines)
    assert "done in" in lines[-1]
    assert out.startswith(f"install-promtool: promtool {VERSION} in .tools/bin (built from Go")
    link = box.repo / ".tools" / "bin" / "promtool"
    assert link.resolve() == box.cache / VERSION / "bin" / "promtool"
    assert not list(box.cache.glob(".build.*"))
    code, out, err = finish(box.start())
    assert (code, err) == (0, "")
    assert "cached build in" in out and box.builds() == 1


def test_two_checkouts_build_the_shared_cache_once(box: Sandbox) -> None:
    first = box.start(seconds=3)
    time.sleep(1.0)  # the first holds the lock and builds
    second = box.start(seconds=3, repo=box.second_checkout())
    (code1, _, err1), (code2, out2, err2) = finish(first), finish(second)
    assert (code1, code2) == (0, 0), err1 + err2
    assert box.builds() == 1
    assert "waiting for another install-promtool building the shared cache (pid " in err2
    assert str(box.repo) in err2  # names the checkout holding the lock
    assert any("still waiting for" in line for line in err2.splitlines())
    assert "cached build in" in out2
    assert (box.root / "repo2" / ".tools" / "bin" / "promtool").resolve().is_file()


def test_a_held_lock_is_waited_for(box: Sandbox) -> None:
    box.cache.mkdir()
    with open(box.cache / ".lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        proc = box.start()
        time.sleep(2.5)
        assert proc.poll() is None and box.builds() == 0
    code, _, err = finish(proc)
    assert code == 0, err
    assert box.builds() == 1


def test_a_cached_build_of_another_version_is_rebuilt(box: Sandbox) -> None:
    code, _, err = finish(box.start(FAKE_BUILT="v0.300.0"))  # a build that reports another
    assert code == 1 and "does not report v0.316.0" in err
    stale = box.cache / VERSION / "bin" / "promtool"
    stale.parent.mkdir(parents=True)
    stale.write_text('#!/bin/sh\necho "promtool, version v0.300.0 (branch: )"\n')
    stale.chmod(0o755)
    code, out, err = finish(box.start())
    assert code == 0, err
    assert "built from Go modules" in out and box.builds() == 2


def test_a_stopped_build_leaves_no_lock_and_no_half_build(box: Sandbox) -> None:
    proc = box.start(seconds=30)
    deadline = time.monotonic() + 60
    while box.builds() == 0:
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    code, _, _ = finish(proc, timeout=30)
    assert code == 143
    assert not list(box.cache.glob(".build.*"))
    for pid in Path(f"{box.log}.pids").read_text().split():
        assert _ends(int(pid)), f"go (pid {pid}) still runs"
    started = time.monotonic()
    code, _, err = finish(box.start())
    assert code == 0, err
    assert time.monotonic() - started < 20 and "waiting" not in err


def _ends(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state == "Z":
            return True
        time.sleep(0.1)
    return False
