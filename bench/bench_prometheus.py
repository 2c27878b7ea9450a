"""A real Prometheus server scraping a live controller (tests/monitoring/live.py: a real
``arklow controller run`` on the Compute API test server, every metric family populated), with
the project's alerting rules loaded (deploy/prometheus/arklow-rules.yaml).

Reports: the target's health and last scrape error, samples and series scraped, every rule's
health as evaluated by the server, and every query of the Grafana dashboard
(deploy/grafana/arklow.json) answered by the server (without an error, and with data). Exits 1
when any of these is not clean.

Prometheus is Debian's ``prometheus`` package (installed here with apt-get when missing and run
as root; a few seconds): the test suite does not need it (tests/monitoring checks the rules,
the dashboard and a scrape with promtool). Writes ``bench/RESULTS-prometheus.md``.
``python bench/bench_prometheus.py``.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

import httpx
import yaml

from tests.monitoring.live import INTERVAL_S, live_controller
from tests.monitoring.promql import instantiate

OUT = Path(__file__).with_name("RESULTS-prometheus.md")
RULES = ROOT / "deploy" / "prometheus" / "arklow-rules.yaml"
DASHBOARD = ROOT / "deploy" / "grafana" / "arklow.json"
SCRAPE_INTERVAL_S = 1
SCRAPES = 20  # scrapes to let happen before the queries (rates need a few)


def prometheus_binary() -> str:
    found = shutil.which("prometheus")
    if found:
        return found
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        sys.exit("bench_prometheus: no prometheus on PATH; install Debian's 'prometheus' package")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    print("bench_prometheus: installing Debian's prometheus package", file=sys.stderr)
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "prometheus"],
        check=True,
        env=env,
        stdout=subprocess.DEVNULL,
    )
    return shutil.which("prometheus") or "/usr/bin/prometheus"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def dashboard_queries() -> list[tuple[str, str]]:
    def walk(panels: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for panel in panels:
            out.append(panel)
            out += walk(panel.get("panels", []))
        return out

    board = json.loads(DASHBOARD.read_text())
    return [
        (f"{panel['title']} {target['refId']}", instantiate(target["expr"]))
        for panel in walk(board["panels"])
        for target in panel.get("targets", [])
    ]


def wait_for(probe: Any, what: str, deadline_s: float = 120.0) -> Any:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        try:
            answer = probe()
        except (httpx.HTTPError, ValueError, KeyError):  # not up yet: refused, 503 in plain text
            answer = None
        if answer:
            return answer
        time.sleep(0.5)
    sys.exit(f"bench_prometheus: gave up waiting for {what}")


def main() -> int:
    binary = prometheus_binary()
    shown = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True)
    version = "Prometheus " + shown.stdout.split("version ", 1)[1].split()[0]
    work = Path(tempfile.mkdtemp(prefix="bench-prometheus-"))
    started = time.monotonic()
    server = None
    try:
        with live_controller(work / "controller") as live:
            target = urlsplit(live.url).netloc
            config = {
                "global": {
                    "scrape_interval": f"{SCRAPE_INTERVAL_S}s",
                    "evaluation_interval": f"{SCRAPE_INTERVAL_S}s",
                },
                "rule_files": [str(RULES)],
                "scrape_configs": [
                    {"job_name": "arklow", "static_configs": [{"targets": [target]}]}
                ],
            }
            (work / "prometheus.yml").write_text(yaml.safe_dump(config))
            port = free_port()
            api = httpx.Client(base_url=f"http://127.0.0.1:{port}/api/v1", timeout=30)
            log = (work / "prometheus.log").open("w")
            server = subprocess.Popen(
                [
                    binary,
                    f"--config.file={work / 'prometheus.yml'}",
                    f"--storage.tsdb.path={work / 'data'}",
                    f"--web.listen-address=127.0.0.1:{port}",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )

            def scraped() -> dict[str, Any] | None:
                live.report()  # the lanes keep reporting while Prometheus scrapes
                active = api.get("/targets").json()["data"]["activeTargets"]
                return active[0] if active and active[0]["lastScrape"][:4] != "0001" else None

            wait_for(scraped, "the first scrape")
            for _ in range(SCRAPES):
                live.report()
                time.sleep(SCRAPE_INTERVAL_S)
            health = scraped()
            assert health is not None

            def value(query: str) -> float:
                result = api.get("/query", params={"query": query}).json()["data"]["result"]
                return float(result[0]["value"][1]) if result else float("nan")

            samples = value('scrape_samples_scraped{job="arklow"}')
            series = value('count({job="arklow"})')
            added = value('scrape_series_added{job="arklow"}')
            up = value('up{job="arklow"}')
            rules = [
                rule
                for group in api.get("/rules").json()["data"]["groups"]
                for rule in group["rules"]
            ]
            bad_rules = [(r["name"], r.get("lastError", "")) for r in rules if r["health"] != "ok"]
            firing = sorted(
                {a["labels"]["alertname"] for a in api.get("/alerts").json()["data"]["alerts"]}
            )
            answered, empty, failed = 0, [], []
            for name, query in dashboard_queries():
                answer = api.get("/query", params={"query": query}).json()
                if answer["status"] != "success":
                    failed.append(f"{name}: {answer.get('error')}")
                elif not answer["data"]["result"]:
                    empty.append(name)
                else:
                    answered += 1
            scrape_text = live.scrape()
            promtool = shutil.which("promtool")
            lint = (
                subprocess.run(
                    [promtool, "check", "metrics"],
                    input=scrape_text,
                    capture_output=True,
                    text=True,
                )
                if promtool
                else None
            )
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=60)
        shutil.rmtree(work, ignore_errors=True)

    clean = (
        up == 1.0
        and health["health"] == "up"
        and not health["lastError"]
        and not bad_rules
        and not failed
        and not empty
        and (lint is None or (lint.returncode == 0 and not lint.stdout and not lint.stderr))
    )
    lint_line = (
        "promtool not on PATH (scripts/install-promtool)"
        if lint is None
        else ("clean" if lint.returncode == 0 and not lint.stdout else lint.stdout.strip())
    )
    queries = dashboard_queries()
    lines = [
        "## A real Prometheus scrape (bench/bench_prometheus.py)",
        "",
        f"{datetime.date.today().isoformat()}, {version} (Debian's package), CPython "
        f"{platform.python_version()}, {os.cpu_count()} cores. A live `arklow controller run` "
        f"(interval {INTERVAL_S:g} s, 2 pools, 3 lanes, 2 MIG targets on the Compute API test "
        f"server, every metric family populated) scraped every {SCRAPE_INTERVAL_S} s with "
        "deploy/prometheus/arklow-rules.yaml loaded; "
        f"{time.monotonic() - started:.0f} s in all.",
        "",
        "| measure | value |",
        "|---|---|",
        f"| target health, last scrape error | {health['health']}, "
        f"{health['lastError'] or 'none'} |",
        f"| `up` | {up:g} |",
        f"| samples in one scrape (`scrape_samples_scraped`) | {samples:g} |",
        f'| series stored for the job (`count({{job="arklow"}})`, `up` and `scrape_*` '
        f"included) | {series:g} |",
        f"| new series in the last scrape (`scrape_series_added`) | {added:g} |",
        f"| alerting rules evaluated by the server, with an error | {len(rules)}, "
        f"{len(bad_rules)} {bad_rules or ''} |",
        f"| alerts firing or pending after {SCRAPES} s | {', '.join(firing) or 'none'} |",
        f"| dashboard queries answered with data / empty / refused | {answered} / "
        f"{len(empty)} / {len(failed)} (of {len(queries)}) |",
        f"| `promtool check metrics` on the same scrape | {lint_line} |",
        "",
        "Verdict: " + ("clean." if clean else "NOT clean (see the rows above)."),
    ]
    if empty or failed:
        lines += ["", "Queries without data or refused:", ""]
        lines += [f"- {item}" for item in empty + failed]
    OUT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())
