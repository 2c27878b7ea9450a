"""A real scrape of a live controller: ``promtool check metrics`` finds nothing, every family is
documented in docs/monitoring.md, and one object is named by one label set everywhere."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.monitoring.scrapes import Exported

REPO = Path(__file__).resolve().parents[2]
MONITORING_DOC = REPO / "docs" / "monitoring.md"


def test_promtool_check_metrics_finds_nothing_in_a_real_scrape(promtool: str, scrape: str) -> None:
    checked = subprocess.run(
        [promtool, "check", "metrics"], input=scrape, capture_output=True, text=True, timeout=60
    )
    assert (checked.returncode, checked.stdout, checked.stderr) == (0, "", "")


def test_the_scrape_has_every_family_populated(scrape: str) -> None:
    exported = Exported.of(scrape)
    assert len(exported.families) == 32, sorted(exported.families)
    for family in exported.families:
        assert any(exported.family_of(s) == family for s in exported.labels), family


def test_every_family_is_documented_and_every_documented_metric_exported(scrape: str) -> None:
    exported = Exported.of(scrape)
    doc = MONITORING_DOC.read_text()
    documented = set(re.findall(r"`(arklow_[a-z_]+)`", doc))
    names = {exported.family_of(n) or n for n in documented if exported.family_of(n) is not None}
    assert exported.families <= names, sorted(exported.families - names)
    unknown = {n for n in documented if exported.family_of(n) is None}
    assert not unknown, sorted(unknown)


def test_one_label_set_per_object_in_the_real_scrape(scrape: str) -> None:
    exported = Exported.of(scrape)
    for name, labels in exported.labels.items():
        if name.startswith("arklow_target_"):
            # a decision's reason is a closed set, as a pool's state
            extra = {"reason"} if name == "arklow_target_decision_state" else set()
            assert labels - extra == {"pool", "target"}, name
        elif name.startswith("arklow_scale_actions"):
            assert labels == {"pool", "target", "direction"}, name
        elif name.startswith("arklow_supply_api_errors"):
            assert labels == {"pool", "target", "kind", "error"}, name
        elif name.startswith("arklow_pool_"):
            assert labels - {"state"} == {"pool", "resource"}, name
        elif name.startswith("arklow_lane_"):
            assert labels == {"destination", "lane"}, name
        elif name.startswith("arklow_http_"):
            assert labels - {"le"} == {"route", "method", "code"}, name
    build = exported.labels["arklow_build_info"]
    assert build == {"version", "python", "kernel"}


def test_the_counters_of_a_target_join_its_gauges(scrape: str) -> None:
    """The counters' {pool, target} are those of the target's gauges: a join matches them."""

    def pairs(prefix: str) -> set[tuple[str, str]]:
        found = set()
        for line in scrape.splitlines():
            if line.startswith(prefix + "{"):
                labels = dict(re.findall(r'(\w+)="([^"]*)"', line))
                found.add((labels["pool"], labels["target"]))
        return found

    targets = pairs("arklow_target_max_replicas")
    for counter in ("arklow_scale_actions_total", "arklow_supply_api_errors_total"):
        assert pairs(counter) and pairs(counter) <= targets, counter
