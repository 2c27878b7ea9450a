"""The capacity what-if as a review of a Pulumi preview (the ``policy/`` pack's logic).

The proposed topology is the stack config the engine hands the pack (``PULUMI_CONFIG``, keys
``arklow:topology`` and ``arklow:store``); the rest is :mod:`.stacks`. The result is one message per
flagged lane, naming the lane and its held share before and after. When there is nothing to
compare (no store yet, no demand history, a topology the program itself will reject) the review
raises :class:`NothingToCompare` with the reason, which the pack reports as "not applicable".
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from arklow_pulumi.core.errors import ArklowError
from arklow_pulumi.simulation.describing import describe_change
from arklow_pulumi.simulation.simulate import DEFAULT_LAUNCH_DELAY, DEFAULT_TICK
from arklow_pulumi.simulation.stacks import (
    DEFAULT_HISTORY,
    STORE_KEY,
    TOPOLOGY_KEY,
    carry_replicas,
    history_trace,
    store_topology,
    topology_from_config,
)
from arklow_pulumi.simulation.tracing import read_trace
from arklow_pulumi.simulation.whatif import DEFAULT_THRESHOLD, WhatIf, what_if
from arklow_pulumi.store_location import find_project_dir, resolve_store_url

CONFIG_ENV = "PULUMI_CONFIG"


class NothingToCompare(Exception):
    """The what-if cannot be computed for this preview; the message says why (one line)."""


def engine_config() -> dict[str, object]:
    """The stack config the engine passes programs in ``PULUMI_CONFIG`` (a pack is usually given
    it through ``ConfigureStack`` instead: see :func:`decode_config`)."""
    return decode_config(json.loads(os.environ.get(CONFIG_ENV) or "{}"))


def decode_config(raw: Mapping[str, object]) -> dict[str, object]:
    """``{"ns:key": text}`` as the engine sends config, object values decoded from JSON text."""
    out: dict[str, object] = {}
    for key, value in raw.items():
        try:
            out[key] = json.loads(value) if isinstance(value, str) else value
        except json.JSONDecodeError:
            out[key] = value
    return out


def flag_messages(result: WhatIf, threshold: float, change: str) -> list[str]:
    messages = []
    for key in result.flagged:
        d = result.lanes[key]
        messages.append(
            f"lane {key}: held share {d.share_before or 0.0:.2%} -> {d.share_after or 0.0:.2%} "
            f"of its demand over the trace (grows by more than {threshold:.2%}); change: {change}"
        )
    return messages


def review_stack(
    policy_config: Mapping[str, object], stack_config: Mapping[str, object] | None = None
) -> list[str]:
    """Messages for the lanes the proposed topology would starve (empty: none)."""
    config = engine_config() if stack_config is None else stack_config
    threshold = _number(policy_config, "threshold", DEFAULT_THRESHOLD)
    tick = _number(policy_config, "tick", DEFAULT_TICK)
    delay = _number(policy_config, "launchDelay", DEFAULT_LAUNCH_DELAY)
    project_dir = find_project_dir()
    configured = config.get(STORE_KEY)
    url = resolve_store_url(None, configured if isinstance(configured, str) else None, project_dir)
    try:
        proposed = topology_from_config(config.get(TOPOLOGY_KEY), "stack config")
        before = store_topology(url)
        after = carry_replicas(before, proposed)
        known = {**before.lanes_by_key, **after.lanes_by_key}
        trace_path = policy_config.get("trace")
        if isinstance(trace_path, str):
            trace = read_trace(project_dir / Path(trace_path), known)
        else:
            since = policy_config.get("since")
            window = DEFAULT_HISTORY
            if isinstance(since, str):
                from arklow_pulumi.simulation.tracing import parse_duration

                window = parse_duration(since)
            trace = history_trace(url, known, window)
    except ArklowError as exc:
        raise NothingToCompare(str(exc)) from exc
    result = what_if(before, after, trace, tick, delay, threshold)
    return flag_messages(result, threshold, describe_change(before, after))


def _number(config: Mapping[str, object], key: str, default: float) -> float:
    value = config.get(key, default)
    return float(value) if isinstance(value, int | float) else default


def run_project_policy_pack() -> None:
    """Serve ``policy/`` of the project in this directory (the root program's ``__main__.py``
    calls this when the engine's old Python host starts a policy pack as the program)."""
    import runpy

    runpy.run_path(str(find_project_dir() / "policy"), run_name="__main__")
