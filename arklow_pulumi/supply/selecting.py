"""Choosing a supply binding and its endpoint, from provider config or the environment.

The keys, variables and their precedence are declared in :mod:`arklow_pulumi.settings`. In
short: the Compute API endpoint is ``arklow:gcpComputeEndpoint`` in provider config, else
``ARKLOW_GCP_COMPUTE_ENDPOINT``, else the real API with default credentials. AWS honours
``arklow:awsEndpoint`` when set; otherwise boto3 itself reads ``AWS_ENDPOINT_URL`` (and
``AWS_ENDPOINT_URL_AUTO_SCALING``) from the environment, exactly as any AWS tool would. The GCP
project used for a group that names none is ``arklow:gcpProject``, else ``GOOGLE_CLOUD_PROJECT``,
else ``CLOUDSDK_CORE_PROJECT`` (gcloud's own override).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from arklow_pulumi import settings
from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.supply.contract import Supply
from arklow_pulumi.supply.retrying import RetryPolicy


@dataclass(frozen=True, slots=True)
class EndpointConfig:
    gcp_compute_endpoint: str | None = None
    aws_endpoint_url: str | None = None
    aws_region: str | None = None
    retry: RetryPolicy | None = None
    gcp_project: str | None = None

    @classmethod
    def from_provider_config(
        cls, config: Mapping[str, object], env: Mapping[str, str] | None = None
    ) -> EndpointConfig:
        """Provider config (``arklow:*`` keys, or the same keys without the prefix) over the env."""
        env = os.environ if env is None else env
        return cls(
            gcp_compute_endpoint=settings.GCP_COMPUTE_ENDPOINT.get(config)
            or settings.GCP_COMPUTE_ENDPOINT_ENV.get(env),
            aws_endpoint_url=settings.AWS_ENDPOINT.get(config),
            aws_region=settings.AWS_REGION.get(config),
            gcp_project=settings.GCP_PROJECT.get(config)
            or settings.first_env(settings.GCP_PROJECT_ENVS, env),
        )

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> EndpointConfig:
        return cls.from_provider_config({}, env)


def supply_for(kind: str, config: EndpointConfig | Mapping[str, object] | None = None) -> Supply:
    """The binding for a target kind (``aws_asg`` or ``gcp_mig``)."""
    if config is None:
        config = EndpointConfig.from_env()
    elif not isinstance(config, EndpointConfig):
        config = EndpointConfig.from_provider_config(config)
    if kind == "aws_asg":
        from arklow_pulumi.supply.aws import AwsAsgSupply

        return AwsAsgSupply(config.aws_region, config.aws_endpoint_url, config.retry)
    if kind == "gcp_mig":
        from arklow_pulumi.supply.gcp import GcpMigSupply

        return GcpMigSupply(config.gcp_compute_endpoint, config.retry, config.gcp_project)
    raise InvalidInput.one("scale target", "kind", f"unknown kind {kind!r} (aws_asg or gcp_mig)")
