"""The stored form of a published tick as a plain document: the reference
:func:`arklow_pulumi.controller.tick.documents.published_json` writes as text directly (the package
never builds this dictionary: the tick writes the text)."""

from __future__ import annotations

from typing import Any

from arklow_pulumi.controller.ports import Published
from arklow_pulumi.controller.tick.documents import _packed, pool_view_document


def published_document(published: Published) -> dict[str, Any]:
    return {
        "tick": published.tick,
        "time": published.time.isoformat(),
        "lane_keys": list(published.lanes),
        "lane_numbers": _packed(published.lanes),
        "pools": {name: pool_view_document(pool) for name, pool in published.pools.items()},
    }
