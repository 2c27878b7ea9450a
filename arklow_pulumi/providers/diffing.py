"""A pure diff over a provider's input keys: what changed, and whether an identity field did."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi.dynamic import DiffResult

from arklow_pulumi.providers.inputs import is_unknown


def canonical(value: Any) -> Any:
    """Compare numbers by value (the engine sends floats) and mappings regardless of order; an
    empty mapping (or one holding only None) is the same as no mapping (a lane's ``cost={}``)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, Mapping):
        found = {k: canonical(v) for k, v in value.items() if v is not None}
        return found or None
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    return value


def diff_inputs(
    olds: Mapping[str, Any],
    news: Mapping[str, Any],
    keys: Sequence[str],
    identity: Sequence[str],
    *,
    same_name_key: str | None = "arklow_name",
) -> DiffResult:
    """``olds`` are the stored outputs (which echo the inputs).

    ``store`` is never an identity field: pointing a stack at a new URL (a rotated password) must
    not replace every object. But a known new ``store`` that differs from the stored one is a
    change, so ``up`` runs ``update``, which writes the new URL into the outputs; otherwise
    refresh and destroy would keep using the old URL (and password) from state forever.
    """
    changed = [
        key
        for key in keys
        if is_unknown(news.get(key)) or canonical(olds.get(key)) != canonical(news.get(key))
    ]
    replaces = [key for key in changed if key in identity]
    keeps_name = same_name_key is not None and same_name_key not in replaces
    return DiffResult(
        changes=bool(changed) or store_changed(olds, news) or owner_changed(olds, news),
        replaces=replaces,
        # The same Arklow name cannot exist twice, so a replacement that keeps it deletes first.
        delete_before_replace=bool(replaces) and keeps_name,
    )


def owner_changed(olds: Mapping[str, Any], news: Mapping[str, Any]) -> bool:
    """A known new owner (stack, URN) that is not the stored one: an update records it on the
    row (a stack's first ``up`` after schema 0002; a resource renamed with an alias)."""
    return any(
        isinstance(news.get(key), str) and not is_unknown(news[key]) and news[key] != olds.get(key)
        for key in ("owner_stack", "owner_urn")
    )


def store_changed(olds: Mapping[str, Any], news: Mapping[str, Any]) -> bool:
    """The new ``store`` is known and is not the stored one."""
    new = news.get("store")
    return isinstance(new, str) and not is_unknown(new) and new != olds.get("store")
