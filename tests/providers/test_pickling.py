"""Every provider survives Pulumi's own serialization (dill) and loads in a fresh process,
where it is configured and used, as the engine's dynamic-provider host does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pulumi.dynamic.dynamic import serialize_provider

from arklow_pulumi.providers.destinations import DestinationProvider
from arklow_pulumi.providers.memberships import PoolMembershipProvider
from arklow_pulumi.providers.pools import PoolProvider
from arklow_pulumi.providers.scale_targets import ScaleTargetProvider

PROVIDERS = [DestinationProvider, PoolProvider, PoolMembershipProvider, ScaleTargetProvider]

LOADER = """
import base64, sys, dill
from pulumi.dynamic import ConfigureRequest
from pulumi.dynamic.config import Config
provider = dill.loads(base64.b64decode(sys.stdin.read()))
provider.configure(ConfigureRequest(Config({"arklow:store": sys.argv[1]}, "arklow")))
print(type(provider).__module__ + "." + type(provider).__name__)
if type(provider).__name__ == "PoolProvider":
    created = provider.create({"arklow_name": "p", "resource": "gpu", "capacity": 2.0})
    print(provider.read(created.id, {"arklow_name": "p"}).outs["capacity"])
"""


@pytest.mark.parametrize("provider_class", PROVIDERS)
def test_provider_round_trips_through_dill_in_a_fresh_process(
    provider_class: type, tmp_path: Path, sqlite_url: str
) -> None:
    provider = provider_class()
    if provider_class is PoolProvider:  # a provider that has worked still pickles: no live state
        provider.create({"arklow_name": "warm", "resource": "gpu", "store": sqlite_url})
    serialized = serialize_provider(provider)
    done = subprocess.run(
        [sys.executable, "-c", LOADER, sqlite_url],
        input=serialized,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split("\n")
    assert lines[0] == f"{provider_class.__module__}.{provider_class.__name__}"
    if provider_class is PoolProvider:
        assert lines[1] == "2.0"


def test_providers_pickle_by_reference() -> None:
    """The class is referenced by module, not copied: loading re-imports a side-effect-free module."""
    import base64

    for provider_class in PROVIDERS:
        raw = base64.b64decode(serialize_provider(provider_class()))
        assert provider_class.__module__.encode() in raw
        assert len(raw) < 2000
