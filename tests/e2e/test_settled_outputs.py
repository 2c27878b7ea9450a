"""Stack outputs equal the store after every ``pulumi up`` and after a refresh, under the real
engine (file backend, SQLite store): ``examples/shared_gpu_pool`` exports its pool's members and
each destination's pools, which the memberships of the same update change (a first ``up`` once
exported ``members: []``); the root program exports every destination's pools and every pool's
members. Changes made in the store out of band come back on refresh: each resource's outputs in
state with plain ``pulumi refresh``, the stack's exports with ``--run-program`` (plain refresh
does not run the program, so it keeps the exports).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.pulumi_cli import REPO, Stack, short_type, write_project
from tests.e2e.test_pulumi_e2e import dev_topology, with_store

pytestmark = pytest.mark.e2e

EXAMPLE = REPO / "examples" / "shared_gpu_pool" / "__main__.py"


def truth(stack: Stack) -> tuple[dict[str, Any], dict[str, Any]]:
    """What the store holds: ``{destination: {resource: pool}}`` and ``{pool: members}``."""
    shown = stack.topology()
    destinations = {name: d["pools"] for name, d in shown["destinations"].items()}
    pools = {name: sorted(p["members"]) for name, p in shown["pools"].items()}
    return destinations, pools


def example_outputs_are_true(stack: Stack) -> None:
    destinations, pools = truth(stack)
    outputs = stack.outputs()
    assert sorted(outputs["members"]) == pools["shared-gpu"]
    assert outputs["pools"] == destinations


def state_outputs_are_true(stack: Stack) -> None:
    """Every resource's outputs in state hold what the store holds (after a refresh)."""
    destinations, pools = truth(stack)
    shown = stack.topology()
    for resource in stack.resources():
        kind, outs = short_type(resource["type"]), resource["outputs"]
        if kind == "Pool":
            name = outs["arklow_name"]
            assert sorted(outs["members"]) == pools[name], name
            assert outs["capacity"] == shown["pools"][name]["capacity"], name
            assert outs["standalone"] == shown["pools"][name]["standalone"], name
        elif kind == "Destination":
            assert outs["pools"] == destinations[outs["arklow_name"]], outs["arklow_name"]
        elif kind == "PoolMembership":
            assert destinations[outs["destination"]][outs["resource"]] == outs["pool"]


def leave(destination: str, pool: str) -> Callable[[Any], None]:
    from arklow_pulumi.store import service

    return lambda store: service.leave(store, destination, pool)


def shrink(pool_name: str, capacity: float) -> Callable[[Any], None]:
    from dataclasses import replace

    from arklow_pulumi.store import service

    def change(store: Any) -> None:
        view = service.get_pool(store, pool_name)
        assert view is not None
        service.update_pool(store, replace(view.pool, capacity=capacity))

    return change


def test_example_exports_the_store_after_every_up_and_refresh(
    tmp_path: Path, aws_env: dict[str, str]
) -> None:
    source = EXAMPLE.read_text()
    project = write_project(tmp_path / "project", main_source=source, name="shared-gpu-pool")
    stack = Stack(project, tmp_path, name="example", env=aws_env).init()

    preview = stack.preview()
    assert preview["changeSummary"] == {"create": 8}
    assert not stack.default_store_path.exists(), "the preview created the store"

    # the first up: the memberships created after the pool are in its exported members
    stack.up()
    assert sorted(stack.outputs()["members"]) == ["embeddings", "search", "summarize"]
    example_outputs_are_true(stack)
    # nothing changes, and the preview shows no change of the exports either
    again = stack.run("preview", *stack.select_args(), "--diff").stdout
    assert "--outputs:--" not in again, again

    # out of band: search leaves the pool, the pool shrinks
    with_store(stack, leave("search", "shared-gpu"))
    with_store(stack, shrink("shared-gpu", 40))
    assert truth(stack)[0]["search"] == {"gpu": "search/gpu"}

    stack.refresh()  # each resource's outputs come back to the store
    state_outputs_are_true(stack)
    assert "shared-gpu:search" not in [r["urn"].rsplit("::", 1)[1] for r in stack.resources()]

    stack.refresh("--run-program")  # and the exports, which the program computes
    assert sorted(stack.outputs()["members"]) == ["embeddings", "summarize"]
    example_outputs_are_true(stack)

    # the next up puts the declared topology back; the exports follow
    stack.up()
    assert sorted(stack.outputs()["members"]) == ["embeddings", "search", "summarize"]
    example_outputs_are_true(stack)

    # a membership the program no longer declares: its delete runs after the program has
    # exported, so the exports anticipate it
    without = source.replace(
        "for name, d in destinations.items()\n]",
        'for name, d in destinations.items()\n    if name != "embeddings"\n]',
    )
    assert without != source
    (project / "__main__.py").write_text(without)
    stack.up()
    assert sorted(stack.outputs()["members"]) == ["search", "summarize"]
    assert stack.outputs()["pools"]["embeddings"]["gpu"] == "embeddings/gpu"
    example_outputs_are_true(stack)

    stack.destroy()
    assert stack.resources() == []


def test_root_program_exports_the_store(make_stack: Callable[..., Stack]) -> None:
    stack = make_stack(dev_topology())
    stack.up()
    destinations, pools = truth(stack)
    outputs = stack.outputs()
    assert outputs["destinations"] == destinations
    assert {name: sorted(m) for name, m in outputs["pools"].items()} == pools

    # out of band: reports joins the shared GPU pool
    from arklow_pulumi.store import service

    with_store(stack, lambda store: service.join(store, "reports", "shared-gpu"))
    stack.refresh("--run-program")
    destinations, pools = truth(stack)
    assert destinations["reports"] == {"gpu": "shared-gpu"}
    outputs = stack.outputs()
    assert outputs["destinations"] == destinations
    assert {name: sorted(m) for name, m in outputs["pools"].items()} == pools
    state_outputs_are_true(stack)
    stack.destroy()
