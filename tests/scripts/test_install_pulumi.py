"""scripts/install-pulumi's first build, seen as a user sees it, and its lock on the shared cache.

The script runs from a copy of its part of the repository (so .tools/bin is the copy's), with
ARKLOW_TOOLS_CACHE and HOME in a temporary directory (the machine's real cache is never touched)
and a stand-in ``go`` first on PATH: the Go toolchain is not the project's, and a real first
build takes 8 minutes. The stand-in answers the commands the script runs (``env GOVERSION``,
``mod download``, ``install`` with ``GOBIN``, ``mod download -json``), takes FAKE_GO_SECONDS per
install and logs each call, so a test can count the builds."""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.pulumi_cli import REPO

VERSION = "v3.260.0"
FAKE_GO = r'''#!/usr/bin/env python3
import json, os, re, sys, time
args = sys.argv[1:]
with open(os.environ["FAKE_GO_LOG"], "a") as log:
    log.write(" ".join(args) + "\n")
with open(os.environ["FAKE_GO_LOG"] + ".pids", "a") as pids:
    pids.write(f"{os.getpid()}\n")
if args[:2] == ["env", "GOVERSION"]:
    print("go1.26.0")
elif args[:2] == ["mod", "download"] and "-json" in args:
    module = args[-1].split("@")
    print(json.dumps({"Path": module[0], "Version": module[1], "Dir": os.environ["FAKE_SDK"],
                      "GoMod": "/dev/null"}, indent="\t"))
elif args[:2] == ["mod", "download"]:
    time.sleep(min(1.0, float(os.environ.get("FAKE_GO_SECONDS", "0"))))
elif args[0] == "install":
    time.sleep(float(os.environ.get("FAKE_GO_SECONDS", "0")))
    version = re.search(r"Version=(v[0-9.]+)", " ".join(args)).group(1)
    name = args[-1].rsplit("/", 1)[-1]
    path = os.path.join(os.environ["GOBIN"], name)
    with open(path, "w") as out:
        out.write(f'#!/bin/sh\n[ "$1" = version ] && echo {version}\nexit 0\n')
    os.chmod(path, 0o755)
else:
    sys.exit(f"fake go: unexpected {args}")
'''


class Sandbox:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.repo = root / "repo"
        self.cache = root / "cache"
        self.log = root / "go.log"
        (self.repo / "scripts").mkdir(parents=True)
        shutil.copy(REPO / "scripts" / "install-pulumi", self.repo / "scripts")
        host = Path("tools") / "pulumi-engine" / "python-host"
        (self.repo / host).mkdir(parents=True)
        shutil.copy(REPO / host / "pulumi-language-python", self.repo / host)
        sdk = root / "sdk"
        for script in ("python/cmd/pulumi-language-python-exec",
                       "python/dist/pulumi-resource-pulumi-python"):
            (sdk / script).parent.mkdir(parents=True, exist_ok=True)
            (sdk / script).write_text("#!/bin/sh\n")
        bin_dir = root / "bin"
        bin_dir.mkdir()
        (bin_dir / "go").write_text(FAKE_GO)
        (bin_dir / "go").chmod(0o755)
        (root / "home").mkdir()
        self.env = {
            "PATH": f"{bin_dir}:/usr/bin:/bin",
            "HOME": str(root / "home"),
            "ARKLOW_TOOLS_CACHE": str(self.cache),
            "PULUMI_INSTALL_HEARTBEAT": "1",
            "FAKE_GO_LOG": str(self.log),
            "FAKE_SDK": str(sdk),
            "FAKE_GO_SECONDS": "0",
        }

    def start(self, seconds: float = 0, repo: Path | None = None) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [str((repo or self.repo) / "scripts" / "install-pulumi")],
            env={**self.env, "FAKE_GO_SECONDS": str(seconds)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def builds(self) -> int:
        """How many times the CLI was compiled."""
        lines = self.log.read_text().splitlines() if self.log.exists() else []
        return sum(1 for line in lines if line.startswith("install") and line.endswith("cmd/pulumi"))

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


def test_a_first_build_shows_each_phase_and_a_heartbeat(box: Sandbox) -> None:
    code, out, err = finish(box.start(seconds=3))
    assert code == 0, err
    lines = err.splitlines()
    starts = [line for line in lines if line.startswith("install-pulumi: [")]
    assert [line.split("]")[0] for line in starts] == [
        "install-pulumi: [1/4", "install-pulumi: [2/4", "install-pulumi: [3/4", "install-pulumi: [4/4"
    ]
    assert "compiling the pulumi CLI" in starts[1]
    assert any("still compiling the pulumi CLI:" in line and "so far" in line for line in lines)
    assert sum("done in" in line for line in lines) == 3  # each compiled or downloaded phase
    assert out.startswith(f"install-pulumi: pulumi {VERSION}")
    assert "built from Go modules into" in out
    link = box.repo / ".tools" / "bin" / "pulumi"
    assert link.resolve() == box.cache / VERSION / "bin" / "pulumi"
    assert box.builds() == 1


def test_two_checkouts_build_the_shared_cache_once(box: Sandbox) -> None:
    first = box.start(seconds=3)
    time.sleep(1.0)  # the first holds the lock and builds
    second = box.start(seconds=3, repo=box.second_checkout())
    (code1, _, err1), (code2, out2, err2) = finish(first), finish(second)
    assert (code1, code2) == (0, 0), err1 + err2
    assert box.builds() == 1
    assert "waiting for another install-pulumi building the shared cache (pid " in err2
    assert str(box.repo) in err2  # names the checkout holding the lock
    assert any("still waiting for" in line for line in err2.splitlines())
    assert "cached build in" in out2
    assert (box.root / "repo2" / ".tools" / "bin" / "pulumi").resolve().is_file()


def test_a_held_lock_is_waited_for_then_released(box: Sandbox) -> None:
    box.cache.mkdir()
    with open(box.cache / ".lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        proc = box.start()
        time.sleep(2.5)
        assert proc.poll() is None  # it waits, it does not build beside the holder
        assert box.builds() == 0
    code, _, err = finish(proc)
    assert code == 0, err
    assert err.splitlines()[0].startswith(
        "install-pulumi: waiting for another install-pulumi building the shared cache"
    )
    assert box.builds() == 1


def test_a_stopped_build_leaves_no_lock_and_no_half_build(box: Sandbox) -> None:
    proc = box.start(seconds=30)
    deadline = time.monotonic() + 60
    while box.builds() == 0:  # until it compiles the CLI (for 30 s)
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    code, _, _ = finish(proc, timeout=30)
    assert code == 143
    assert not list(box.cache.glob(".build.*"))  # its temporary build directory is gone
    for pid in Path(f"{box.log}.pids").read_text().split():  # the compile it started is stopped
        assert _ends(int(pid)), f"go (pid {pid}) still runs"
    # and the next install does not wait for anything
    started = time.monotonic()
    code, _, err = finish(box.start(seconds=0))
    assert code == 0, err
    assert time.monotonic() - started < 20 and "waiting" not in err


def _ends(pid: int, within: float = 10.0) -> bool:
    """The process is gone (or a zombie: dead, not yet reaped) within ``within`` seconds."""
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


def test_a_cached_build_takes_the_lock_briefly(box: Sandbox) -> None:
    assert finish(box.start())[0] == 0
    started = time.monotonic()
    code, out, err = finish(box.start())
    assert code == 0, err
    assert "cached build in" in out and box.builds() == 1
    assert time.monotonic() - started < 10
    assert os.access(box.cache / ".lock", os.R_OK)
