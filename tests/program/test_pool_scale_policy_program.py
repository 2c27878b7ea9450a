"""``scale_policy:`` on a pool in the stack config reaches the ``Pool`` resource as written."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

from arklow_pulumi.program import main
from tests.program.mocks import mocked
from tests.program.test_program import settle

ROOT = Path(__file__).resolve().parents[2]
DEV = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())["config"]


def test_scale_policy_reaches_the_pool_resource() -> None:
    topology = copy.deepcopy(DEV["arklow:topology"])
    shared = next(p for p in topology["pools"] if p["name"] == "shared-gpu")
    shared["scale_policy"] = {"scale_down_window_s": 900, "max_step_down": 2}
    with mocked({"arklow:topology": topology}) as mocks:
        declared = main()
        settle(*(p.arklow_name for p in declared.pools.values()))
    pools = mocks.of_type("Pool")
    assert pools["shared-gpu"]["scale_policy"] == {"scale_down_window_s": 900, "max_step_down": 2}
    assert pools["llm-quota"].get("scale_policy") is None
