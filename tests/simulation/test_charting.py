"""``simulate --chart``: policies whose lines coincide are drawn once, named by all of them (a
line drawn over an identical one would hide the ``arklow`` line)."""

from __future__ import annotations

from pathlib import Path

from arklow_pulumi.reading.files import load_topology
from arklow_pulumi.simulation.charting import _same_lines, write_chart
from arklow_pulumi.simulation.simulate import simulate
from arklow_pulumi.simulation.tracing import read_trace

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "provider_quota"


def test_identical_policies_share_one_line_named_by_each(tmp_path: Path) -> None:
    topology = load_topology(EXAMPLE / "topology.yaml")
    trace = read_trace(EXAMPLE / "trace.csv", topology.lanes_by_key)
    # a quota pool, no scale targets: the declared pools frozen or not are the same run
    results = simulate(topology, trace, ["arklow", "static", "free-for-all"], 300, detail=True)
    groups = {
        resource: [names for names, _ in _same_lines(results, resource)]
        for resource in results["arklow"].resources
    }
    assert groups == {
        "gpu": [["arklow", "static"], ["free-for-all"]],
        # one quota for everyone either way: all three serve alike
        "llm-quota": [["arklow", "static", "free-for-all"]],
    }
    write_chart(results, tmp_path / "chart.png")
    assert (tmp_path / "chart.png").read_bytes()[:4] == b"\x89PNG"
