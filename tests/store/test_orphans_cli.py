"""``arklow topology orphans`` against a stack state written as ``pulumi stack export`` writes it
(the real-engine runs are in tests/e2e/test_store_identity.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from arklow_pulumi.cli.main import cli
from arklow_pulumi.core.topology import Destination, GroupRef, Lane, Pool, ScaleTarget
from arklow_pulumi.store import Store
from arklow_pulumi.store import service as svc
from arklow_pulumi.store.identity import Claim, Owner, new_create_id
from tests import arklow_cli

TYPE = "pulumi-python:dynamic/arklow:{kind}"


def urn(kind: str, name: str, stack: str = "dev") -> str:
    return f"urn:pulumi:{stack}::arklow::{TYPE.format(kind=kind)}::{name}"


def claim(kind: str, name: str, stack: str = "dev") -> Claim:
    return Claim(new_create_id(), Owner(stack, urn(kind, name, stack)))


def state_file(tmp_path: Path, declared: list[tuple[str, str, Claim]]) -> Path:
    """An export holding the stack resource and ``declared`` (kind, name, claim) resources."""
    resources: list[dict[str, Any]] = [
        {"urn": "urn:pulumi:dev::arklow::pulumi:pulumi:Stack::arklow-dev", "type": "Stack"}
    ]
    for kind, name, made in declared:
        resources.append({"urn": urn(kind, name), "id": made.create_id, "type": TYPE})
    path = tmp_path / "state.json"
    path.write_text(json.dumps({"version": 3, "deployment": {"resources": resources}}))
    return path


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, ["topology", "orphans", *args])


def test_lists_and_deletes_what_the_state_does_not_hold(store: Store, tmp_path: Path) -> None:
    kept_dest = claim("Destination", "a")
    svc.create_destination(store, Destination("a", ("gpu",), (Lane("a", "x", 1.0),)), kept_dest)
    lost_dest = claim("Destination", "b")
    svc.create_destination(store, Destination("b", ("gpu",)), lost_dest)
    lost_pool = claim("Pool", "p")
    svc.create_pool(store, Pool("p", "gpu"), lost_pool)
    svc.join(store, "b", "p", claim("PoolMembership", "p:b"))
    prod = claim("Destination", "c", "prod")  # another stack's: never listed
    svc.create_destination(store, Destination("c", ("gpu",)), prod)
    state = state_file(tmp_path, [("Destination", "a", kept_dest)])

    listed = run("--store", store.url, "--stack", "dev", "--state", str(state), "--format", "json")
    assert listed.exit_code == 0, listed.output
    found = json.loads(listed.output)["orphans"]
    assert [(o["kind"], o["name"]) for o in found] == [
        ("membership", "p:b"),
        ("pool", "p"),
        ("destination", "b"),
    ]
    assert set(svc.stored_topology(store).destinations) == {
        "a",
        "b",
        "c",
    }  # listing changes nothing

    deleted = run("--store", store.url, "--state", str(state), "--delete")
    assert deleted.exit_code == 0, deleted.output
    assert "deleted destination 'b'" in deleted.output
    topo = svc.stored_topology(store)
    assert set(topo.destinations) == {"a", "c"} and "p" not in topo.pools


def test_a_pool_with_scale_targets_is_kept(store: Store, tmp_path: Path) -> None:
    svc.create_pool(store, Pool("p", "gpu"), claim("Pool", "p"))
    group = GroupRef("aws_asg", "t", region="us-east-1")
    kept = claim("ScaleTarget", "t")
    svc.attach_target(store, "p", ScaleTarget("t", group, 1, 2, 1.0, 1), kept)
    state = state_file(tmp_path, [("ScaleTarget", "t", kept)])
    result = run("--store", store.url, "--state", str(state), "--delete")
    assert result.exit_code == 1
    assert "kept pool 'p'" in result.output and "scale targets" in result.output
    assert "p" in svc.stored_topology(store).pools


def test_bad_input_is_one_line_and_exit_2(store: Store, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    for args in (
        ["--state", str(tmp_path / "missing.json")],
        ["--state", str(bad)],
        ["--format", "xml"],
    ):
        done = arklow_cli.run(["topology", "orphans", "--store", store.url, *args])
        assert done.returncode == 2, (args, done.stderr)
        assert done.stdout == "" and len(done.stderr.strip().splitlines()) == 1, done.stderr
