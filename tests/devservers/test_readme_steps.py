"""The README's Pulumi and controller steps, run as written in bash (real clouds, engine and
controller), with port 8470 held by an impostor that answers everything with 200: the steps must
reach the controller they started, not whatever listens on the usual port. The same start with a
port that is taken must end with the controller's one-line error, not wait for ever."""

from __future__ import annotations

import re
import socket
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.e2e.pulumi_cli import ARKLOW, MISSING_ENGINE, REPO, engine_available

README = (REPO / "README.md").read_text()


def bash_block(containing: str) -> str:
    """The README's one ```bash block holding ``containing``."""
    blocks = [b for b in re.findall(r"```bash\n(.*?)```", README, re.S) if containing in b]
    assert len(blocks) == 1, containing
    return str(blocks[0])


class Impostor:
    """Another server on 127.0.0.1:8470 (when free) answering every request 200."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        seen = self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                seen.append(f"GET {self.path}")
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            do_POST = do_GET

            def log_message(self, *args: object) -> None:
                pass

        try:
            self.server: ThreadingHTTPServer | None = ThreadingHTTPServer(
                ("127.0.0.1", 8470), Handler
            )
        except OSError:  # something else holds 8470 already: the steps must not reach it either
            self.server = None
        if self.server is not None:
            threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


@pytest.fixture
def impostor() -> Iterator[Impostor]:
    server = Impostor()
    yield server
    server.close()


def project(tmp_path: Path) -> Path:
    """A copy of the repository's root program, with its venv and engine linked in."""
    copy = tmp_path / "project"
    copy.mkdir()
    for name in ("Pulumi.yaml", "__main__.py"):
        (copy / name).write_text((REPO / name).read_text())
    (copy / "stacks").mkdir()
    config = REPO / "stacks" / "Pulumi.dev.yaml"
    (copy / "stacks" / config.name).write_text(config.read_text())
    for link in (".venv", ".tools"):
        (copy / link).symlink_to(REPO / link)
    return copy


def test_a_taken_port_is_one_line_and_exit_2(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = subprocess.run(
            [
                str(ARKLOW),
                "controller",
                "run",
                "--listen",
                f"127.0.0.1:{port}",
                "--store",
                f"sqlite:///{tmp_path}/arklow.db",
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"error: option --listen: field 'listen': cannot listen on 127.0.0.1:{port}: "
        "Address already in use\n"
    )


@pytest.mark.e2e
def test_the_controller_steps_reach_the_controller_they_started(
    tmp_path: Path, impostor: Impostor
) -> None:
    if not engine_available():
        pytest.fail(MISSING_ENGINE, pytrace=False)
    pulumi_steps = bash_block("wait_for clouds")
    controller_steps = bash_block("arklow controller run --listen 127.0.0.1:0")
    tokens_steps, start_and_rest = controller_steps.split("rm -f .arklow/controller.out", 1)
    start = "rm -f .arklow/controller.out" + start_and_rest.split("echo $API", 1)[0]
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        failing_start = start.replace("--listen 127.0.0.1:0", f"--listen 127.0.0.1:{port}")
        assert failing_start != start
        script = "\n".join(
            [
                "set -u",
                pulumi_steps,
                tokens_steps,
                "echo '::failing start'",
                failing_start,
                'echo "::wait_for ended: $?"',
                controller_steps,
                "echo '::cleanup'",
                "pulumi destroy --yes --non-interactive > /dev/null; kill $CLOUDS",
            ]
        )
        result = subprocess.run(
            ["bash", "-c", script],
            cwd=project(tmp_path),
            env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
    out, err = result.stdout, result.stderr
    (tmp_path / "out.txt").write_text(out)
    (tmp_path / "err.txt").write_text(err)
    assert "::cleanup" in out, f"see {tmp_path}/out.txt and err.txt"
    # the start with a taken port: the controller's own one-line error, and the wait ends
    failed = out.split("::failing start", 1)[1].split("::wait_for ended", 1)
    assert out.split("::wait_for ended: ", 1)[1].startswith("1"), out
    assert (
        f"error: option --listen: field 'listen': cannot listen on 127.0.0.1:{port}: "
        "Address already in use\n"
    ) in err
    assert "Traceback" not in err and "Traceback" not in failed[0]
    # the steps as written: a free port of their own, and the controller behind it answers
    api = re.search(r"^http://127\.0\.0\.1:(\d+)$", out, re.M)
    assert api is not None and api.group(1) != "8470", out
    # each answer as the README shows it (its … stands for anything)
    shown = [
        line.removeprefix("# ").split("  ")[0]
        for line in controller_steps.splitlines()
        if line.startswith(("# {", "# http"))
    ]
    assert len(shown) == 3, shown
    for answer in shown:
        pattern = ".*?".join(re.escape(part) for part in answer.split("…"))
        pattern = re.sub(r"127\\.0\\.0\\.1:\d+", r"127\\.0\\.0\\.1:\\d+", pattern)
        assert re.search(f"^{pattern}$", out, re.M), (answer, out[-3000:])
    assert re.search(r"^arklow_target_desired", out, re.M), out
    assert impostor.requests == []
