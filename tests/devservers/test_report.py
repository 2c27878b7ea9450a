"""The main job's report without running the day: a recording of the dev stack's topology (the
noon join included) made up tick by tick, then its summary.json records, its charts (checked on
the matplotlib figures: titles, units, event labels, legends outside every plot) and its page."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from arklow_pulumi.controller.ports import LaneView, PoolView, Published, TargetView
from arklow_pulumi.devservers.clouds import load_stack
from arklow_pulumi.scenario import charts
from arklow_pulumi.scenario.day import EPISODES, HOUR, JOIN_AT_S, Event
from arklow_pulumi.scenario.recording import (
    Layout,
    Recording,
    lane_figures,
    layout_of,
    pool_figures,
)
from arklow_pulumi.scenario.reporting import CHARTS, Provenance, summary_document, write_report
from tests.e2e.pulumi_cli import REPO

TICK_S = 1800.0
AT = datetime(2026, 1, 5, tzinfo=UTC)
SOURCE = Provenance(
    day=AT,
    generated=datetime(2026, 12, 2, 9, 30, tzinfo=UTC),
    version="0.1.0",
    commit="abc1234",
    modified=False,
    stack="dev",
    topology_file="stacks/Pulumi.dev.yaml",
)
JOIN = Event(JOIN_AT_S, None, "pulumi up: reports joins shared-gpu", "join")


def dev_layouts(tmp_path: Path) -> tuple[Layout, Layout]:
    """The dev stack's layout, and the same after ``reports`` joins ``shared-gpu``."""
    before = layout_of(*load_stack(REPO, "dev"))
    document = yaml.safe_load((REPO / "stacks" / "Pulumi.dev.yaml").read_text())
    for pool in document["config"]["arklow:topology"]["pools"]:
        if pool["name"] == "shared-gpu":
            pool["members"].append("reports")
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.dev.yaml").write_text(yaml.safe_dump(document))
    return before, layout_of(*load_stack(tmp_path, "dev"))


def pool_view(layout: Layout, pool: str, k: int) -> PoolView:
    targets = {
        name: TargetView(2 + k % 3, 2 + (k + 1) % 3, 0, 1, 10)
        for name, info in layout.targets.items()
        if info.pool == pool
    }
    resource = next(
        (info.resource for info in layout.targets.values() if info.pool == pool),
        pool.split("/")[-1] if "/" in pool else pool,
    )
    capacity = 16.0 + k
    return PoolView(resource, capacity, 12.0, 12.0 / capacity, "steady", 3, targets)


def record(tmp_path: Path) -> Recording:
    before, after = dev_layouts(tmp_path)
    rec = Recording(TICK_S)
    rec.layout(0.0, before)
    rec.layout(JOIN_AT_S, after)
    for episode in EPISODES:
        rec.event(episode)
    rec.event(JOIN)
    for k in range(int(24 * HOUR / TICK_S)):
        t = k * TICK_S
        layout = rec.layout_at(t)
        lanes = {lane: LaneView(6.0 + k % 4, 4.0, 1.0, 5.0) for lane in layout.lane_pools}
        pools = {pool: pool_view(layout, pool, k) for pool in layout.pool_members}
        rec.add(t, Published(k + 1, AT, lanes, pools))
    return rec


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Recording:
    """One recording for the module's tests, which only read it (and its charts, :func:`chart`);
    a test that changes one makes its own with :func:`record`."""
    return record(tmp_path_factory.mktemp("recording"))


@pytest.fixture(scope="module")
def chart(recording: Recording) -> Callable[[str], Any]:
    """The chart named (a key of ``CHARTS``) of the module's recording, drawn once (:func:`drawn`)
    for the tests that read it."""
    figures: dict[str, Any] = {}

    def figure(name: str) -> Any:
        if name not in figures:
            figures[name] = drawn(CHARTS[name][2](recording))
        return figures[name]

    return figure


def test_the_layout_names_each_lanes_pools_and_the_join(recording: Recording) -> None:
    assert recording.lane_pools("search/batch") == [(0.0, ("shared-gpu",))]
    assert recording.lane_pools("reports/nightly") == [
        (0.0, ("reports/gpu",)),
        (JOIN_AT_S, ("shared-gpu",)),
    ]
    assert recording.lane_pools("summarize/default") == [(0.0, ("llm-quota", "shared-gpu"))]
    assert recording.pool_members("shared-gpu")[-1] == (
        JOIN_AT_S,
        ("reports", "search", "summarize"),
    )
    info = recording.target_info("video-encoders")
    assert info is not None and info.autoscaled and info.units_per_replica == 4


# -- summary.json --------------------------------------------------------------------------------

LANE_FIELDS = {"demand", "within_limit", "allocation", "held", "admission", "stale", "pools"}
POOL_FIELDS = {"resource", "capacity", "demand", "pressure", "state", "desired_replicas"}
TARGET_FIELDS = {"pool", "desired", "in_service", "pending", "min", "max", "autoscaled"}


def document(rec: Recording) -> dict[str, Any]:
    # through JSON, as a program reads it
    doc = summary_document(rec, lane_figures(rec), pool_figures(rec), SOURCE)
    return dict(json.loads(json.dumps(doc)))


def test_summary_json_holds_named_records_only(recording: Recording) -> None:
    doc = document(recording)
    assert {k: doc[k] for k in ("date", "version", "commit", "stack", "topology_file")} == {
        "date": "2026-01-05",
        "version": "0.1.0",
        "commit": "abc1234",
        "stack": "dev",
        "topology_file": "stacks/Pulumi.dev.yaml",
    }
    assert doc["tick_s"] == TICK_S
    assert doc["events"][-1] == {"t": JOIN_AT_S, "end": None, "what": JOIN.what}
    assert doc["pools"]["shared-gpu"]["replicas"].keys() == {"min", "mean", "max"}
    assert len(doc["timeline"]) == 48
    for tick in doc["timeline"]:
        assert set(tick) == {"t", "clock", "lanes", "pools", "targets"}
        for lane in tick["lanes"].values():
            assert set(lane) == LANE_FIELDS
        for pool in tick["pools"].values():
            assert set(pool) == POOL_FIELDS
        for target in tick["targets"].values():
            assert set(target) == TARGET_FIELDS
    assert _no_bare_number_arrays(doc)


def test_summary_json_ticks_follow_the_join(recording: Recording) -> None:
    timeline = document(recording)["timeline"]
    before = next(t for t in timeline if t["clock"] == "11:30")
    after = next(t for t in timeline if t["clock"] == "12:00")
    assert before["lanes"]["reports/nightly"]["pools"] == ["reports/gpu"]
    assert after["lanes"]["reports/nightly"]["pools"] == ["shared-gpu"]
    assert "reports/gpu" in before["pools"] and "reports/gpu" not in after["pools"]
    pool = after["pools"]["shared-gpu"]
    assert pool["pressure"] == pytest.approx(pool["demand"] / pool["capacity"])
    assert after["targets"]["video-encoders"]["autoscaled"] is True
    assert after["targets"]["gpu-workers"] | {"desired": 0, "in_service": 0} == {
        "pool": "shared-gpu",
        "desired": 0,
        "in_service": 0,
        "pending": 0,
        "min": 1,
        "max": 10,
        "autoscaled": False,
    }


def _no_bare_number_arrays(value: Any) -> bool:
    if isinstance(value, list):
        return not any(isinstance(v, int | float) for v in value) and all(
            _no_bare_number_arrays(v) for v in value
        )
    if isinstance(value, dict):
        return all(_no_bare_number_arrays(v) for v in value.values())
    return True


# -- the charts ----------------------------------------------------------------------------------


def drawn(figure: Any) -> Any:
    """The figure on an Agg canvas, drawn once: laid out (constrained layout), extents final."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(figure).draw()
    return figure


def visible_axes(figure: Any) -> list[Any]:
    return [ax for ax in figure.axes if ax.get_visible()]


def test_each_lane_panel_names_its_pools_and_its_unit(
    recording: Recording, chart: Callable[[str], Any]
) -> None:
    figure = chart("lanes.png")
    titles = {ax.get_title().split(" — ")[0]: ax for ax in visible_axes(figure)}
    assert set(titles) == set(recording.lanes)
    assert titles["search/batch"].get_title() == "search/batch — pool shared-gpu"
    assert titles["reports/nightly"].get_title() == (
        "reports/nightly — pool reports/gpu; from 12:00 shared-gpu"
    )
    assert titles["summarize/default"].get_title().endswith("pools llm-quota, shared-gpu")
    assert "1 = 2 gpu + 1 llm-quota" in titles["summarize/default"].get_ylabel()
    assert "1 = 1 cpu" in titles["ingest/stream"].get_ylabel()


@pytest.mark.parametrize("name", list(CHARTS))
def test_every_panel_labels_every_event(
    recording: Recording, chart: Callable[[str], Any], name: str
) -> None:
    figure = chart(name)
    for ax in visible_axes(figure):
        labels = {text.get_text().strip() for text in ax.texts}
        assert {"backfill", "burst", "join"} <= labels, (name, ax.get_title())
    legend = " | ".join(t.get_text() for t in figure.legends[0].get_texts())
    for event in recording.events:
        assert charts.event_text(event) in legend


@pytest.mark.parametrize("name", list(CHARTS))
def test_the_legend_covers_no_plot(chart: Callable[[str], Any], name: str) -> None:
    figure = chart(name)
    renderer = figure.canvas.get_renderer()
    [legend] = figure.legends
    box = legend.get_window_extent(renderer)
    for ax in visible_axes(figure):
        assert ax.get_legend() is None  # no legend inside a plot
        assert not box.overlaps(ax.get_window_extent(renderer)), (name, ax.get_title())


def test_targets_say_what_desired_means(chart: Callable[[str], Any]) -> None:
    figure = chart("targets.png")
    titles = {ax.get_title().split(" — ")[0]: ax.get_title() for ax in visible_axes(figure)}
    assert titles["video-encoders"] == (
        "video-encoders — GCP managed instance group with its own autoscaler: "
        "desired = its minimum; pool video-encoders"
    )
    assert titles["gpu-workers"] == "gpu-workers — AWS Auto Scaling group; pool shared-gpu"
    legend = [t.get_text() for t in figure.legends[0].get_texts()]
    assert "desired = the autoscaler's minimum, set by Arklow (its autoscaler may run more)" in (
        legend
    )
    assert "desired = the group's target size, set by Arklow" in legend
    units = {ax.get_title().split(" — ")[0]: ax.get_ylabel() for ax in visible_axes(figure)}
    assert units["gpu-workers"] == "replicas\n(1 = 8 gpu units)"
    assert units["video-encoders"] == "replicas\n(1 = 4 video units)"


def test_pools_are_in_their_resources_units(chart: Callable[[str], Any]) -> None:
    figure = chart("pools.png")
    units = {ax.get_title(): ax.get_ylabel() for ax in visible_axes(figure)}
    assert units["pool cpu-workers (cpu) — member ingest"] == "cpu units"
    assert (
        units[
            "pool shared-gpu (gpu) — members search, summarize; from 12:00 reports, search, summarize"
        ]
        == "gpu units"
    )


def test_the_pressure_1_line_is_labelled_outside_the_plot(chart: Callable[[str], Any]) -> None:
    figure = chart("pressure.png")
    [ax] = visible_axes(figure)
    renderer = figure.canvas.get_renderer()
    [label] = [t for t in ax.texts if t.get_text().startswith("pressure 1")]
    assert label.get_text() == "pressure 1:\ndemand = capacity"
    assert label.get_window_extent(renderer).x0 >= ax.get_window_extent(renderer).x1
    assert any(list(line.get_ydata()) == [1.0, 1.0] for line in ax.get_lines()), (
        "a horizontal line at 1"
    )


# -- the page ------------------------------------------------------------------------------------


def test_the_page_states_date_version_topology_and_shows_each_chart(
    recording: Recording, tmp_path: Path
) -> None:
    notes = ["/x/.venv/bin/arklow topology show --store sqlite:////x/arklow.db"]
    lanes, pools = lane_figures(recording), pool_figures(recording)
    index = write_report(recording, lanes, pools, tmp_path / "report", notes, SOURCE)
    page = index.read_text()
    assert "<dt>Date</dt><dd>Monday 5 January 2026 (simulated, UTC)" in page
    assert "<dt>Version</dt><dd>arklow-pulumi 0.1.0, commit abc1234</dd>" in page
    assert "<dt>Topology file</dt><dd><code>stacks/Pulumi.dev.yaml</code>" in page
    assert "For video-encoders (a group with its own autoscaler), desired = the autoscaler" in page
    for file, (title, caption, _draw) in CHARTS.items():
        assert f"<img src='{file}' alt='{title}'>" in page
        assert caption.replace("'", "&#x27;") in page
        assert (tmp_path / "report" / file).read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert "10:00–12:00 search/batch&#x27;s demand bursts to about 90, above its limit" in page
    assert notes[0] in page
    summary = json.loads((tmp_path / "report" / "summary.json").read_text())
    assert summary["topology_file"] == "stacks/Pulumi.dev.yaml"


# -- reading right -------------------------------------------------------------------------------


def test_summary_json_figures_are_rounded(recording: Recording, tmp_path: Path) -> None:
    rec = Recording(TICK_S)
    rec.layout(0.0, recording.layouts[0][1])
    lanes = {lane: LaneView(1.1639999999999997, 16 / 3, 0.0, 5.333333) for lane in recording.lanes}
    rec.add(0.0, Published(1, AT, lanes, {}))
    write_report(rec, lane_figures(rec), pool_figures(rec), tmp_path, [], SOURCE)
    text = (tmp_path / "summary.json").read_text()
    assert "1.1639999999999997" not in text and "5.33333" not in text
    lane = json.loads(text)["timeline"][0]["lanes"]["search/batch"]
    assert (lane["demand"], lane["allocation"], lane["admission"]) == (1.164, 5.333, 5.333)


def test_demand_above_the_limit_is_drawn_as_reported(chart: Callable[[str], Any]) -> None:
    figure = chart("lanes.png")
    ax = next(a for a in visible_axes(figure) if a.get_title().startswith("search/batch"))
    lines = {line.get_label(): list(line.get_ydata()) for line in ax.get_lines()}
    reported = lines["reported demand (above the limit: the lane's own queue)"]
    assert max(reported) == 9.0  # the fixture reports 6 to 9 against 5 within the limit
    assert max(lines["demand (≤ the lane's limit)"]) == 5.0


def test_a_quota_far_above_its_demand_is_drawn_to_the_demands_scale(tmp_path: Path) -> None:
    recording = record(tmp_path)  # its own: it changes the quota's capacity
    for views in [recording.pools["llm-quota"]]:
        for i, v in enumerate(views):
            if v is not None:
                views[i] = PoolView(v.resource, 1000.0, 12.0, 0.012, "steady", 0, {})
    figure = drawn(charts.pools_figure(recording))
    ax = next(a for a in visible_axes(figure) if a.get_title().startswith("pool llm-quota"))
    assert ax.get_ylim()[1] < 100  # the demand (12) reads; the capacity (1000) is named
    assert [t.get_text() for t in ax.texts if t.get_text().startswith("capacity")] == [
        "capacity 1000, above this scale: the demand never nears it"
    ]


def _luminance(color: str) -> float:
    from matplotlib.colors import to_rgb

    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in to_rgb(color))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_event_labels_read_on_white() -> None:
    for color in charts.EVENT_COLORS:
        assert (1.05) / (_luminance(color) + 0.05) >= 4.5, color  # WCAG AA for text
