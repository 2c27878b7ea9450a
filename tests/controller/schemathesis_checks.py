"""The schemathesis check that knows what the API document cannot say (loaded by
``test_openapi_schemathesis.py`` through ``SCHEMATHESIS_HOOKS``).

A demand batch the schema allows may still name a lane that is not in the topology: the intake
refuses it 422 ("... is not in the topology"), and the topology is no part of the document (it
changes with every ``pulumi up`` and is not for everyone to read). ``schemathesis.toml`` lets
``positive_data_acceptance`` take a 422 on ``POST /v1/demand``; this check takes it back for
every other reason, so a report the schema allows and the intake's shape check refuses is still
a finding.
"""

from __future__ import annotations

from typing import Any

import schemathesis

TOPOLOGY_REFUSAL = "is not in the topology"


@schemathesis.check
def demand_refused_only_for_the_topology(ctx: Any, response: Any, case: Any) -> None:
    if (case.method, case.operation.path) != ("POST", "/v1/demand"):
        return
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or response.status_code != 422:
        return
    error = str(response.json().get("error", ""))
    if TOPOLOGY_REFUSAL not in error:
        raise AssertionError(f"a batch the schema allows was refused: {error}")
