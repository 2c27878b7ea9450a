"""Policy pack ``arklow-capacity``: what the proposed topology would have done to recent work.

One stack policy, ``capacity-what-if``: the *after* topology is the stack's ``arklow:topology``
config (what this preview declares), the *before* is what the store holds, the trace is the
store's demand history of the last ``since`` (default 7d) or the CSV at ``trace``. Each lane
whose held share grows by more than ``threshold`` is one violation naming the lane and its share
before and after. Advisory by default; mandatory with a policy config file::

    {"capacity-what-if": {"enforcementLevel": "mandatory", "threshold": 0.02}}

passed as ``pulumi preview --policy-pack policy --policy-pack-config that.json``. The store is
``arklow:store`` config, else ``$ARKLOW_STORE``, else ``.arklow/arklow.db`` beside Pulumi.yaml.
Nothing to compare (no store yet, no demand history) is one advisory note, not a failure.
"""

from __future__ import annotations

import io
import sys
from typing import Any

from arklow_pulumi.extras import MissingExtra, require

try:
    require("policy", "the policy pack (pulumi preview --policy-pack policy)")
except MissingExtra as missing:
    print(f"error: {missing}", file=sys.stderr)
    raise SystemExit(2) from None

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    PolicyPack,
    ReportViolation,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy import policy as _policy

from arklow_pulumi.simulation.reviewing import NothingToCompare, decode_config, review_stack

POLICY = "capacity-what-if"
# The stack config comes in the engine's ConfigureStack call, which pulumi-policy (1.21) reads
# only for tags: keep the config too (the analyzer's environment has no PULUMI_CONFIG).
_stack_config: dict[str, object] = {}
_configure_stack = _policy._PolicyAnalyzerServicer.ConfigureStack


def _keep_config(self: Any, request: Any, context: Any) -> Any:
    _stack_config.clear()
    _stack_config.update(decode_config(dict(request.config)))
    return _configure_stack(self, request, context)


_policy._PolicyAnalyzerServicer.ConfigureStack = _keep_config  # type: ignore[method-assign,assignment]


def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    try:
        messages = review_stack(dict(args.get_config()), _stack_config or None)
    except NothingToCompare as exc:
        args.not_applicable(f"capacity what-if not computed: {exc}")
        return
    for message in messages:
        report_violation(message, None)


# The engine reads the pack's port from its stdout, a pipe, and waits for it: pulumi-policy writes
# it to sys.stdout.buffer and never flushes, so without PYTHONUNBUFFERED in the environment the
# port stayed in the buffer and the preview waited for ever (tests/packaging/test_ci_workflow.py
# runs without it). Unbuffered here, as PYTHONUNBUFFERED would make it.
sys.stdout = io.TextIOWrapper(
    io.FileIO(sys.stdout.fileno(), "w", closefd=False), write_through=True, line_buffering=True
)
PolicyPack(
    name="arklow-capacity",
    enforcement_level=EnforcementLevel.ADVISORY,
    policies=[
        StackValidationPolicy(
            name=POLICY,
            description="Lanes the proposed topology would starve, replayed on recent demand.",
            validate=validate,
            config_schema=PolicyConfigSchema(
                properties={
                    "threshold": {"type": "number", "minimum": 0, "maximum": 1},
                    "trace": {"type": "string"},
                    "since": {"type": "string"},
                    "tick": {"type": "number", "exclusiveMinimum": 0},
                    "launchDelay": {"type": "number", "minimum": 0},
                }
            ),
        )
    ],
)
