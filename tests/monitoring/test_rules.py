"""The alerting rules in deploy/prometheus: ``promtool check rules`` and ``promtool test rules``
pass, every alert has a unit test that makes it fire, and every metric and label name the rules
use is in a real scrape of the controller."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.monitoring.promql import names_in
from tests.monitoring.scrapes import Exported

REPO = Path(__file__).resolve().parents[2]
RULES = REPO / "deploy" / "prometheus" / "arklow-rules.yaml"
RULE_TESTS = REPO / "deploy" / "prometheus" / "arklow-rules.test.yaml"
MONITORING_DOC = REPO / "docs" / "monitoring.md"


def alerts() -> list[dict[str, Any]]:
    document = yaml.safe_load(RULES.read_text())
    return [rule for group in document["groups"] for rule in group["rules"] if "alert" in rule]


def promtool_run(promtool: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [promtool, *args], capture_output=True, text=True, timeout=120, cwd=RULES.parent
    )


def test_promtool_check_rules(promtool: str) -> None:
    checked = promtool_run(promtool, "check", "rules", RULES.name)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"SUCCESS: {len(alerts())} rules found" in checked.stdout


def test_promtool_test_rules(promtool: str) -> None:
    tested = promtool_run(promtool, "test", "rules", RULE_TESTS.name)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "SUCCESS" in tested.stdout


def test_every_alert_is_made_to_fire_and_to_stay_quiet_by_a_unit_test() -> None:
    tests = yaml.safe_load(RULE_TESTS.read_text())["tests"]
    fired, quiet = set(), set()
    for case in tests:
        for check in case.get("alert_rule_test", []):
            (fired if check.get("exp_alerts") else quiet).add(check["alertname"])
    names = {rule["alert"] for rule in alerts()}
    assert fired == names and quiet == names


def test_the_rules_use_only_names_the_controller_exports(scrape: str) -> None:
    exported = Exported.of(scrape)
    for rule in alerts():
        used = names_in(rule["expr"])
        assert used.metrics, rule["alert"]
        assert not exported.problems(used.metrics, used.selected, used.grouping), rule["alert"]


def test_every_alert_is_documented() -> None:
    doc = MONITORING_DOC.read_text()
    for rule in alerts():
        assert f"`{rule['alert']}`" in doc, rule["alert"]
        assert rule["labels"]["severity"] in {"critical", "warning"}
        assert rule["annotations"]["summary"] and rule["annotations"]["description"]
