"""schemathesis (``st run --checks all``) against the controller finds nothing: every answer has a
status, headers, a media type and a body its ``/openapi.json`` declares, the server takes every
request the document allows and refuses what it does not.

One run against a real ``arklow controller run`` process on loopback with a tokens file (started
as the contract test starts one: a SQLite store filled through the store service, static
capacity, no cloud), after its first tick; one against the app on loopback before any tick and
without tokens (the 503 with ``Retry-After``, the document without security). Examples are
bounded and seeded, so each run takes seconds; ``bench/fuzz_api.py`` runs longer.
``schemathesis.toml`` and ``schemathesis_checks.py`` (beside this file) say what the document
cannot: a batch naming a lane outside the topology is refused 422.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from arklow_pulumi.controller.api import build_app
from arklow_pulumi.controller.guarding import allowed_hosts
from arklow_pulumi.controller.metrics import Metrics
from arklow_pulumi.core.topology import Destination, Lane
from arklow_pulumi.store import open_store
from arklow_pulumi.store import service as svc
from arklow_pulumi.store.engine import close_stores
from tests.memory_controller import MemoryPort
from tests.uvicorn_server import UvicornThread

HERE = Path(__file__).parent
BIN = Path(sys.executable).parent
TOKEN = "tok-openapi-admin-3c1d"
EXAMPLES = int(os.environ.get("ARKLOW_SCHEMATHESIS_EXAMPLES", "25"))


def schemathesis(
    url: str, work: Path, *extra: str, examples: int = EXAMPLES, seed: int = 1
) -> tuple[bool, str]:
    """``st run --checks all`` against ``url``'s document: whether it found nothing, its report."""
    argv = [str(BIN / "st"), "--config-file", str(HERE / "schemathesis.toml"), "run"]
    argv += [f"{url}/openapi.json", "--checks", "all", "--max-examples", str(examples)]
    argv += ["--seed", str(seed), "--generation-database", "none", "--no-color", *extra]
    env = {**os.environ, "SCHEMATHESIS_HOOKS": str(HERE / "schemathesis_checks.py")}
    result = subprocess.run(
        argv, cwd=work, env=env, capture_output=True, text=True, timeout=3600, check=False
    )
    return result.returncode == 0, result.stdout + result.stderr


def fill_store(path: Path) -> str:
    url = f"sqlite:///{path}"
    store = open_store(url)
    try:
        lanes = (Lane("search", "batch", limit=8), Lane("search", "interactive", limit=4))
        svc.create_destination(store, Destination("search", ("gpu",), lanes, {"gpu": 6.0}))
    finally:
        close_stores()
    return url


class ControllerProcess:
    """``arklow controller run`` with a tokens file; its output goes to files."""

    def __init__(self, work: Path) -> None:
        digest = hashlib.sha256(TOKEN.encode()).hexdigest()
        tokens = work / "tokens.yaml"
        tokens.write_text(f"tokens:\n  - {{name: ops, scope: admin, sha256: {digest}}}\n")
        store = fill_store(work / "arklow.db")
        self.out, self.err = work / "out.txt", work / "err.txt"
        argv = [str(BIN / "arklow"), "controller", "run", "--store", store]
        argv += ["--listen", "127.0.0.1:0", "--interval", "1", "--tokens", str(tokens)]
        with self.out.open("w") as out, self.err.open("w") as err:
            self.process = subprocess.Popen(argv, cwd=work, stdout=out, stderr=err)

    def url(self, deadline_s: float = 120.0) -> str:
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            if self.process.poll() is not None:
                pytest.fail(f"controller exited {self.process.returncode}: {self.err.read_text()}")
            for line in self.out.read_text().splitlines():
                if "listening on " in line:
                    return line.split("listening on ")[1].split()[0]
            time.sleep(0.1)
        pytest.fail("the controller did not listen")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=30)


@contextmanager
def live_controller(work: Path) -> Iterator[str]:
    """A controller process's URL once it has published its first tick."""
    running = ControllerProcess(work)
    try:
        url = running.url()
        auth = {"Authorization": f"Bearer {TOKEN}"}
        end = time.monotonic() + 60
        while httpx.get(url + "/v1/admission", headers=auth).status_code != 200:
            assert time.monotonic() < end, "no first tick"
            time.sleep(0.1)
        yield url
    finally:
        running.stop()
    assert "Traceback" not in running.err.read_text(), running.err.read_text()


@pytest.fixture
def controller(tmp_path: Path) -> Iterator[str]:
    with live_controller(tmp_path) as url:
        yield url


def test_a_live_controller_answers_as_its_document_says(controller: str, tmp_path: Path) -> None:
    clean, report = schemathesis(controller, tmp_path, "--header", f"Authorization: Bearer {TOKEN}")
    assert clean, report[-8000:]


def test_before_the_first_tick_and_without_tokens(tmp_path: Path) -> None:
    port = MemoryPort(["search/batch"], interval_s=2.5)  # nothing published: 503, Retry-After 3
    app = build_app(port, None, Metrics(), hosts=allowed_hosts("127.0.0.1"))
    with UvicornThread(app, access_log=False) as server:
        clean, report = schemathesis(server.url, tmp_path)
    assert clean, report[-8000:]
