"""One harness for the scripts that build a Go tool into the shared cache (scripts/install-pulumi;
promtool comes from Debian's package now), and the checks they share: one build for two
checkouts, a held lock waited for, a stopped build that leaves nothing behind.

The script runs from a copy of itself in a temporary checkout (so .tools/bin is the copy's), with
its cache and HOME in a temporary directory (the machine's real cache is never touched) and a
stand-in ``go`` first on PATH: the Go toolchain is not the project's, and a real first build takes
minutes. The stand-in logs each call (and its pid) to FAKE_GO_LOG, so a test can count the builds
and see them stopped; each test file gives its answers to the script's other commands (an install
takes FAKE_GO_SECONDS)."""

from __future__ import annotations

import fcntl
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from tests.e2e.pulumi_cli import REPO

# The stand-in ``go``: every call logged (its pid too, to see a stopped build's compile gone) and
# ``go env GOVERSION`` answered; a test file's own answers follow as ``elif`` branches.
FAKE_GO_HEAD = r"""#!/usr/bin/env python3
import json, os, re, sys, time
args = sys.argv[1:]
with open(os.environ["FAKE_GO_LOG"], "a") as log:
    log.write(" ".join(args) + "\n")
with open(os.environ["FAKE_GO_LOG"] + ".pids", "a") as pids:
    pids.write(f"{os.getpid()}\n")
if args[:2] == ["env", "GOVERSION"]:
    print("go1.26.0")
"""
FAKE_GO_TAIL = r"""else:
    sys.exit(f"fake go: unexpected {args}")
"""


class Sandbox:
    """A checkout holding ``scripts/<script>``, which builds ``binary`` into ``.tools/bin``, and a
    stand-in ``go`` answering ``go_answers`` (``elif`` branches over ``args``) besides the rest."""

    def __init__(
        self, root: Path, script: str, binary: str, go_answers: str, env: Mapping[str, str]
    ) -> None:
        self.root, self.script, self.binary = root, script, binary
        self.repo = root / "repo"
        self.cache = root / "cache"
        self.log = root / "go.log"
        (self.repo / "scripts").mkdir(parents=True)
        shutil.copy(REPO / "scripts" / script, self.repo / "scripts")
        bin_dir = root / "bin"
        bin_dir.mkdir()
        (bin_dir / "go").write_text(FAKE_GO_HEAD + go_answers + FAKE_GO_TAIL)
        (bin_dir / "go").chmod(0o755)
        (root / "home").mkdir()
        self.env = {
            "PATH": f"{bin_dir}:/usr/bin:/bin",
            "HOME": str(root / "home"),
            "FAKE_GO_LOG": str(self.log),
            "FAKE_GO_SECONDS": "0",
            **env,
        }

    def start(
        self, seconds: float = 0, repo: Path | None = None, **env: str
    ) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [str((repo or self.repo) / "scripts" / self.script)],
            env={**self.env, "FAKE_GO_SECONDS": str(seconds), **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def builds(self) -> int:
        """How many times ``binary`` was compiled (``go install .../cmd/<binary>[@version]``)."""
        lines = self.log.read_text().splitlines() if self.log.exists() else []
        return sum(1 for line in lines if line.startswith("install") and self._builds(line))

    def _builds(self, install: str) -> bool:
        package = install.split()[-1].split("@")[0]
        return package.endswith(f"/cmd/{self.binary}")

    def second_checkout(self) -> Path:
        other = self.root / "repo2"
        shutil.copytree(self.repo, other, ignore=shutil.ignore_patterns(".tools"))
        return other


def finish(proc: subprocess.Popen[str], timeout: float = 60) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def check_two_checkouts_build_the_shared_cache_once(box: Sandbox) -> None:
    first = box.start(seconds=3)
    _until_it_builds(box, first)  # the first holds the lock and builds
    second = box.start(seconds=3, repo=box.second_checkout())
    (code1, _, err1), (code2, out2, err2) = finish(first), finish(second)
    assert (code1, code2) == (0, 0), err1 + err2
    assert box.builds() == 1
    assert f"waiting for another {box.script} building the shared cache (pid " in err2
    assert str(box.repo) in err2  # names the checkout holding the lock
    assert any("still waiting for" in line for line in err2.splitlines())
    assert "cached build in" in out2
    assert (box.root / "repo2" / ".tools" / "bin" / box.binary).resolve().is_file()


def check_a_held_lock_is_waited_for(box: Sandbox) -> str:
    """The script waits while another holds the cache's lock, then builds once; its stderr."""
    box.cache.mkdir()
    with open(box.cache / ".lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        proc = box.start()
        assert proc.stderr is not None
        said = proc.stderr.readline()  # its first line: it waits (it says so before anything else)
        assert "waiting for another" in said, said
        assert proc.poll() is None  # it waits, it does not build beside the holder
        assert box.builds() == 0
    code, _, err = finish(proc)
    assert code == 0, said + err
    assert box.builds() == 1
    return said + err


def check_a_stopped_build_leaves_no_lock_and_no_half_build(box: Sandbox) -> None:
    proc = box.start(seconds=30)
    _until_it_builds(box, proc)  # (for 30 s)
    proc.send_signal(signal.SIGTERM)
    code, _, _ = finish(proc, timeout=30)
    assert code == 143
    assert not list(box.cache.glob(".build.*"))  # its temporary build directory is gone
    for pid in Path(f"{box.log}.pids").read_text().split():  # the compile it started is stopped
        assert _ends(int(pid)), f"go (pid {pid}) still runs"
    # and the next install does not wait for anything
    code, _, err = finish(box.start())
    assert code == 0, err
    assert "waiting" not in err


def _until_it_builds(box: Sandbox, proc: subprocess.Popen[str]) -> None:
    """Until ``proc`` compiles (the stand-in ``go install`` has logged its call), holding the
    cache's lock while it does; a minute at most."""
    deadline = time.monotonic() + 60
    while box.builds() == 0:
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.1)


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
