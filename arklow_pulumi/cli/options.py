"""Options that several commands take, declared once."""

from __future__ import annotations

from typing import Any

import click

STORE_HELP = "Store URL (default: $ARKLOW_STORE, else .arklow/arklow.db beside Pulumi.yaml)."


def store_option(command: Any) -> Any:
    """``--store URL`` (``store_url``), resolved by the command
    (:func:`arklow_pulumi.store_location.resolve_store_url`)."""
    return click.option("--store", "store_url", default=None, help=STORE_HELP)(command)
