"""The Compute API test server's list answers: one page of ``<kind>s.list`` or of
``<kind>s.aggregatedList``, paged by ``maxResults`` and ``pageToken`` as the real API pages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

PREFIX = "/compute/v1/projects/"
MAX_RESULTS = 500


def one(query: dict[str, list[str]], key: str) -> str | None:
    values = query.get(key)
    return values[0] if values else None


def _page(items: list[Any], query: dict[str, list[str]]) -> tuple[list[Any], str | None]:
    size = min(int(one(query, "maxResults") or MAX_RESULTS), MAX_RESULTS) or MAX_RESULTS
    start = int(one(query, "pageToken") or 0)
    end = start + size
    return items[start:end], (str(end) if end < len(items) else None)


def _with_token(out: dict[str, Any], token: str | None) -> dict[str, Any]:
    if token:
        out["nextPageToken"] = token
    return out


def listed(
    kind: str,
    project: str,
    scope: str | None,
    objects: dict[tuple[str, str, str], Any],
    q: dict[str, list[str]],
    render: Callable[[Any], dict[str, Any]],
) -> Any:
    """One page of a ``<kind>s.list`` answer (the project's objects in ``scope``, by name), or,
    without a scope, of ``<kind>s.aggregatedList`` (all its objects, grouped by scope)."""
    found = [o for (pr, s, _), o in sorted(objects.items()) if pr == project and scope in (None, s)]
    page, token = _page(found, q)
    if scope is None:
        items: Any = {}
        for o in page:
            items.setdefault(o.scope, {f"{kind}s": []})[f"{kind}s"].append(render(o))
        where, list_kind = "aggregated", f"{kind}AggregatedList"
    else:
        items, where, list_kind = [render(o) for o in page], scope, f"{kind}List"
    out = {
        "kind": f"compute#{list_kind}",
        "id": f"projects/{project}/{where}/{kind}s",
        "items": items,
        "selfLink": f"{PREFIX}{project}/{where}/{kind}s",
    }
    return _with_token(out, token)
