"""``arklow store upgrade``: create a missing store, or migrate one to this arklow's schema.

The only command that creates or migrates a store on purpose (the Pulumi providers do it as they
write); read commands such as ``arklow topology show`` refuse a missing or old store and name
this command. It prints one JSON object: the store (password hidden), the revision before and
after, and whether anything changed.
"""

from __future__ import annotations

import json

import click

from arklow_pulumi.cli.options import store_option


@click.group()
def store() -> None:
    """Manage the topology store itself."""


@store.command()
@store_option
def upgrade(store_url: str | None) -> None:
    """Create the store if it is missing and migrate it to the newest schema."""
    from arklow_pulumi.store import engine
    from arklow_pulumi.store_location import resolve_store_url

    url = resolve_store_url(store_url)
    before = engine.peek_revision(url)
    opened = engine.open_store(url)
    after = engine.schema_revision(opened)
    document = {
        "store": opened.display_url,
        "previous_revision": before,
        "revision": after,
        "changed": before != after,
    }
    click.echo(json.dumps(document))
