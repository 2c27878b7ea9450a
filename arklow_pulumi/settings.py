"""Every setting Arklow reads from outside its arguments: ``arklow:*`` Pulumi config keys and
environment variables, with their precedence. Standard library only (the Pulumi program and the
provider processes import it; they must stay fast to start).

Precedence, where a setting has more than one source (first non-empty wins):

- store URL, program and ``create``/``update``: the resource's ``store=`` argument >
  ``arklow:store`` > ``$ARKLOW_STORE`` > ``.arklow/arklow.db`` beside ``Pulumi.yaml``;
  ``read``/``delete`` (inputs from state, perhaps with a rotated password): ``arklow:store`` >
  ``$ARKLOW_STORE`` > the URL in state > the default file. The CLI: ``--store`` > ``$ARKLOW_STORE``
  > the default file.
- Compute API endpoint: ``arklow:gcpComputeEndpoint`` > ``$ARKLOW_GCP_COMPUTE_ENDPOINT`` > the real
  API. GCP project of a group that names none: ``arklow:gcpProject`` > ``$GOOGLE_CLOUD_PROJECT``
  > ``$CLOUDSDK_CORE_PROJECT``.
- AWS endpoint: ``arklow:awsEndpoint``, else boto3 reads ``$AWS_ENDPOINT_URL`` (and
  ``$AWS_ENDPOINT_URL_AUTO_SCALING``) itself; region: ``arklow:awsRegion``, else boto3's own chain.

The provider-config keys (:data:`PROVIDER_CONFIG_KEYS`) are the ones a provider keeps from
``configure``: all of them, so a key read by the supply selection is never dropped on the way.
A test checks that every ``ARKLOW_*`` name and ``arklow:*`` key in the package is declared here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "AWS_ENDPOINT",
    "AWS_ENDPOINT_ENVS",
    "AWS_REGION",
    "CLOCK_OFFSET_ENV",
    "CONFIG_KEYS",
    "DEBUG_ENV",
    "DEV_CLOUDS",
    "ENVIRONMENT",
    "FAULT_POINT_ENV",
    "GCP_COMPUTE_ENDPOINT",
    "GCP_COMPUTE_ENDPOINT_ENV",
    "GCP_PROJECT",
    "GCP_PROJECT_ENVS",
    "PROVIDER_CONFIG_KEYS",
    "PULUMI_CONFIG_ENV",
    "STORE",
    "STORE_ENV",
    "TOPOLOGY",
    "ConfigKey",
    "EnvVar",
    "first_env",
]


@dataclass(frozen=True, slots=True)
class ConfigKey:
    """One ``arklow:*`` key of stack or provider config."""

    key: str
    meaning: str

    @property
    def short(self) -> str:
        """The key without its namespace (``store`` for ``arklow:store``)."""
        return self.key.split(":", 1)[1]

    def get(self, config: Mapping[str, object]) -> str | None:
        """The value in ``config`` (key namespaced or not) as a string; None when unset or empty."""
        value = config.get(self.key, config.get(self.short))
        return str(value) if value not in (None, "") else None


@dataclass(frozen=True, slots=True)
class EnvVar:
    """One environment variable Arklow reads (or hands to a child process)."""

    name: str
    meaning: str

    def get(self, env: Mapping[str, str] | None = None) -> str | None:
        """The variable's value, stripped; None when unset or blank."""
        value = (os.environ if env is None else env).get(self.name, "").strip()
        return value or None


# -- Pulumi config --------------------------------------------------------------------------

TOPOLOGY = ConfigKey("arklow:topology", "the topology document the root program declares")
DEV_CLOUDS = ConfigKey("arklow:devClouds", "dev clouds: {autoscaled: [<target name>, ...]}")
STORE = ConfigKey("arklow:store", "the topology store URL (a secret when it holds a password)")
AWS_ENDPOINT = ConfigKey("arklow:awsEndpoint", "the AWS endpoint URL (a test server)")
AWS_REGION = ConfigKey("arklow:awsRegion", "the AWS region of the Auto Scaling groups")
GCP_COMPUTE_ENDPOINT = ConfigKey("arklow:gcpComputeEndpoint", "the Compute API endpoint")
GCP_PROJECT = ConfigKey("arklow:gcpProject", "the GCP project of a group that names none")

PROVIDER_CONFIG_KEYS = (STORE, AWS_ENDPOINT, AWS_REGION, GCP_COMPUTE_ENDPOINT, GCP_PROJECT)
CONFIG_KEYS = (TOPOLOGY, DEV_CLOUDS, *PROVIDER_CONFIG_KEYS)

# -- environment ----------------------------------------------------------------------------

STORE_ENV = EnvVar("ARKLOW_STORE", "the topology store URL")
GCP_COMPUTE_ENDPOINT_ENV = EnvVar("ARKLOW_GCP_COMPUTE_ENDPOINT", "the Compute API endpoint")
DEBUG_ENV = EnvVar("ARKLOW_DEBUG", "non-empty: show an unexpected error's traceback")
FAULT_POINT_ENV = EnvVar("ARKLOW_FAULT_POINT", "test only: where the controller kills itself")
CLOCK_OFFSET_ENV = EnvVar("ARKLOW_CLOCK_OFFSET_S", "test only: a controller replica's clock skew")
GCP_PROJECT_ENVS = (
    EnvVar("GOOGLE_CLOUD_PROJECT", "the default GCP project"),
    EnvVar("CLOUDSDK_CORE_PROJECT", "gcloud's default project override"),
)
AWS_ENDPOINT_ENVS = (
    EnvVar("AWS_ENDPOINT_URL", "read by boto3 itself: every AWS service's endpoint"),
    EnvVar("AWS_ENDPOINT_URL_AUTO_SCALING", "read by boto3 itself: the Auto Scaling endpoint"),
)
PULUMI_CONFIG_ENV = EnvVar("PULUMI_CONFIG", "set by the engine: the stack config (policy pack)")

ENVIRONMENT = (
    STORE_ENV,
    GCP_COMPUTE_ENDPOINT_ENV,
    DEBUG_ENV,
    FAULT_POINT_ENV,
    CLOCK_OFFSET_ENV,
    *GCP_PROJECT_ENVS,
    *AWS_ENDPOINT_ENVS,
    PULUMI_CONFIG_ENV,
)


def first_env(names: tuple[EnvVar, ...], env: Mapping[str, str] | None = None) -> str | None:
    """The first of ``names`` set (non-blank) in ``env`` (default: the process environment)."""
    for name in names:
        value = name.get(env)
        if value:
            return value
    return None
