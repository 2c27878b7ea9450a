"""No password in what ``pulumi up`` prints: a planted store password, set with ``--secret`` (or in
``$ARKLOW_STORE``), never appears in the engine's output when the store cannot be reached.

The store URL points at a closed port, so every create fails in the provider with a
:class:`~arklow_pulumi.store.engine.StoreError`; the engine reports it as a diagnostic. The
whole of stdout and stderr (JSON events and plain text) is searched for each half of the password.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.pulumi_cli import Stack

pytestmark = pytest.mark.e2e

MakeStack = Callable[..., Stack]
POOL: dict[str, Any] = {"name": "gpu-pool", "resource": "gpu", "members": ["search"]}
TOPOLOGY: dict[str, Any] = {
    "destinations": [
        {"name": "search", "resources": ["gpu"], "lanes": [{"name": "interactive", "limit": 8}]}
    ],
    "pools": [POOL],
}
HEAD, TAIL = "PlantedHead7", "PlantedTail9"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def urls() -> dict[str, str]:
    where = f"127.0.0.1:{closed_port()}"
    return {
        "raw @ in the password": f"postgresql://arklow:{HEAD}@{TAIL}@{where}/arklow",
        "query password": f"postgresql://arklow@{where}/arklow?password={HEAD}{TAIL}",
    }


def assert_no_password(output: str) -> None:
    for half in (HEAD, TAIL):
        assert half not in output, f"{half} in the output:\n{output[-3000:]}"


def failed_up(stack: Stack) -> str:
    result = stack.run("up", "--yes", "--skip-preview", *stack.select_args(), check=False)
    assert result.returncode != 0, "pulumi up reached a store on a closed port"
    output = f"{result.stdout}\n{result.stderr}"
    assert "cannot open store" in output, output[-3000:]
    return output


@pytest.mark.parametrize("form", list(urls()))
def test_a_secret_store_url_is_never_printed(make_stack: MakeStack, form: str) -> None:
    stack = make_stack(TOPOLOGY)
    url = urls()[form]
    stack.run("config", "set", "--secret", "arklow:store", url, *stack.select_args())
    assert_no_password(failed_up(stack))


def test_a_store_url_from_the_environment_is_never_printed(make_stack: MakeStack) -> None:
    stack = make_stack(TOPOLOGY)
    stack.env["ARKLOW_STORE"] = urls()["raw @ in the password"]
    assert_no_password(failed_up(stack))


def test_missing_aws_credentials_is_one_plain_line(make_stack: MakeStack, tmp_path: Path) -> None:
    """The provider's error carries no chained botocore exception text (it used to print
    ``NoCredentialsError`` and "The above exception was the direct cause ..." too)."""
    topology = {
        **TOPOLOGY,
        "pools": [
            {
                **POOL,
                "scale_targets": [
                    {
                        "kind": "aws_asg",
                        "name": "gpu-workers",
                        "region": "us-east-1",
                        "min_replicas": 0,
                        "max_replicas": 10,
                        "units_per_replica": 8,
                    }
                ],
            }
        ],
    }
    stack = make_stack(topology)
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        stack.env.pop(key, None)
    stack.env.update(
        AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"),
        AWS_CONFIG_FILE=str(tmp_path / "none"),
        AWS_EC2_METADATA_DISABLED="true",
    )
    result = stack.run("up", "--yes", "--skip-preview", *stack.select_args(), check=False)
    output = f"{result.stdout}\n{result.stderr}"
    assert result.returncode != 0 and "no AWS credentials found" in output, output[-3000:]
    assert "direct cause" not in output and "NoCredentialsError" not in output, output[-3000:]
    assert "Traceback" not in output, output[-3000:]
