"""Names that round-trip (issue 30, item 4): whatever validation accepts, every reader accepts
back. Random valid names (:mod:`tests.cli.names_strategy`) go into a topology file, into a real
SQLite store, through the controller's ticks (demand reported for every lane), out through
``arklow controller export-trace``, into ``arklow simulate`` and ``arklow what-if`` (JSON and
markdown), into a demand file for ``arklow allocate`` and into a tokens file; each reads back exactly the names it was given.

The HTTP API's part runs a real ``arklow controller run`` process (:mod:`tests.controller_process`)
with a destination-scoped token per destination: demand is posted for every lane, each with its
destination's token, and the admission read back names every lane.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import tempfile
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, Phase, given, settings
from markdown_it import MarkdownIt

from arklow_pulumi.cli.main import cli
from arklow_pulumi.controller.api.auth import TokenSet
from arklow_pulumi.controller.ports import DemandReport
from arklow_pulumi.reading.files import load_topology
from arklow_pulumi.simulation.tracing import read_trace
from arklow_pulumi.store.engine import close_stores, open_store
from arklow_pulumi.store.runtime import acquire_lease
from tests import loopback
from tests.cli.names_strategy import lane_keys, topologies
from tests.controller.conftest import FakeClock, groups_for, make_controller
from tests.controller_process import ControllerProcess, eventually, put_topology

FORMULA_FIRST = ("=", "+", "-", "@")


def _write(path: Path, document: Any) -> Path:
    path.write_text(yaml.safe_dump(document, allow_unicode=True, sort_keys=False), "utf-8")
    return path


def _run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def _exported_trace(work: Path, document: dict[str, Any]) -> Path:
    """The topology in a store, three controller ticks with demand on every lane, and the
    trace ``arklow controller export-trace`` writes of them."""
    topology = load_topology(_write(work / "topology.yaml", document))
    url = f"sqlite:///{work / 'arklow.db'}"
    store = open_store(url)
    try:
        put_topology(store, topology)
        lease = acquire_lease(store, "test", 15.0, force=True)
        clock = FakeClock()
        controller = make_controller(store, groups_for(topology), lease, clock)
        keys = lane_keys(document)
        for k in range(3):
            controller.demand_sink().accept([DemandReport(key, float(k + 1)) for key in keys])
            controller.tick()
            clock.advance(60)
        output = work / "trace.csv"
        _run(
            "controller",
            "export-trace",
            "--store",
            url,
            "--since",
            "3650d",
            "--output",
            str(output),
        )
    finally:
        close_stores()
    return output


def _cells_are_safe(trace: Path) -> None:
    with trace.open(encoding="utf-8", newline="") as handle:
        for _time, lane, _demand in list(csv.reader(handle))[1:]:
            assert not lane.startswith(FORMULA_FIRST), lane  # a spreadsheet would run it


def _markdown_names(text: str) -> tuple[set[str], set[str]]:
    """The code spans' contents of the what-if markdown, and every other kind of inline markup
    in it (a name that left its code span would add emphasis, a link, an image or HTML)."""
    parser = MarkdownIt("commonmark").enable("table")
    code: set[str] = set()
    markup: set[str] = set()
    for block in parser.parse(text):
        for token in block.children or []:
            if token.type == "code_inline":
                code.add(token.content)
            elif token.type != "text" and token.type not in ("softbreak", "hardbreak"):
                markup.add(token.type)
            elif "@" in token.content:
                markup.add("@mention")
    return code, markup


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(document=topologies())
def test_valid_names_read_back_from_every_file_the_project_writes(
    document: dict[str, Any],
) -> None:
    keys = lane_keys(document)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        trace_path = _exported_trace(work, document)
        _cells_are_safe(trace_path)
        topology_path = work / "topology.yaml"
        assert set(read_trace(trace_path, dict.fromkeys(keys)).lanes) == set(keys)

        out = _run(
            "simulate", "--topology", str(topology_path), "--trace", str(trace_path),
            "--policies", "arklow", "--format", "json", "--jobs", "1",
        )  # fmt: skip
        assert set(json.loads(out)["policies"]["arklow"]["lanes"]) == set(keys)

        after = json.loads(json.dumps(document))
        for destination in after["destinations"]:
            destination["lanes"][0]["limit"] = 1  # every destination's first lane changes
        after_path = _write(work / "after.yaml", after)
        common = ["what-if", "--before", str(topology_path), "--after", str(after_path)]
        common += ["--trace", str(trace_path), "--jobs", "1"]
        assert set(json.loads(_run(*common))["lanes"]) == set(keys)
        code, markup = _markdown_names(_run(*common, "--format", "markdown"))
        pools = {f"{d['name']}/gpu" for d in document["destinations"]}
        changed = {f"{d['name']}/{d['lanes'][0]['name']}" for d in document["destinations"]}
        assert changed | pools <= code <= set(keys) | pools  # the change line; the pools table
        assert markup <= {"strong_open", "strong_close"}  # only the report's own bold words

        demand = _write(work / "demand.yaml", {"lanes": dict.fromkeys(keys, 3)})
        out = _run("allocate", "--topology", str(topology_path), "--demand", str(demand),
                   "--format", "json")  # fmt: skip
        assert {k: v["demand"] for k, v in json.loads(out)["lanes"].items()} == dict.fromkeys(
            keys, 3
        )

        tokens = [
            {"name": f"t{i}", "scope": f"destination:{d['name']}", "sha256": _digest(f"s{i}")}
            for i, d in enumerate(document["destinations"])
        ]
        loaded = TokenSet.load(_write(work / "tokens.yaml", {"tokens": tokens}))
        for i, destination in enumerate(document["destinations"]):
            scope = loaded.tokens[i].scope
            assert scope.destination == destination["name"]
            for lane in destination["lanes"]:
                assert scope.may_report_lane(f"{destination['name']}/{lane['name']}")


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@settings(
    max_examples=3,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],  # a process per example: no shrinking
    suppress_health_check=[HealthCheck.too_slow],
)
@given(document=topologies())
def test_valid_names_through_the_controller_api(document: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        url = f"sqlite:///{work / 'arklow.db'}"
        try:
            put_topology(open_store(url), load_topology(_write(work / "t.yaml", document)))
        finally:
            close_stores()
        tokens = {d["name"]: f"secret-{i}" for i, d in enumerate(document["destinations"])}
        entries = [
            {"name": f"t{i}", "scope": f"destination:{name}", "sha256": _digest(token)}
            for i, (name, token) in enumerate(tokens.items())
        ]
        entries.append({"name": "reader", "scope": "read", "sha256": _digest("reader")})
        tokens_file = _write(work / "tokens.yaml", {"tokens": entries})
        process = ControllerProcess(work, url, "--tokens", str(tokens_file), interval=0.2)
        try:
            base = process.url()
            for destination in document["destinations"]:
                name = destination["name"]
                reports = [
                    {"lane": f"{name}/{lane['name']}", "demand": 2} for lane in destination["lanes"]
                ]
                answer = loopback.post(
                    f"{base}/v1/demand",
                    json={"reports": reports},
                    headers={"Authorization": f"Bearer {tokens[name]}"},
                    timeout=30,
                )
                assert answer.status_code == 200, answer.text

            def admitted() -> dict[str, Any] | None:
                answer = loopback.get(
                    f"{base}/v1/admission",
                    headers={"Authorization": "Bearer reader"},
                    timeout=30,
                )
                lanes = answer.json().get("lanes", {}) if answer.status_code == 200 else {}
                ready = all(lanes.get(k, {}).get("demand") == 2 for k in lane_keys(document))
                return lanes if ready else None

            lanes = eventually(admitted, "admission of every lane")
            assert set(lanes) == set(lane_keys(document))
            assert all(lane["allocation"] == 2 for lane in lanes.values())  # capacity 10 each
        finally:
            process.end()


def test_the_csv_cell_rule_round_trips_exactly() -> None:
    from arklow_pulumi.simulation.tracing import format_trace, parse_trace

    names = ["=1+1/a", "+x/a", "-x/a", "@x/a", "'=x/a", "''-x/a", "'x/a", "x'/=a", "plain/a"]
    text = format_trace([(float(i), name, 1.0) for i, name in enumerate(names)])
    cells = [row[1] for row in csv.reader(io.StringIO(text))][1:]
    assert cells == ["'=1+1/a", "'+x/a", "'-x/a", "'@x/a", "''=x/a", "'''-x/a", "'x/a", "x'/=a",
                     "plain/a"]  # fmt: skip
    assert list(parse_trace(io.StringIO(text)).lanes) == names
