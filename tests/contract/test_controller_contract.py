"""DESIGN.md's controller contract, checked as an outside acceptance test would: a real
``arklow controller run`` process over real HTTP on loopback, a SQLite store filled through the
store code (as ``pulumi up`` would fill it), an Auto Scaling group on a moto server reached
through a small recording proxy, and a tokens file with one token per scope.

One controller serves the whole module; waits poll observable state, nothing asserts on timing.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import urllib.parse
import urllib.request
from collections.abc import Iterator
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests import aws_moto, loopback
from tests.arklow_cli import ARKLOW, only, run
from tests.builders import dest, lane, pool, target
from tests.controller_process import ControllerProcess, eventually, store_topology

ASG_MAX = 6
TOPOLOGY = {
    "destinations": [
        dest("search", ["gpu"], lane("interactive", 16, 3), lane("batch", 64)),
        dest("ingest", ["gpu"], lane("default", 10)),
    ],
    "pools": [
        pool(
            "shared-gpu",
            "gpu",
            ["search", "ingest"],
            4,
            scale_targets=[target("gpu-workers", 1, ASG_MAX, 8, 1, region=aws_moto.REGION)],
        )
    ],
}
LANES = {"search/interactive", "search/batch", "ingest/default"}
# Seconds between the controller's ticks: the tests wait for ticks (and for reports to expire,
# three ticks), never on a clock, so a short one only makes the waits short.
TICK_S = 0.5
TOKENS = {
    "admin": "tok-admin-5e1f",
    "read": "tok-read-77aa",
    "destination:search": "tok-search-90c3",
}


class RecordingProxy:
    """Forwards every request to the moto server and records the Auto Scaling action called."""

    def __init__(self, upstream: str) -> None:
        self.actions: list[str] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                params = urllib.parse.parse_qs((body or b"").decode("utf-8", "replace"))
                query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
                proxy.actions.append((params.get("Action") or query.get("Action") or ["?"])[0])
                headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                request = urllib.request.Request(
                    upstream + self.path, data=body, headers=headers, method=self.command
                )
                try:
                    with urllib.request.urlopen(request) as answer:
                        status, payload, reply = answer.status, answer.read(), answer.headers
                except urllib.error.HTTPError as error:
                    status, payload, reply = error.code, error.read(), error.headers
                self.send_response(status)
                for key, value in reply.items():
                    if key.lower() not in {"content-length", "transfer-encoding", "connection"}:
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = _forward

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def fill_store(path: Path, group: str = "gpu-workers") -> str:
    """A SQLite store at ``path`` holding TOPOLOGY, its Auto Scaling group named ``group``."""
    topology = json.loads(json.dumps(TOPOLOGY).replace("gpu-workers", group))
    return store_topology(f"sqlite:///{path}", topology)


class Setup:
    def __init__(
        self, work: Path, moto: Any, proxy: RecordingProxy, asg: Any, group: str = "gpu-workers"
    ) -> None:
        self.work, self.moto, self.proxy, self.asg, self.group = work, moto, proxy, asg, group
        self.env = {**aws_moto.aws_env(proxy.url), "PATH": str(Path(ARKLOW).parent)}
        self.env.pop("AWS_PROFILE", None)

    def asg_desired(self) -> int:
        groups = self.asg.describe_auto_scaling_groups(AutoScalingGroupNames=[self.group])
        return int(groups["AutoScalingGroups"][0]["DesiredCapacity"])


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    server, moto_url = aws_moto.start_server()
    proxy = RecordingProxy(moto_url)
    try:
        asg = aws_moto.autoscaling_client(moto_url)
        aws_moto.make_asg(asg, "gpu-workers", 0, 20, 1)
        yield Setup(tmp_path_factory.mktemp("contract-controller"), server, proxy, asg)
    finally:
        proxy.stop()
        server.stop()


class Controller(ControllerProcess):
    """The module's controller: a store holding TOPOLOGY, a tokens file with TOKENS."""

    def __init__(self, setup: Setup) -> None:
        work = setup.work / "run"
        (work / ".arklow").mkdir(parents=True)
        self.db = work / ".arklow" / "arklow.db"
        self.store = fill_store(self.db)
        lines = ["tokens:"]
        for scope, token in TOKENS.items():
            digest = hashlib.sha256(token.encode()).hexdigest()
            lines.append(f'  - {{name: "{scope}-token", scope: "{scope}", sha256: {digest}}}')
        tokens = work / "tokens.yaml"
        tokens.write_text("\n".join(lines) + "\n")
        super().__init__(work, self.store, "--tokens", str(tokens), interval=TICK_S, env=setup.env)


@pytest.fixture(scope="module")
def controller(setup: Setup) -> Iterator[Controller]:
    running = Controller(setup)
    try:
        yield running
    finally:
        running.end(timeout=30)


def client(controller: Controller, scope: str | None = "admin") -> httpx.Client:
    headers = {} if scope is None else {"Authorization": f"Bearer {TOKENS[scope]}"}
    return loopback.client(base_url=controller.url(), headers=headers, timeout=30)


@pytest.fixture(scope="module")
def admin(controller: Controller) -> httpx.Client:
    api = client(controller)
    eventually(lambda: api.get("/v1/admission").status_code == 200, "the first published tick")
    return api


def post(api: httpx.Client, reports: list[dict[str, Any]]) -> httpx.Response:
    return api.post("/v1/demand", json={"reports": reports})


def two_ticks_later(api: httpx.Client) -> dict[str, Any]:
    """The admission two published ticks from now: a report stored before would show in it."""
    start = int(api.get("/v1/admission").json()["tick"])

    def later() -> dict[str, Any] | None:
        doc: dict[str, Any] = api.get("/v1/admission").json()
        return doc if doc["tick"] >= start + 2 else None

    return eventually(later, "two more ticks")


def number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def check_lane(lane: dict[str, Any]) -> None:
    # The contract's four numbers; the product adds a per-lane "stale" flag (report past its TTL).
    assert (
        {"demand", "allocation", "held", "admission"}
        <= set(lane)
        <= {
            "demand",
            "allocation",
            "held",
            "admission",
            "stale",
        }
    )
    assert all(number(lane[k]) for k in ("demand", "allocation", "held", "admission")), lane


def test_health_needs_no_token(controller: Controller, admin: httpx.Client) -> None:
    anonymous = client(controller, None)
    assert anonymous.get("/healthz").status_code == 200
    eventually(lambda: anonymous.get("/readyz").status_code == 200, "readyz")


@pytest.mark.parametrize(
    "path", ["/v1/admission", "/v1/pools", "/v1/leader", "/v1/lanes/search/batch", "/metrics"]
)
def test_missing_or_unknown_token_is_401(
    controller: Controller, admin: httpx.Client, path: str
) -> None:
    assert client(controller, None).get(path).status_code == 401
    wrong = loopback.client(base_url=controller.url(), headers={"Authorization": "Bearer nope"})
    answer = wrong.get(path)
    assert answer.status_code == 401
    assert "nope" not in answer.text
    assert client(controller, "read").get(path).status_code == 200


def test_demand_in_admission_out(admin: httpx.Client) -> None:
    posted = post(
        admin, [{"lane": "search/batch", "demand": 70}, {"lane": "ingest/default", "demand": 3}]
    )
    assert posted.status_code == 200 and posted.json() == {"accepted": 2}

    def answered() -> dict[str, Any] | None:
        doc: dict[str, Any] = admin.get("/v1/admission").json()
        return doc if doc["lanes"]["search/batch"]["demand"] == 70 else None

    doc = eventually(answered, "the reported demand in the admission")
    assert set(doc) == {"tick", "time", "stale", "lanes"}
    assert isinstance(doc["tick"], int) and not isinstance(doc["tick"], bool)
    assert isinstance(doc["stale"], bool) and doc["stale"] is False
    assert datetime.fromisoformat(doc["time"].replace("Z", "+00:00")).tzinfo is not None
    assert set(doc["lanes"]) == LANES
    for figures in doc["lanes"].values():
        check_lane(figures)
    batch = doc["lanes"]["search/batch"]
    # demand is raw (70 over the limit of 64); allocation is capped by min(demand, limit).
    assert batch["allocation"] <= 64 and batch["admission"] <= 64
    assert batch["held"] == pytest.approx(min(70, 64) - batch["allocation"])


def test_etag_and_304(admin: httpx.Client) -> None:
    for _ in range(20):  # a tick may be published between the two requests
        first = admin.get("/v1/admission")
        etag = first.headers["ETag"]
        again = admin.get("/v1/admission", headers={"If-None-Match": etag})
        if again.status_code == 304:
            assert again.content == b""
            return
        assert again.status_code == 200
    pytest.fail("no 304 for an unchanged admission")


def test_one_lane(admin: httpx.Client) -> None:
    answer = admin.get("/v1/lanes/search/interactive")
    assert answer.status_code == 200
    lane = answer.json()
    # The lane's four numbers; the product adds "lane", "tick", "time" and "stale" around them.
    assert {"demand", "allocation", "held", "admission"} <= set(lane)
    assert all(number(lane[k]) for k in ("demand", "allocation", "held", "admission")), lane
    assert admin.get("/v1/lanes/search/nothing").status_code == 404


def test_pools_shape(admin: httpx.Client, setup: Setup) -> None:
    def scaled() -> dict[str, Any] | None:
        post(admin, [{"lane": "search/batch", "demand": 70}])
        doc: dict[str, Any] = admin.get("/v1/pools").json()
        target = doc["pools"]["shared-gpu"]["targets"]["gpu-workers"]
        return doc if target["desired"] == ASG_MAX else None

    doc = eventually(scaled, "the target to reach its max")
    assert set(doc) == {"tick", "pools"} and isinstance(doc["tick"], int)
    assert set(doc["pools"]) == {"shared-gpu"}
    pool = doc["pools"]["shared-gpu"]
    keys = {"resource", "capacity", "demand", "pressure", "state", "desired_replicas", "targets"}
    assert set(pool) == keys
    assert pool["resource"] == "gpu" and pool["state"] in {"idle", "steady", "constrained"}
    assert number(pool["capacity"]) and number(pool["demand"])
    assert pool["pressure"] is None or number(pool["pressure"])
    target = pool["targets"]["gpu-workers"]
    assert set(target) == {"desired", "in_service", "pending", "min", "max"}
    assert (target["min"], target["max"]) == (1, ASG_MAX)
    assert all(isinstance(v, int) for v in target.values())
    # (70 capped at 64) + 3 = 67 units × 1.1 = 73.7, static 4 → ceil(69.7 / 8) = 9 → max 6.
    assert pool["desired_replicas"] == ASG_MAX
    eventually(lambda: setup.asg_desired() == ASG_MAX, "the group resized to its max")
    assert setup.asg_desired() <= ASG_MAX


def test_leader(admin: httpx.Client) -> None:
    doc = admin.get("/v1/leader").json()
    assert set(doc) == {"leader", "holder", "epoch"}
    assert doc["leader"] is True and isinstance(doc["holder"], str) and doc["epoch"] == 1


def test_metrics_names(admin: httpx.Client) -> None:
    answer = admin.get("/metrics")
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/plain")
    names = {
        line.split("{")[0].split(" ")[0]
        for line in answer.text.splitlines()
        if line and not line.startswith("#")
    }
    assert names and all(name.startswith("arklow_") for name in names), sorted(names)


def test_destination_token_scope(controller: Controller, admin: httpx.Client) -> None:
    search = client(controller, "destination:search")
    doc = search.get("/v1/admission").json()
    assert set(doc["lanes"]) == {"search/interactive", "search/batch"}
    assert search.get("/v1/lanes/search/batch").status_code == 200
    assert search.get("/v1/lanes/ingest/default").status_code == 403
    own = post(search, [{"lane": "search/interactive", "demand": 2}])
    assert own.status_code == 200 and own.json() == {"accepted": 1}
    # A batch with one lane outside the scope is refused whole; the item is named.
    refused = post(
        search,
        [{"lane": "search/interactive", "demand": 5}, {"lane": "ingest/default", "demand": 9}],
    )
    assert refused.status_code == 403 and "ingest/default" in refused.text
    assert (
        post(client(controller, "read"), [{"lane": "search/batch", "demand": 1}]).status_code == 403
    )
    # The other destination's demand, as an admin reports it (this test does not lean on another
    # test's report: each runs alone, in any order, on any worker).
    assert post(admin, [{"lane": "ingest/default", "demand": 3}]).status_code == 200
    lanes = two_ticks_later(admin)["lanes"]
    assert lanes["search/interactive"]["demand"] == 2 and lanes["ingest/default"]["demand"] == 3


BAD_BATCHES = [
    (b"{not json", 400, ""),
    (b'{"reports": [GOOD, {"lane": "x/y", "demand": 1}]}', 422, "x/y"),
    (b'{"reports": [GOOD, {"lane": "ingest/default", "demand": -1}]}', 422, "ingest/default"),
    (b'{"reports": [GOOD, {"lane": "ingest/default", "demand": NaN}]}', 422, "ingest/default"),
    (b'{"reports": [GOOD, {"lane": "ingest/default", "demand": 1e999}]}', 422, "ingest/default"),
    (b'{"reports": [GOOD, {"lane": "ingest/default"}]}', 422, "ingest/default"),
]


def test_bad_batches_are_refused_whole(admin: httpx.Client) -> None:
    before = admin.get("/v1/admission").json()["lanes"]["search/interactive"]["demand"]
    assert before != 7
    for body, status, named in BAD_BATCHES:
        body = body.replace(b"GOOD", b'{"lane": "search/interactive", "demand": 7}')
        headers = {"Content-Type": "application/json"}
        answer = admin.post("/v1/demand", content=body, headers=headers)
        assert answer.status_code == status, (body, answer.text)
        assert named in answer.text
    assert two_ticks_later(admin)["lanes"]["search/interactive"]["demand"] == before


def test_oversized_body_is_413(admin: httpx.Client) -> None:
    reports = [{"lane": "search/batch", "demand": 1}] * 60_000
    assert post(admin, reports).status_code == 413


def test_tokens_never_in_output(controller: Controller, admin: httpx.Client) -> None:
    text = controller.out.read_text() + controller.err.read_text() + admin.get("/metrics").text
    for token in TOKENS.values():
        assert token not in text
    assert "Traceback" not in controller.err.read_text()


def test_expired_reports_count_zero_for_scaling_and_keep_admission(admin: httpx.Client) -> None:
    post(admin, [{"lane": "search/batch", "demand": 70}])
    kept = two_ticks_later(admin)["lanes"]["search/batch"]
    assert kept["admission"] > 0

    def expired() -> dict[str, Any] | None:  # TTL: 3 intervals (TICK_S) without a newer report
        doc: dict[str, Any] = admin.get("/v1/pools").json()
        return doc if doc["pools"]["shared-gpu"]["demand"] == 0 else None

    pools = eventually(expired, "the reports to expire")["pools"]["shared-gpu"]
    assert pools["state"] == "idle"
    lane = admin.get("/v1/admission").json()["lanes"]["search/batch"]
    assert lane["demand"] == 70  # the last reported value, raw
    later = two_ticks_later(admin)["lanes"]["search/batch"]
    assert later["admission"] == lane["admission"] > 0  # the last admission is kept


def test_export_trace_feeds_simulate(controller: Controller, admin: httpx.Client) -> None:
    post(admin, [{"lane": "search/interactive", "demand": 5}])
    two_ticks_later(admin)
    work = controller.db.parent.parent
    trace = work / "trace.csv"
    argv = ["controller", "export-trace", "--store", controller.store]
    exported = run([*argv, "--since", "1h", "--output", str(trace)], cwd=work)
    assert exported.returncode == 0, exported.stderr
    lines = trace.read_text().splitlines()
    assert lines[0] == "time,lane,demand"
    rows = [line.split(",") for line in lines[1:]]
    assert {lane for _, lane, _ in rows} <= LANES
    assert ("search/interactive", 5.0) in {(lane, float(value)) for _, lane, value in rows}
    times = [float(t) for t, _, _ in rows]
    assert times == sorted(times) and times[0] >= 0
    topology = work / "topology.json"
    topology.write_text(json.dumps(TOPOLOGY))
    simulated = run(["simulate", "--topology", str(topology), "--trace", str(trace)], cwd=work)
    assert simulated.returncode == 0, simulated.stderr


@pytest.fixture
def quiet_setup(tmp_path: Path) -> Iterator[Setup]:
    """A recording proxy and a group of its own (moto servers in one process share their state,
    and the module's controller keeps resizing its group)."""
    server, moto_url = aws_moto.start_server()
    proxy = RecordingProxy(moto_url)
    try:
        asg = aws_moto.autoscaling_client(moto_url)
        aws_moto.make_asg(asg, "plan-workers", 0, 20, 1)
        yield Setup(tmp_path, server, proxy, asg, "plan-workers")
    finally:
        proxy.stop()
        server.stop()


def test_plan_exits_0_and_writes_nothing(quiet_setup: Setup) -> None:
    setup = quiet_setup
    work = setup.work / "plan"
    (work / ".arklow").mkdir(parents=True)
    db = work / ".arklow" / "arklow.db"
    store = fill_store(db, setup.group)
    setup.asg.set_desired_capacity(AutoScalingGroupName=setup.group, DesiredCapacity=9)
    files_before = {p.name: p.read_bytes() for p in db.parent.iterdir()}
    calls_before = len(setup.proxy.actions)
    outputs = {}
    for fmt in ("json", "table"):
        argv = ["controller", "plan", "--store", store, "--format", fmt]
        result = run(argv, env=setup.env, cwd=work, cleared=only(setup.env))
        assert result.returncode == 0, result.stderr
        outputs[fmt] = result.stdout
    assert "plan-workers" in outputs["table"]
    table_lines = outputs["table"].splitlines()
    for title in ("POOLS", "TARGETS", "LANES", "CHANGES"):
        assert title in table_lines, outputs["table"]
    # numbers as the other tables print them: no float with more than six significant digits
    assert not re.search(r"\d\.\d{7,}", outputs["table"]), outputs["table"]
    plan = json.loads(outputs["json"])
    assert set(plan["lanes"]) == LANES
    desired = plan["pools"]["shared-gpu"]["targets"]["plan-workers"]["desired"]
    assert 1 <= desired <= ASG_MAX  # 9 in the cloud: the decision brings it back within bounds
    files_after = {p.name: p.read_bytes() for p in db.parent.iterdir()}
    assert files_after == files_before  # not one byte of the store
    calls = setup.proxy.actions[calls_before:]
    assert calls and all(action.startswith("Describe") for action in calls), calls
    assert setup.asg_desired() == 9
