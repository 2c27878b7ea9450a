"""``arklow topology show`` prints what the store holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from arklow_pulumi.cli.main import cli
from arklow_pulumi.core.topology import Destination, GroupRef, Lane, Pool, ScaleTarget
from arklow_pulumi.store import Store
from arklow_pulumi.store import service as svc


def populate(store: Store) -> None:
    svc.create_destination(
        store,
        Destination("search", ("gpu",), (Lane("search", "interactive", 16.0, weight=3.0),)),
    )
    svc.create_destination(
        store,
        Destination(
            "summarize",
            ("gpu", "llm-quota"),
            (Lane("summarize", "default", 32.0, cost={"gpu": 2.0}),),
        ),
    )
    svc.create_destination(
        store, Destination("reports", ("gpu",), (), standalone_capacity={"gpu": 4.0})
    )
    svc.create_pool(store, Pool("shared-gpu", "gpu", headroom=0.2))
    svc.join(store, "search", "shared-gpu")
    svc.join(store, "summarize", "shared-gpu")
    group = GroupRef("aws_asg", "gpu-workers", region="us-east-1")
    svc.attach_target(store, "shared-gpu", ScaleTarget("gpu-workers", group, 1, 10, 8.0, 1))


def test_show_json(store: Store) -> None:
    populate(store)
    result = CliRunner().invoke(cli, ["topology", "show", "--store", store.url, "--format", "json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert document["destinations"]["search"] == {
        "resources": ["gpu"],
        "pools": {"gpu": "shared-gpu"},
        "lanes": {"interactive": {"limit": 16, "weight": 3, "cost": None}},
    }
    assert document["destinations"]["summarize"]["pools"] == {
        "gpu": "shared-gpu",
        "llm-quota": "summarize/llm-quota",
    }
    assert document["destinations"]["summarize"]["lanes"]["default"]["cost"] == {"gpu": 2}
    assert document["pools"]["shared-gpu"] == {
        "resource": "gpu",
        "standalone": False,
        "members": ["search", "summarize"],
        "capacity": 0,
        "scale_targets": [
            {
                "name": "gpu-workers",
                "kind": "aws_asg",
                "min_replicas": 1,
                "max_replicas": 10,
                "units_per_replica": 8,
            }
        ],
        "scale_policy": None,  # the defaults
    }
    assert document["pools"]["reports/gpu"] == {
        "resource": "gpu",
        "standalone": True,
        "members": ["reports"],
        "capacity": 4,
        "scale_targets": [],
        "scale_policy": None,
    }


def test_show_json_includes_a_pools_scale_policy(store: Store) -> None:
    from arklow_pulumi.core.policy import ScalePolicy

    policy = ScalePolicy(max_step_up=2, max_step_up_percent=50.0, tolerance=0.25)
    svc.create_pool(store, Pool("batch", "cpu", scale_policy=policy))
    result = CliRunner().invoke(cli, ["topology", "show", "--store", store.url, "--format", "json"])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.output)["pools"]["batch"]["scale_policy"]
    assert shown == {"max_step_up": 2, "max_step_up_percent": 50, "tolerance": 0.25}


def test_show_table(store: Store) -> None:
    populate(store)
    result = CliRunner().invoke(cli, ["topology", "show", "--store", store.url])
    assert result.exit_code == 0, result.output
    assert "shared-gpu" in result.output and "gpu-workers (aws_asg 1-10 x8)" in result.output
    assert "search, summarize" in result.output


def test_show_defaults_to_the_sqlite_file_beside_pulumi_yaml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from arklow_pulumi.store import open_store
    from arklow_pulumi.store.engine import close_stores

    (tmp_path / "Pulumi.yaml").write_text("name: x\n")
    (tmp_path / "sub").mkdir()
    populate(open_store(f"sqlite:///{tmp_path / '.arklow' / 'arklow.db'}"))
    close_stores()
    monkeypatch.chdir(tmp_path / "sub")
    monkeypatch.delenv("ARKLOW_STORE", raising=False)
    result = CliRunner().invoke(cli, ["topology", "show", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert set(json.loads(result.output)["destinations"]) == {"reports", "search", "summarize"}
    close_stores()


def test_outside_a_project_it_says_where_to_run_not_to_create_a_store(tmp_path: Path) -> None:
    """No --store, no $ARKLOW_STORE, no Pulumi.yaml here or above: the default store would be
    one in this directory, which `store upgrade` would create empty; the line says where to
    run instead, and nothing is created."""
    from tests.arklow_cli import run

    result = run(["topology", "show"], cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (
        f"error: option --store: field 'store': no Pulumi.yaml in {str(tmp_path)!r} or above, "
        "so no project store: run this in the project's directory, or give --store URL "
        "(or $ARKLOW_STORE)\n"
    )
    assert "store upgrade" not in result.stderr
    assert list(tmp_path.iterdir()) == []
