"""Bench: demand ingest over HTTP on loopback, batches of 100 lane reports.

Targets (issue 9): >= 5,000 lane reports/s, p99 request < 50 ms.
The API (``build_app``, uvicorn, tokens file with a destination-scoped token, so every request is
authenticated and scope-checked) runs in a child process; this process posts batches of 100 random
reports over 10,000 lanes from ``--clients`` threads, each with a keep-alive connection, and times
every request. Two sinks: the in-memory one of the tests, and the SQLite runtime store
(``controller.tick.sinking.StoreDemandSink``: one transaction per batch; reports are not fenced).

Usage: .venv/bin/python bench/bench_ingest.py [--requests 3000] [--paced-requests 1500]
       [--clients 4] [--sinks memory,sqlite]
Writes bench/RESULTS-ingest.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx

LANES = [f"dest{d}/lane{i}" for d in range(100) for i in range(100)]  # 10,000 lanes
BATCH = 100
TOKEN = "bench-token-for-dest-scope-checks"
TARGET_RATE = 5000.0
TARGET_P99_MS = 50.0


# -- the server (child process) ------------------------------------------------------------------


def _memory_port() -> object:
    from tests.memory_controller import MemoryPort

    port = MemoryPort(LANES)
    port.publish(dict.fromkeys(LANES, 1.0))
    return port


def _sqlite_port(db: str) -> object:
    from arklow_pulumi.controller.leadership.leasing import take_leadership
    from arklow_pulumi.controller.tick.sinking import StoreDemandSink
    from arklow_pulumi.store.engine import open_store

    store = open_store(f"sqlite:///{db}")
    leadership = take_leadership(store)
    # the attributes StoreDemandSink reads from the controller (no elector: SQLite, one process)
    controller = SimpleNamespace(
        store=store, lease=leadership.lease, elector=None, clock=SimpleNamespace(time=time.time)
    )
    store_sink = StoreDemandSink(controller)  # type: ignore[arg-type]
    known = frozenset(LANES)

    class Sink:
        def known_lanes(self) -> frozenset[str]:
            return known

        def accept(self, reports: object) -> int:
            return store_sink.accept(reports)  # type: ignore[arg-type]

    port = _memory_port()
    port.sink = Sink()  # type: ignore[attr-defined]
    return port


def serve(kind: str, db: str, tokens_file: str, port_file: str) -> None:
    import uvicorn

    from arklow_pulumi.controller.api.app import build_app
    from arklow_pulumi.controller.api.auth import TokenSet
    from arklow_pulumi.controller.api.metrics import Metrics

    port = _memory_port() if kind == "memory" else _sqlite_port(db)
    app = build_app(port, TokenSet.load(Path(tokens_file)), Metrics())  # type: ignore[arg-type]
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", access_log=False)
    server = uvicorn.Server(config)

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # TCP_NODELAY
    sock.bind(("127.0.0.1", 0))
    Path(port_file).write_text(str(sock.getsockname()[1]))
    server.run(sockets=[sock])


# -- the load (this process) ---------------------------------------------------------------------


class RawConnection:
    """A keep-alive HTTP/1.1 connection that sends prepared bytes and reads one answer: the load
    generator must cost far less than the server it measures (httpx costs more per request than
    the API does on 2 cores)."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    def exchange(self, request: bytes) -> tuple[int, bytes]:
        self.sock.sendall(request)
        while b"\r\n\r\n" not in self.buffer:
            self._read()
        head, _, rest = self.buffer.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = int(lines[0].split()[1])
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while len(rest) < length:
            self.buffer = rest
            self._read()
            rest = self.buffer
        self.buffer = rest[length:]
        return status, rest[:length]

    def _read(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("server closed the connection")
        self.buffer += chunk

    def close(self) -> None:
        self.sock.close()


def prepared(rng: random.Random, destination: int) -> bytes:
    lanes = [f"dest{destination}/lane{i}" for i in rng.sample(range(100), BATCH)]
    doc = {"reports": [{"lane": lane, "demand": rng.randint(0, 50)} for lane in lanes]}
    payload = json.dumps(doc).encode()
    head = (
        "POST /v1/demand HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\n\r\n"
    )
    return head.encode() + payload


def load(
    port: int, requests: int, clients: int, rate: float | None = None
) -> tuple[float, list[float], int]:
    """Send ``requests`` batches from ``clients`` connections. ``rate=None``: as fast as the
    server answers (closed loop). ``rate`` (requests/s, all clients together): each request has a
    scheduled time and its latency counts from then, so a slow answer delays the next and is
    charged for it (no coordinated omission)."""
    latencies: list[float] = []
    failures = [0]
    lock = threading.Lock()
    per_client = requests // clients
    expected = json.dumps({"accepted": BATCH}, separators=(",", ":")).encode()
    begin = time.perf_counter() + 0.1

    def worker(seed: int) -> None:
        rng = random.Random(seed)
        mine: list[float] = []
        payloads = [prepared(rng, 7) for _ in range(50)]
        connection = RawConnection(port)
        try:
            for i in range(per_client):
                start = time.perf_counter()
                if rate is not None:
                    start = begin + (i * clients + seed) / rate
                    pause = start - time.perf_counter()
                    if pause > 0:
                        time.sleep(pause)
                status, answer = connection.exchange(payloads[i % len(payloads)])
                mine.append((time.perf_counter() - start) * 1000)
                if status != 200 or answer != expected:
                    with lock:
                        failures[0] += 1
        finally:
            connection.close()
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(clients)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    return elapsed, latencies, failures[0]


def summary(elapsed: float, latencies: list[float], failures: int) -> dict[str, float]:
    return {
        "requests": len(latencies),
        "failures": failures,
        "rate": len(latencies) * BATCH / elapsed,
        "median": statistics.median(latencies),
        "p95": percentile(latencies, 0.95),
        "p99": percentile(latencies, 0.99),
        "max": max(latencies),
    }


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(
    kind: str, requests: int, paced_requests: int, clients: int, workdir: Path
) -> dict[str, dict[str, float]]:
    from tests.tokens import token_digest

    tokens_file = workdir / "tokens.yaml"
    tokens_file.write_text(
        f"tokens:\n  - {{name: bench, scope: 'destination:dest7', sha256: {token_digest(TOKEN)}}}\n"
    )
    port_file = workdir / f"{kind}.port"
    db = workdir / f"{kind}.db"
    child = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--serve",
            kind,
            "--db",
            str(db),
            "--tokens",
            str(tokens_file),
            "--port-file",
            str(port_file),
        ],
        cwd=ROOT,
    )
    try:
        deadline = time.monotonic() + 60
        while not (port_file.exists() and port_file.read_text()):
            if child.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the {kind} server did not start")
            time.sleep(0.05)
        port = int(port_file.read_text())
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.05)
        load(port, max(clients * 20, requests // 10), clients)  # warm-up
        cpu_before = cpu_seconds(child.pid)
        saturated = summary(*load(port, requests, clients))
        server_cpu = cpu_seconds(child.pid) - cpu_before
        paced = summary(*load(port, paced_requests, clients, rate=TARGET_RATE / BATCH))
    finally:
        child.terminate()
        child.wait(timeout=30)
    saturated["server_cpu_ms"] = server_cpu / saturated["requests"] * 1000
    return {"saturated": saturated, "paced": paced}


def _row(kind: str, phase: str, r: dict[str, float], verdict: str) -> str:
    cpu = f"{r['server_cpu_ms']:.2f}" if "server_cpu_ms" in r else ""
    return (
        f"| {kind} | {phase} | {int(r['requests'])} | {int(r['failures'])} | {r['rate']:,.0f} | "
        f"{r['median']:.2f} | {r['p95']:.2f} | {r['p99']:.2f} | {r['max']:.2f} | {cpu} | {verdict} |"
    )


def write_results(
    results: dict[str, dict[str, dict[str, float]]], clients: int, load: float
) -> Path:
    lines = [
        "# Ingest bench: demand reports over HTTP on loopback",
        "",
        f"`bench/bench_ingest.py` on {os.cpu_count()} cores (nproc), Python "
        f"{platform.python_version()}. The API (`build_app` on uvicorn, one worker, h11) runs in a "
        f"child process; {clients} connections from this process (keep-alive, prepared request "
        f"bytes so the load generator costs little) post batches of {BATCH} reports over 10,000 "
        "known lanes with a `destination:` token, so every request is authenticated and "
        "scope-checked. Sinks: `memory` (the tests' in-memory port) and `sqlite` (the runtime "
        "store through `controller.tick.sinking.StoreDemandSink`, one "
        "transaction per group of batches).",
        "",
        "Two phases per sink: **saturated** (closed loop, as fast as answers come: the throughput "
        f"figure) and **paced** at the target rate, {TARGET_RATE:,.0f} reports/s, open loop "
        "(latency from each request's scheduled time: the p99 figure). The target is met when the "
        "saturated rate is >= the target rate and the paced p99 is under "
        f"{TARGET_P99_MS:.0f} ms, with no failed request. Load average when the run started: "
        f"{load:.1f} (other sessions shared the 2 cores); `server CPU` is the API process's own "
        "CPU time per request in the saturated phase, which that load does not change.",
        "",
        "| sink | phase | requests | failures | lane reports/s | median ms | p95 ms | p99 ms "
        "| max ms | server CPU ms/request | result |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for kind, phases in results.items():
        sat, paced = phases["saturated"], phases["paced"]
        ok = (
            sat["rate"] >= TARGET_RATE
            and paced["p99"] < TARGET_P99_MS
            and sat["failures"] + paced["failures"] == 0
        )
        lines.append(_row(kind, "saturated", sat, f"rate >= {TARGET_RATE:,.0f}/s"))
        verdict = f"p99 < {TARGET_P99_MS:.0f} ms: **{'PASS' if ok else 'FAIL'}**"
        lines.append(_row(kind, "paced", paced, verdict))
    path = ROOT / "bench" / "RESULTS-ingest.md"
    path.write_text("\n".join(lines) + "\n")
    return path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--paced-requests", type=int, default=1500)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--sinks", default="memory,sqlite")
    parser.add_argument("--serve", choices=["memory", "sqlite"])
    parser.add_argument("--db", default="")
    parser.add_argument("--tokens", default="")
    parser.add_argument("--port-file", default="")
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.db, args.tokens, args.port_file)
        return
    results = {}
    loadavg = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.sinks.split(","):
            results[kind] = run(kind, args.requests, args.paced_requests, args.clients, Path(tmp))
            for phase, figures in results[kind].items():
                print(kind, phase, {k: round(v, 2) for k, v in figures.items()})
    print(f"wrote {write_results(results, args.clients, loadavg)}")


if __name__ == "__main__":
    main()
