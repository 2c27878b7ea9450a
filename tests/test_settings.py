"""Every setting the package reads is declared in :mod:`arklow_pulumi.settings`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from arklow_pulumi import settings
from arklow_pulumi.providers.storing import CONFIG_KEYS as PROVIDER_KEPT
from arklow_pulumi.supply.selecting import EndpointConfig

PACKAGE = Path(settings.__file__).parent
ENV_NAME = re.compile(r"\bARKLOW_[A-Z0-9_]*[A-Z0-9]\b")
CONFIG_KEY = re.compile(r"\barklow:[a-z][A-Za-z]*\b")


def _found(pattern: re.Pattern[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for name in pattern.findall(path.read_text(encoding="utf-8")):
            found.setdefault(name, str(path.relative_to(PACKAGE)))
    return found


def test_every_arklow_environment_variable_is_declared() -> None:
    declared = {var.name for var in settings.ENVIRONMENT}
    found = _found(ENV_NAME)
    assert "ARKLOW_STORE" in found  # the scan sees the package
    assert {name: where for name, where in found.items() if name not in declared} == {}


def test_every_arklow_config_key_is_declared() -> None:
    declared = {key.key for key in settings.CONFIG_KEYS}
    found = _found(CONFIG_KEY)
    assert "arklow:gcpProject" in found
    assert {name: where for name, where in found.items() if name not in declared} == {}


def test_providers_keep_every_key_the_supply_selection_reads() -> None:
    assert set(PROVIDER_KEPT) == {key.key for key in settings.PROVIDER_CONFIG_KEYS}
    assert "arklow:gcpProject" in PROVIDER_KEPT


@pytest.mark.parametrize(
    ("config", "env", "project"),
    [
        (
            {"arklow:gcpProject": "cfg"},
            {"GOOGLE_CLOUD_PROJECT": "g", "CLOUDSDK_CORE_PROJECT": "c"},
            "cfg",
        ),
        ({"gcpProject": "short"}, {"GOOGLE_CLOUD_PROJECT": "g"}, "short"),
        (
            {"arklow:gcpProject": ""},
            {"GOOGLE_CLOUD_PROJECT": "g", "CLOUDSDK_CORE_PROJECT": "c"},
            "g",
        ),
        ({}, {"GOOGLE_CLOUD_PROJECT": " ", "CLOUDSDK_CORE_PROJECT": "c"}, "c"),
        ({}, {}, None),
    ],
)
def test_gcp_project_precedence(
    config: dict[str, str], env: dict[str, str], project: str | None
) -> None:
    assert EndpointConfig.from_provider_config(config, env).gcp_project == project


def test_compute_endpoint_precedence() -> None:
    env = {"ARKLOW_GCP_COMPUTE_ENDPOINT": "http://env"}
    assert EndpointConfig.from_provider_config({}, env).gcp_compute_endpoint == "http://env"
    cfg = {"arklow:gcpComputeEndpoint": "http://cfg"}
    assert EndpointConfig.from_provider_config(cfg, env).gcp_compute_endpoint == "http://cfg"
    assert EndpointConfig.from_provider_config({}, {}).gcp_compute_endpoint is None
