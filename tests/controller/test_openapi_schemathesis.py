"""schemathesis (``st run --checks all``) against the controller finds nothing: every answer has a
status, headers, a media type and a body its ``/openapi.json`` declares, the server takes every
request the document allows and refuses what it does not.

One run against a real ``arklow controller run`` process on loopback with a tokens file (started
as the contract test starts one: a SQLite store filled through the store service, static
capacity, no cloud), after its first tick; one against the app on loopback before any tick and
without tokens (the 503 with ``Retry-After``, the document without security). Examples are
bounded (:data:`EXAMPLES`) and seeded, so each run takes seconds; ``bench/fuzz_api.py`` runs longer.
``schemathesis.toml`` and ``schemathesis_checks.py`` (beside this file) say what the document
cannot: a batch naming a lane outside the topology is refused 422.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from arklow_pulumi.controller.api.app import build_app
from arklow_pulumi.controller.api.guarding import allowed_hosts
from arklow_pulumi.controller.api.metrics import Metrics
from arklow_pulumi.core.topology import Destination, Lane
from arklow_pulumi.store import open_store
from arklow_pulumi.store import service as svc
from arklow_pulumi.store.engine import close_stores
from tests import loopback
from tests.controller_process import ControllerProcess, eventually
from tests.hypothesis_profiles import examples
from tests.memory_controller import MemoryPort
from tests.uvicorn_server import UvicornThread

HERE = Path(__file__).parent
BIN = Path(sys.executable).parent
TOKEN = "tok-openapi-admin-3c1d"
# Examples an operation: 25 (10 under the `dev` profile, tests/hypothesis_profiles.py), unless
# ARKLOW_SCHEMATHESIS_EXAMPLES says.
EXAMPLES = int(os.environ.get("ARKLOW_SCHEMATHESIS_EXAMPLES", examples(25, dev=10)))


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


def controller_process(work: Path) -> ControllerProcess:
    """``arklow controller run`` on :func:`fill_store`'s store, with a tokens file for TOKEN."""
    digest = hashlib.sha256(TOKEN.encode()).hexdigest()
    tokens = work / "tokens.yaml"
    tokens.write_text(f"tokens:\n  - {{name: ops, scope: admin, sha256: {digest}}}\n")
    return ControllerProcess(work, fill_store(work / "arklow.db"), "--tokens", str(tokens))


@contextmanager
def live_controller(work: Path) -> Iterator[str]:
    """A controller process's URL once it has published its first tick."""
    running = controller_process(work)
    try:
        url = running.url()
        auth = {"Authorization": f"Bearer {TOKEN}"}
        eventually(
            lambda: loopback.get(url + "/v1/admission", headers=auth).status_code == 200,
            "the first tick",
            deadline_s=60,
            every=0.1,
        )
        yield url
    finally:
        running.end(timeout=30)
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
