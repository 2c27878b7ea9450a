"""The root program under pulumi.runtime.set_mocks: stack config in, resources out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml

from arklow_pulumi.program import declare_topology, main
from arklow_pulumi.reading.parsing import parse_topology
from tests.program.mocks import mocked

ROOT = Path(__file__).resolve().parents[2]
DEV = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())["config"]


def secret(value: Any) -> str:
    """The plain value of an input the engine would receive as a secret (fails if it is not)."""
    from pulumi.runtime import rpc

    assert isinstance(value, dict), f"{value!r} is not a secret"
    assert value[rpc._special_sig_key] == rpc._special_secret_sig
    return str(value["value"])


def settle(*outputs: pulumi.Output[Any]) -> list[Any]:
    """Wait for outputs under mocks and return their values."""
    import asyncio

    async def gather() -> list[Any]:
        return [await o.future() for o in outputs]

    return asyncio.get_event_loop().run_until_complete(gather())


def test_dev_stack_declares_its_topology() -> None:
    with mocked({"arklow:topology": DEV["arklow:topology"]}) as mocks:
        declared = main()
        (members,) = settle(declared.pools["shared-gpu"].arklow_name)
        assert members == "shared-gpu"
        settle(*(m.pool for m in declared.memberships.values()))
        # every resource registered before the mocks are read (under load a scale target's
        # registration can still be on the event loop)
        settle(*(t.urn for t in declared.scale_targets.values()))
        settle(*(d.urn for d in declared.destinations.values()))
    assert set(mocks.of_type("Destination")) == {
        "search",
        "summarize",
        "reports",
        "ingest",
        "transcode",
    }
    assert set(mocks.of_type("Pool")) == {
        "shared-gpu",
        "llm-quota",
        "cpu-workers",
        "video-encoders",
    }
    memberships = mocks.of_type("PoolMembership")
    assert {n: (i["destination"], i["pool"]) for n, i in memberships.items()} == {
        "shared-gpu:search": ("search", "shared-gpu"),
        "shared-gpu:summarize": ("summarize", "shared-gpu"),
        "llm-quota:summarize": ("summarize", "llm-quota"),
        "cpu-workers:ingest": ("ingest", "cpu-workers"),
        "video-encoders:transcode": ("transcode", "video-encoders"),
    }
    migs = mocks.of_type("ScaleTarget")
    assert migs["cpu-workers"]["group"] == {
        "kind": "gcp_mig",
        "name": "cpu-workers",
        "project": "arklow-dev",
        "zone": "us-central1-a",
    }
    assert migs["video-encoders"]["group"]["region"] == "europe-west1"
    target = mocks.of_type("ScaleTarget")["gpu-workers"]
    assert target["pool"] == "shared-gpu"
    assert target["group"] == {"kind": "aws_asg", "name": "gpu-workers", "region": "us-east-1"}
    assert (target["min_replicas"], target["max_replicas"], target["units_per_replica"]) == (
        1,
        10,
        8,
    )
    reports = mocks.of_type("Destination")["reports"]
    assert reports["standalone_capacity"] == {"gpu": 4}
    assert secret(reports["store"]).endswith(".arklow/arklow.db")  # the SQLite default
    assert mocks.of_type("Pool")["llm-quota"]["capacity"] == 1000


def test_lanes_reach_the_destination_resource() -> None:
    with mocked({"arklow:topology": DEV["arklow:topology"]}) as mocks:
        declared = main()
        settle(declared.destinations["summarize"].lanes)
    lanes = mocks.of_type("Destination")["summarize"]["lanes"]
    assert lanes == [{"name": "default", "limit": 32, "weight": 2, "cost": {"gpu": 2}}]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda t: t["pools"][0]["members"].append("nobody"),
            "pool 'shared-gpu': field 'members': unknown destination 'nobody'",
        ),
        (
            lambda t: t["pools"][0]["scale_targets"][0].update(min_replicas=20),
            "min_replicas (20) is greater than max_replicas (10)",
        ),
        (
            lambda t: t["pools"][0]["scale_targets"][0].pop("region"),
            "scale target 'gpu-workers': field 'region': an AWS Auto Scaling group needs a region",
        ),
        (
            lambda t: t["destinations"][0]["lanes"][0].update(weight=-1),
            "destination 'search', lane 'interactive': field 'weight'",
        ),
        (
            lambda t: t["pools"].append({"name": "x", "resource": "gpu", "members": ["search"]}),
            "destination 'search' is already in pool 'shared-gpu' for resource 'gpu'",
        ),
    ],
)
def test_a_bad_topology_fails_before_anything_is_declared(change: Any, message: str) -> None:
    import copy

    topology = copy.deepcopy(DEV["arklow:topology"])
    change(topology)
    with mocked({"arklow:topology": topology}) as mocks:
        with pytest.raises(pulumi.RunError) as err:
            main()
        assert message in str(err.value)
        assert mocks.resources == []


def test_a_stack_without_a_topology_says_so() -> None:
    with mocked({}), pytest.raises(pulumi.RunError, match="is not set for this stack"):
        main()


def test_declared_store_is_a_secret_and_explicit_store_wins(tmp_path: Path) -> None:
    spec = parse_topology({"destinations": [{"name": "a", "resources": ["gpu"]}]})
    url = "postgresql://arklow:s3cret@127.0.0.1:5432/arklow"
    with mocked() as mocks:
        declared = declare_topology(spec, store=url)
        store = declared.destinations["a"].store
        (value,) = settle(store)
        assert value == url
        assert settle(pulumi.Output.from_input(store.is_secret()))[0] is True
    assert secret(mocks.of_type("Destination")["a"]["store"]) == url


def test_every_resource_passes_its_owner_stack_and_urn() -> None:
    """The provider records who created a row; inside it get_stack() is "stack" and create gets no
    URN, so the program passes both as inputs, the URN formed as the engine forms it."""
    with mocked({"arklow:topology": DEV["arklow:topology"]}) as mocks:
        declared = main()
        settle(*(m.pool for m in declared.memberships.values()))
    recorded = [r for r in mocks.resources if "dynamic/arklow:" in r.typ]
    assert len(recorded) >= 9
    for resource in recorded:
        assert resource.inputs["owner_stack"] == "dev"
        assert resource.inputs["owner_urn"] == (
            f"urn:pulumi:dev::arklow::{resource.typ}::{resource.name}"
        )
    # That the engine gives the resources these very URNs is checked under the real engine
    # (tests/e2e/test_store_identity.py: no orphans after a converged up). The mock monitor
    # qualifies the type with the root stack's, which the engine leaves out.
