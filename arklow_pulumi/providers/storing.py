"""The base of every Arklow provider: configuration, and the store a resource lives in.

The store URL: the resource's ``store`` input (resolved in the Pulumi program from its
``store=`` argument, ``arklow:store`` config, ``$ARKLOW_STORE`` or the default SQLite file beside
``Pulumi.yaml``, and kept as a secret), else ``arklow:store`` from provider config, else
``$ARKLOW_STORE``, else the default beside the provider process's working directory.
"""

from __future__ import annotations

from typing import Any

from pulumi.dynamic import ConfigureRequest, ReadResult, ResourceProvider

from arklow_pulumi.store.engine import Store, open_store, resolve_store_url

CONFIG_KEYS = (
    "arklow:store",
    "arklow:awsEndpoint",
    "arklow:awsRegion",
    "arklow:gcpComputeEndpoint",
)


class StoreProvider(ResourceProvider):
    """Holds provider config as plain strings; never a client, engine or connection."""

    config: dict[str, str]

    def __init__(self) -> None:
        super().__init__()
        self.config = {}

    def configure(self, req: ConfigureRequest) -> None:
        found = {key: req.config.get(key) for key in CONFIG_KEYS}
        self.config = {key: str(value) for key, value in found.items() if value not in (None, "")}

    def store(self, props: dict[str, Any]) -> Store:
        explicit = props.get("store")
        url = resolve_store_url(
            explicit if isinstance(explicit, str) else None, self.config.get("arklow:store")
        )
        return open_store(url)


def gone(id_: str) -> ReadResult:
    """What ``read`` returns for an object deleted outside Pulumi: refresh drops it from state."""
    return ReadResult("", {})


def with_store(outs: dict[str, Any], props: dict[str, Any]) -> dict[str, Any]:
    if props.get("store") is not None:
        outs["store"] = props["store"]
    return outs
