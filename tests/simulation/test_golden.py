"""Golden outputs: ``simulate`` and ``what-if`` give the same results, bit for bit, as the
recorded run (``golden.json``), so a change made for speed cannot move any figure.

Recorded per case: the SHA-256 of the command's JSON and table output (a real process, as a
user runs it) and, per policy, of every figure at full precision (``repr`` of each float):
lanes, pools, the summary figures and every series point (the series feed the chart and are not
in the JSON), and the figures issue 21 added (pools, resources, admission, the series per
resource). Cases: the two example traces (default tick; and 30 s ticks with a 45 s launch
delay) and a 2-hour slice of the benchmark's fleet (1,000 lanes / 100 pools, many units decided
together and alone, ``bench/simulate_inputs.py``) with what-if on a one-member move.

Regenerate (only when a change is *meant* to move results, and say so in the commit):
``ARKLOW_GOLDEN_WRITE=1 pytest tests/simulation/test_golden.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from arklow_pulumi.reading.files import load_topology
from arklow_pulumi.simulation.simulate import simulate
from arklow_pulumi.simulation.simulating import RunResult
from arklow_pulumi.simulation.tracing import read_trace
from tests.simulation.running import arklow_process as arklow

ROOT = Path(__file__).resolve().parents[2]
TRACES = ROOT / "examples" / "traces"
GOLDEN = Path(__file__).with_name("golden.json")
WRITE = os.environ.get("ARKLOW_GOLDEN_WRITE") == "1"
SLICE_S = 7200


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _figures(results: dict[str, RunResult]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for name, r in results.items():
        parts: dict[str, Any] = {
            "lanes": {
                k: [repr(f.demand), repr(f.served), repr(f.held)] for k, f in r.lanes.items()
            },
            "pools": {
                k: [repr(p.capacity_hours), repr(p.replica_hours), p.peak_replicas]
                for k, p in r.pools.items()
            },
            "summary": [
                repr(r.served_ratio),
                repr(r.utilization),
                repr(r.replica_hours),
                r.scale_actions,
            ],
            "series": [
                [repr(x) for x in getattr(r.series, field)]
                for field in ("times", "demand", "served", "capacity", "replicas")
            ],
            # added by issue 21: each figure of the pools and resources, lanes' admission, and
            # the per-resource series
            "capacity_figures": {
                kind: {k: repr(f) for k, f in figures.items()}
                for kind, figures in (("pools", r.pools), ("resources", r.resources))
            },
            "admitted": {k: repr(f.admitted) for k, f in r.lanes.items()},
            "resource_series": {
                k: [[repr(x) for x in column or ()] for column in vars_of(s)]
                for k, s in r.series.resources.items()
            },
        }
        out[name] = {part: _sha(json.dumps(value)) for part, value in parts.items()}
    return out


def vars_of(series: Any) -> list[Any]:
    return [getattr(series, name) for name in series.__dataclass_fields__]


def _run(*args: str | Path) -> str:
    proc = arklow(*args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _simulate_case(topology: Path, trace: Path, *extra: str) -> dict[str, Any]:
    common: tuple[str | Path, ...] = ("simulate", "--topology", topology, "--trace", trace, *extra)
    topo = load_topology(topology)
    options = dict(zip(extra[::2], extra[1::2], strict=True))
    results = simulate(
        topo,
        read_trace(trace, topo.lanes_by_key),
        tick=float(options.get("--tick", 60)),
        launch_delay=float(options.get("--launch-delay", 120)),
    )
    return {
        "json": _sha(_run(*common, "--format", "json")),
        "table": _sha(_run(*common, "--format", "table")),
        "figures": _figures(results),
    }


@pytest.fixture(scope="module")
def golden() -> dict[str, Any]:
    if WRITE:
        return {}
    doc: dict[str, Any] = json.loads(GOLDEN.read_text(encoding="utf-8"))
    return doc


def _check(golden: dict[str, Any], case: str, got: dict[str, Any]) -> None:
    if WRITE:
        doc = json.loads(GOLDEN.read_text(encoding="utf-8")) if GOLDEN.exists() else {}
        doc[case] = got
        GOLDEN.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        return
    want = golden[case]
    for key in ("json", "table", "whatif"):
        if key in want or key in got:
            assert got.get(key) == want.get(key), f"{case}: {key} output moved"
    for policy, parts in want["figures"].items():
        for part, digest in parts.items():
            assert got["figures"][policy][part] == digest, f"{case}: {policy} {part} moved"
    assert set(got["figures"]) == set(want["figures"])


@pytest.mark.parametrize("name", ["gpu_day", "fleet"])
def test_example_traces(golden: dict[str, Any], name: str) -> None:
    got = _simulate_case(TRACES / f"{name}.yaml", TRACES / f"{name}.csv")
    _check(golden, name, got)


def test_example_short_ticks(golden: dict[str, Any]) -> None:
    got = _simulate_case(
        TRACES / "fleet.yaml", TRACES / "fleet.csv", "--tick", "30", "--launch-delay", "45"
    )
    _check(golden, "fleet_tick30", got)


def test_bench_slice(golden: dict[str, Any], tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from bench_simulate import moved
        from simulate_inputs import topology_document, write_trace
    finally:
        sys.path.remove(str(ROOT / "bench"))
    doc = topology_document()
    before, after = tmp_path / "before.yaml", tmp_path / "after.yaml"
    before.write_text(yaml.safe_dump(doc), encoding="utf-8")
    after.write_text(yaml.safe_dump(moved(doc)), encoding="utf-8")
    day = tmp_path / "day.csv"
    write_trace(day, doc, days=1)
    lines = day.read_text(encoding="utf-8").splitlines()
    trace = tmp_path / "slice.csv"
    kept = [lines[0], *(line for line in lines[1:] if int(line.split(",")[0]) <= SLICE_S)]
    trace.write_text("\n".join(kept) + "\n", encoding="utf-8")
    got = _simulate_case(before, trace)
    whatif = ("what-if", "--before", before, "--after", after, "--trace", trace)
    got["whatif"] = _sha(_run(*whatif, "--format", "json"))
    _check(golden, "bench_slice", got)
