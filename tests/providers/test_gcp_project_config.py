"""``arklow:gcpProject`` in provider config reaches the GCP binding the provider builds: a group
reference naming no project is looked up in that project (``configure`` once dropped the key).

The topology rules require a project on every GCP group a resource declares, so the configured
project is the binding's fallback, seen here through the binding the provider's calls use."""

from __future__ import annotations

import pytest
from pulumi.dynamic import ConfigureRequest
from pulumi.dynamic.config import Config

from arklow_pulumi.core.topology import GroupRef
from arklow_pulumi.devservers.compute import ComputeServer
from arklow_pulumi.providers import scale_targets
from arklow_pulumi.providers.scale_targets import ScaleTargetProvider
from arklow_pulumi.supply.selecting import EndpointConfig

PROJECT, ZONE = "configured-project", "us-central1-a"


@pytest.fixture
def compute(compute_server: ComputeServer, monkeypatch: pytest.MonkeyPatch) -> ComputeServer:
    compute_server.reset()
    for name in ("ARKLOW_GCP_COMPUTE_ENDPOINT", "GOOGLE_CLOUD_PROJECT", "CLOUDSDK_CORE_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    return compute_server


def configured(compute: ComputeServer) -> ScaleTargetProvider:
    provider = ScaleTargetProvider()
    raw = {"arklow:gcpProject": PROJECT, "arklow:gcpComputeEndpoint": compute.url}
    provider.configure(ConfigureRequest(Config(raw, "arklow")))
    return provider


def test_configured_project_reaches_the_providers_binding(compute: ComputeServer) -> None:
    compute.add_group({"project": PROJECT, "zone": ZONE, "name": "mig-a", "targetSize": 3})
    provider = configured(compute)
    binding = scale_targets._supply("gcp_mig", EndpointConfig.from_provider_config(provider.config))
    state = binding.describe([GroupRef("gcp_mig", "mig-a", zone=ZONE)])
    assert [s.desired for s in state.values() if s is not None] == [3]


def test_a_project_in_the_group_still_wins(compute: ComputeServer) -> None:
    compute.add_group({"project": "other", "zone": ZONE, "name": "mig-b", "targetSize": 2})
    provider = configured(compute)
    binding = scale_targets._supply("gcp_mig", EndpointConfig.from_provider_config(provider.config))
    state = binding.describe([GroupRef("gcp_mig", "mig-b", zone=ZONE, project="other")])
    assert [s.desired for s in state.values() if s is not None] == [2]
