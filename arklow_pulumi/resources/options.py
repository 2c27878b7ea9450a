"""What every Arklow resource adds to its inputs and options: the store URL, kept secret.

The URL is resolved in the Pulumi program: the resource's ``store=`` argument, else
``arklow:store`` from stack config, else ``$ARKLOW_STORE``, else ``sqlite:///<dir of
Pulumi.yaml>/.arklow/arklow.db``. It travels as a resource input (so ``delete`` and ``refresh``,
which run the provider code from state, reach the same store) and is always a secret, so a
PostgreSQL password never lands in plain state.

Every resource also passes its owner, ``owner_stack`` and ``owner_urn``: the provider records them
on the rows it creates (see :mod:`arklow_pulumi.store.identity`). They are inputs because the
provider process cannot learn them (its ``pulumi.get_stack()`` is "stack"; the SDK's ``create``
gets no URN). The URN is computed here exactly as the engine forms it, parent included.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pulumi

from arklow_pulumi.resources import registry
from arklow_pulumi.settings import STORE
from arklow_pulumi.store_location import find_project_dir, resolve_store_url


def store_input(explicit: pulumi.Input[str] | None) -> pulumi.Output[str]:
    if explicit is not None:
        return pulumi.Output.secret(explicit)
    configured = pulumi.Config("arklow").get_secret(STORE.short)
    if configured is not None:
        return configured
    return pulumi.Output.secret(resolve_store_url(project_dir=_project_dir()))


def owner_inputs(
    kind: str, resource_name: str, opts: pulumi.ResourceOptions | None
) -> dict[str, Any]:
    """``owner_stack`` and ``owner_urn`` of the Arklow resource ``kind`` named ``resource_name``."""
    parent = opts.parent if opts is not None else None
    urn = pulumi.create_urn(resource_name, f"pulumi-python:dynamic/arklow:{kind}", parent)
    return {"owner_stack": pulumi.get_stack(), "owner_urn": urn}


def _project_dir() -> Path:
    try:
        root = pulumi.get_root_directory()
    except Exception:  # not running under the engine (unit tests with mocks)
        root = ""
    return Path(root) if root else find_project_dir()


def options(
    opts: pulumi.ResourceOptions | None, depends_on: Sequence[pulumi.Resource] = ()
) -> pulumi.ResourceOptions:
    ours = pulumi.ResourceOptions(additional_secret_outputs=["store"], depends_on=list(depends_on))
    return pulumi.ResourceOptions.merge(opts, ours)


def reference(
    value: Any, attribute: str = "arklow_name", kind: str = "pool"
) -> tuple[Any, list[pulumi.Resource]]:
    """A name given as a string, an Output, or the resource itself (then also a dependency).

    A plain name of a resource declared earlier in the same program is a dependency too: a pool
    name its ``Pool`` (``<d>/<r>``, a standalone pool, the ``Destination`` ``d``), a destination
    name its ``Destination``. Without it the engine could create the reference before the
    object it names, or delete them in the wrong order."""
    if isinstance(value, pulumi.CustomResource):
        return getattr(value, attribute), [value]
    name = registry.plain(value)
    if name is None:
        return value, []
    if kind == "destination":
        entry = registry.named("Destination", name)
        return value, [entry.resource] if entry is not None else []
    return value, registry.dependencies([name])
