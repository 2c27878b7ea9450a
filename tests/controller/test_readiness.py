"""The controller says why it is not ready: one line on stderr at start and one at each change of
readiness, naming the reason and the object (here: no AWS credentials, for the ASG target)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from arklow_pulumi.controller.tick import readiness
from arklow_pulumi.controller.tick.readiness import Readiness, ReadinessLog
from arklow_pulumi.core.deciding import TargetId
from arklow_pulumi.store.engine import StoreError
from arklow_pulumi.supply.errors import MissingCredentials
from tests import loopback
from tests.controller_process import ControllerProcess, eventually, store_topology

TOPOLOGY = {
    "destinations": [
        {"name": "search", "resources": ["gpu"], "lanes": [{"name": "i", "limit": 4}]}
    ],
    "pools": [
        {
            "name": "gpu",
            "resource": "gpu",
            "members": ["search"],
            "scale_targets": [
                {
                    "kind": "aws_asg",
                    "name": "gpu-workers",
                    "region": "us-east-1",
                    "min_replicas": 1,
                    "max_replicas": 4,
                    "units_per_replica": 4,
                }
            ],
        }
    ],
}


def test_a_line_at_start_and_at_each_change_only(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="arklow.controller")
    state = ReadinessLog()
    target = TargetId("gpu", "gpu-workers")
    missing = readiness.supply_not_read({target: MissingCredentials("no AWS credentials")})
    for value in [missing, missing, readiness.TICKED, readiness.TICKED]:
        state.set(value)
    state.set(readiness.tick_failed(StoreError("connection refused")))
    lines = [r.getMessage() for r in caplog.records]
    levels = [r.levelname for r in caplog.records]
    assert levels == ["INFO", "WARNING", "INFO", "WARNING"]  # not ready at start: no warning
    assert lines == [
        "not ready: no tick done yet (controller)",
        "not ready: missing credentials (scale target 'gpu/gpu-workers'): no AWS credentials",
        "ready: store and supply read on the last tick",
        "not ready: store unreachable (store): connection refused",
    ]
    assert not state.ready


def test_same_reason_with_another_detail_is_no_change(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="arklow.controller")
    state = ReadinessLog(Readiness(False, "store unreachable", "store", "try 1"))
    state.set(Readiness(False, "store unreachable", "store", "try 2"))
    assert len(caplog.records) == 1


def test_process_without_credentials_says_why_on_stderr(tmp_path: Path) -> None:
    url = store_topology(f"sqlite:///{tmp_path / 'arklow.db'}", TOPOLOGY)
    home = tmp_path / "home"
    home.mkdir()
    keep = ("PATH", "LANG", "LC_ALL", "PYTHONPATH", "VIRTUAL_ENV")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env |= {
        "HOME": str(home),
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    env |= {
        "AWS_CONFIG_FILE": str(home / "none"),
        "AWS_SHARED_CREDENTIALS_FILE": str(home / "none"),
    }
    process = ControllerProcess(tmp_path, url, env=env)
    try:
        address = process.url()

        def said() -> list[str] | None:
            lines = [ln for ln in process.err.read_text().splitlines() if "ready" in ln]
            return lines if any("missing credentials" in ln for ln in lines) else None

        lines = eventually(said, "the not-ready line")
        assert "not ready: no tick done yet (controller)" in lines[0]
        assert "not ready: missing credentials (scale target 'gpu/gpu-workers')" in lines[1]
        assert "AWS_ACCESS_KEY_ID" in lines[1]  # what to set
        assert loopback.get(f"{address}/readyz", trust_env=False).status_code == 503
    finally:
        process.end()
    said_lines = [ln for ln in process.err.read_text().splitlines() if "ready" in ln]
    assert len(said_lines) == 2  # the same reason tick after tick is said once
