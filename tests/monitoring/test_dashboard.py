"""The Grafana dashboard deploy/grafana/arklow.json: every PromQL expression in it (panels and
variables) uses only metric and label names found in a real scrape of a live controller, and is
valid PromQL for ``promtool check rules``; it shows every family the controller exports."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.monitoring.promql import instantiate, names_in
from tests.monitoring.scrapes import TARGET_LABELS, Exported

REPO = Path(__file__).resolve().parents[2]
DASHBOARD = REPO / "deploy" / "grafana" / "arklow.json"
LABEL_VALUES = re.compile(r"^label_values\((?:(?P<selector>.+),\s*)?(?P<label>\w+)\)$")


def dashboard() -> dict[str, Any]:
    return json.loads(DASHBOARD.read_text())


def panels(within: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for panel in within:
        yield panel
        yield from panels(panel.get("panels", []))


def queries() -> list[tuple[str, str, str]]:
    """(where, expr, legend) for every panel query."""
    found = []
    for panel in panels(dashboard()["panels"]):
        for target in panel.get("targets", []):
            where = f"panel {panel['id']} ({panel['title']}) {target['refId']}"
            found.append((where, target["expr"], target.get("legendFormat", "")))
    return found


def variables() -> list[tuple[str, str | None, str]]:
    """(name, selector, label) of every label_values variable."""
    found = []
    for variable in dashboard()["templating"]["list"]:
        if variable["type"] != "query":
            continue
        query = (
            variable["query"]["query"] if isinstance(variable["query"], dict) else variable["query"]
        )
        match = LABEL_VALUES.match(query)
        assert match, f"variable {variable['name']}: {query}"
        found.append((variable["name"], match.group("selector"), match.group("label")))
    return found


def test_the_dashboard_is_well_formed() -> None:
    board = dashboard()
    ids = [p["id"] for p in panels(board["panels"])]
    assert len(ids) == len(set(ids)) and len(ids) > 20
    names = {v["name"] for v in board["templating"]["list"]}
    assert names == {"datasource", "job", "pool", "destination"}
    for panel in panels(board["panels"]):
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert panel["title"] and panel["description"], panel["id"]
        assert panel["targets"], panel["title"]
        refs = [t["refId"] for t in panel["targets"]]
        assert len(refs) == len(set(refs)), panel["title"]
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24, panel["title"]


def test_every_panel_query_filters_by_job() -> None:
    for where, expr, _legend in queries():
        used = names_in(instantiate(expr))
        for metric in used.metrics:
            assert "job" in used.selected.get(metric, set()), f"{where}: {metric}"


def test_every_expression_is_valid_promql(promtool: str, tmp_path: Path) -> None:
    rules = [
        {"record": f"dashboard:query_{n}", "expr": instantiate(expr)}
        for n, (_where, expr, _legend) in enumerate(queries())
    ]
    rules += [
        {"record": f"dashboard:variable_{name}", "expr": selector}
        for name, selector, _label in variables()
        if selector
    ]
    path = tmp_path / "dashboard-rules.yaml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    checked = subprocess.run(
        [promtool, "check", "rules", str(path)], capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_every_name_in_the_dashboard_is_in_a_real_scrape(scrape: str) -> None:
    exported = Exported.of(scrape)
    for where, expr, legend in queries():
        used = names_in(instantiate(expr))
        assert used.metrics, where
        assert not exported.problems(used.metrics, used.selected, used.grouping), where
        legend_labels = set(re.findall(r"\{\{\s*(\w+)\s*\}\}", legend))
        assert legend_labels <= exported.all_labels, where
    for name, selector, label in variables():
        used = names_in(instantiate(selector or ""))
        assert not exported.problems(used.metrics, used.selected, used.grouping), name
        metric = next(iter(used.metrics))
        assert label in exported.labels[metric] | TARGET_LABELS, name


def test_the_dashboard_shows_every_family_the_controller_exports(scrape: str) -> None:
    exported = Exported.of(scrape)
    shown = {
        exported.family_of(metric)
        for _where, expr, _legend in queries()
        for metric in names_in(instantiate(expr)).metrics
    }
    assert exported.families <= shown, sorted(exported.families - shown)


@pytest.mark.parametrize(
    ("expr", "metrics", "selected", "grouping"),
    [
        (
            'sum by (pool, target) (rate(arklow_scale_actions_total{job=~".*",pool=~"a|b"}[5m]))',
            {"arklow_scale_actions_total"},
            {"arklow_scale_actions_total": {"job", "pool"}},
            {"pool", "target"},
        ),
        (
            "time() - x_seconds > 3 * y_seconds and on (instance) z == 1 or absent(w)",
            {"x_seconds", "y_seconds", "z", "w"},
            {},
            {"instance"},
        ),
        (
            'max by (pool) (a{state="c"} * 2 or b{s!~"x,}"}) offset 5m',
            {"a", "b"},
            {"a": {"state"}, "b": {"s"}},
            {"pool"},
        ),
        ("histogram_quantile(0.99, sum(rate(h_bucket[5m])) by (le))", {"h_bucket"}, {}, {"le"}),
    ],
)
def test_names_are_read_from_promql(
    expr: str, metrics: set[str], selected: dict[str, set[str]], grouping: set[str]
) -> None:
    used = names_in(expr)
    assert (used.metrics, used.selected, used.grouping) == (metrics, selected, grouping)
