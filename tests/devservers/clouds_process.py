"""``arklow dev clouds`` as a real process: started, its exported environment read, stopped."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.e2e.pulumi_cli import ARKLOW, REPO

READY = "# local clouds ready"


class CloudsProcess:
    def __init__(self, proc: subprocess.Popen[str], env: dict[str, str]) -> None:
        self.proc = proc
        self.env = env

    def stop(self, signum: int = signal.SIGTERM) -> tuple[int, str]:
        """Signal the process; its exit code and what it wrote on stderr."""
        if self.proc.poll() is None:
            self.proc.send_signal(signum)
        _, err = self.proc.communicate(timeout=60)
        return self.proc.returncode, err


def read_exports(proc: subprocess.Popen[str]) -> dict[str, str]:
    """The ``export K=V`` lines up to the ready line (as ``eval`` in a shell would take them)."""
    assert proc.stdout is not None
    env: dict[str, str] = {}
    for line in proc.stdout:
        if line.startswith(READY):
            return env
        words = shlex.split(line)
        assert words[0] == "export" and len(words) == 2, line
        key, _, value = words[1].partition("=")
        env[key] = value
    _, err = proc.communicate(timeout=30)
    raise AssertionError(f"arklow dev clouds exited {proc.returncode} before ready:\n{err}")


@contextmanager
def clouds(*args: str, cwd: Path = REPO) -> Iterator[CloudsProcess]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "ARKLOW_"))}
    proc = subprocess.Popen(
        [str(ARKLOW), "dev", "clouds", *args],
        cwd=cwd,
        env=base,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    running = CloudsProcess(proc, {})
    try:
        running.env = read_exports(proc)
        yield running
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)
