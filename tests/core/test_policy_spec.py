"""``scale_policy:`` on a pool in the topology schema: read into the pool, validated like every
other field (one line naming the pool and the field; ``arklow validate`` exits 2)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.core.policy import DEFAULT_POLICY, ScalePolicy
from tests.builders import dest, lane, pool, target, topo


def with_policy(policy: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    destinations = [dest("a", ["gpu"], lane("x", 10))]
    pools = [pool("p", "gpu", ["a"], scale_targets=[target("g", 0, 9)], scale_policy=policy)]
    return destinations, pools


def test_omitted_or_null_means_the_defaults() -> None:
    assert topo(*with_policy(None)).pools["p"].scale_policy == DEFAULT_POLICY
    assert topo(*with_policy({})).pools["p"].scale_policy == DEFAULT_POLICY


def test_fields_override_the_defaults_one_by_one() -> None:
    got = topo(*with_policy({"scale_down_window_s": 600, "tolerance": 0.05})).pools["p"]
    assert got.scale_policy == ScalePolicy(scale_down_window_s=600.0, tolerance=0.05)


def test_standalone_pools_keep_the_defaults() -> None:
    t = topo([dest("solo", ["cpu"], lane("x", 1))])
    assert t.pools["solo/cpu"].scale_policy == DEFAULT_POLICY


BAD = [
    ({"tolerance": -0.1}, "scale_policy.tolerance"),
    ({"tolerance": 1.5}, "scale_policy.tolerance"),
    ({"tolerance": "0.1"}, "scale_policy.tolerance"),
    ({"max_step_up": 0}, "scale_policy.max_step_up"),
    ({"max_step_up": 2.5}, "scale_policy.max_step_up"),
    ({"max_step_down": -1}, "scale_policy.max_step_down"),
    ({"max_step_down_percent": 150}, "scale_policy.max_step_down_percent"),
    ({"max_step_up_percent": -5}, "scale_policy.max_step_up_percent"),
    ({"scale_down_window_s": float("nan")}, "scale_policy.scale_down_window_s"),
    ({"scale_down_window": 300}, "scale_policy.scale_down_window"),  # unknown field
    ("fast", "scale_policy"),
]


@pytest.mark.parametrize(("policy", "field"), BAD)
def test_bad_policy_names_pool_and_field(policy: Any, field: str) -> None:
    with pytest.raises(InvalidInput) as err:
        topo(*with_policy(policy))
    assert len(err.value.problems) == 1
    assert f"pool 'p': field '{field}'" in str(err.value)


@pytest.mark.parametrize(("policy", "field"), [BAD[0], BAD[3], BAD[9]])
def test_cli_refuses_a_bad_policy_with_one_line(tmp_path: Path, policy: Any, field: str) -> None:
    destinations, pools = with_policy(policy)
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump({"destinations": destinations, "pools": pools}))
    proc = subprocess.run(
        [sys.executable, "-m", "arklow_pulumi.cli", "validate", "--topology", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f"pool 'p': field '{field}'" in lines[0], proc.stderr
