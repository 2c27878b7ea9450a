"""Run ``arklow`` on files written under a test's tmp_path: through its entry point in this
process (:func:`arklow`), or as a user does, a real process (:func:`arklow_process`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.arklow_cli import call

ARKLOW = [sys.executable, "-m", "arklow_pulumi.cli"]


def write_topology(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def write_trace(path: Path, rows: list[tuple[object, str, object]] | str) -> Path:
    if isinstance(rows, str):
        path.write_text(rows, encoding="utf-8")
    else:
        lines = ["time,lane,demand", *(f"{t},{lane},{d}" for t, lane, d in rows)]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def arklow(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """``arklow ARGS`` through its entry point in this process (:func:`tests.arklow_cli.call`:
    no interpreter and imports to start a call)."""
    return call([str(a) for a in args])


def arklow_process(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """``arklow ARGS`` as a real process: its own interpreter, streams and workers."""
    return subprocess.run(
        [*ARKLOW, *(str(a) for a in args)], capture_output=True, text=True, check=False
    )


def simulate_json(topology: Path, trace: Path, *extra: str) -> dict[str, Any]:
    proc = arklow("simulate", "--topology", topology, "--trace", trace, "--format", "json", *extra)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def assert_one_line_error(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def what_if_files(
    tmp_path: Path,
    before: dict[str, Any],
    after: dict[str, Any],
    trace: list[tuple[object, str, object]],
    *extra: str,
) -> subprocess.CompletedProcess[str]:
    """``arklow what-if`` on the two topologies and the trace, written under ``tmp_path``."""
    a = write_topology(tmp_path / "before.yaml", before)
    b = write_topology(tmp_path / "after.yaml", after)
    t = write_trace(tmp_path / "trace.csv", trace)
    return arklow("what-if", "--before", a, "--after", b, "--trace", t, *extra)


def document(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """A command's JSON, which must have exited 0."""
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc
