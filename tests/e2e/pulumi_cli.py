"""Drive the real Pulumi CLI against a throwaway copy of the project's root program.

Everything a run needs lives in one temporary directory: the project copy (``Pulumi.yaml`` with an
absolute ``virtualenv:``, ``__main__.py``, ``stacks/``), a file backend (``state/``), a
``PULUMI_HOME`` and, by default, the SQLite store ``.arklow/arklow.db`` beside the copied
``Pulumi.yaml``. Commands run offline with the passphrase secrets provider.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from tests import arklow_cli

REPO = Path(__file__).resolve().parents[2]
# `make check` runs only the tests that need no engine: there the engine is not found, so a test
# that drives it without its e2e marker fails instead of running.
ABSENT_ENV = "ARKLOW_TEST_NO_ENGINE"
ABSENT = os.environ.get(ABSENT_ENV) == "1"
TOOLS_BIN = REPO / ".tools" / ("no-engine" if ABSENT else "bin")
PULUMI = TOOLS_BIN / "pulumi"
VENV = Path(sys.prefix) if (Path(sys.prefix) / "bin" / "python").exists() else REPO / ".venv"
ARKLOW = VENV / "bin" / "arklow"

MISSING_ENGINE = (
    f"{ABSENT_ENV}=1 (make check): this test drives the Pulumi engine, so it needs @pytest.mark.e2e"
    if ABSENT
    else f"the Pulumi engine is not installed ({PULUMI} is missing): run scripts/install-pulumi "
    "(or set ARKLOW_SKIP_E2E=1 to skip the end-to-end tests)"
)


class PulumiError(RuntimeError):
    """A pulumi command failed; carries its output so a test can assert on the message."""

    def __init__(
        self, args: list[str], result: subprocess.CompletedProcess[str], document: Any = None
    ) -> None:
        self.command = args
        self.returncode = result.returncode
        self.stdout = result.stdout
        self.stderr = result.stderr
        self.document = document
        shown = "\n".join(self.errors) if self.errors else result.stdout[-6000:]
        super().__init__(
            f"pulumi {' '.join(args)} exited {result.returncode}\n"
            f"--- output ---\n{shown}\n--- stderr ---\n{result.stderr[-6000:]}"
        )

    @property
    def output(self) -> str:
        return f"{self.stdout}\n{self.stderr}"

    @property
    def errors(self) -> list[str]:
        """The engine's error diagnostics (``--json`` runs), without the ``error: `` prefix."""
        if not isinstance(self.document, dict):
            return []
        found = []
        for diag in self.document.get("diagnostics") or []:
            if diag.get("severity") == "error":
                message = str(diag.get("message", "")).strip()
                found.append(message.removeprefix("error: "))
        return found


def engine_available() -> bool:
    return PULUMI.is_file() and os.access(PULUMI, os.X_OK)


def write_project(
    directory: Path,
    main_source: str | None = None,
    name: str = "arklow",
    venv: Path = VENV,
) -> Path:
    """A copy of the root program (or ``main_source`` as ``__main__.py``) in ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    project = yaml.safe_load((REPO / "Pulumi.yaml").read_text())
    project["name"] = name
    project.setdefault("runtime", {"name": "python"})
    if isinstance(project["runtime"], str):
        project["runtime"] = {"name": project["runtime"]}
    project["runtime"].setdefault("options", {})["virtualenv"] = str(venv)
    project["stackConfigDir"] = "stacks"
    (directory / "Pulumi.yaml").write_text(yaml.safe_dump(project, sort_keys=False))
    source = main_source if main_source is not None else (REPO / "__main__.py").read_text()
    (directory / "__main__.py").write_text(source)
    (directory / "stacks").mkdir(exist_ok=True)
    return directory


class Stack:
    """One stack of a project directory, on its own file backend and PULUMI_HOME."""

    def __init__(
        self,
        project: Path,
        work: Path,
        name: str = "dev",
        env: Mapping[str, str] | None = None,
        timeout: float = 600,
    ) -> None:
        self.project = project
        self.name = name
        self.timeout = timeout
        state = work / "state"
        home = work / "pulumi-home"
        state.mkdir(parents=True, exist_ok=True)
        home.mkdir(parents=True, exist_ok=True)
        base = {k: v for k, v in os.environ.items() if not k.startswith(("PULUMI_", "ARKLOW_"))}
        base.pop("VIRTUAL_ENV", None)
        self.env: dict[str, str] = {
            **base,
            # The engine, then the venv: dynamic providers run the python found on PATH.
            "PATH": os.pathsep.join([str(TOOLS_BIN), str(VENV / "bin"), base.get("PATH", "")]),
            "PULUMI_HOME": str(home),
            "PULUMI_BACKEND_URL": f"file://{state}",
            "PULUMI_CONFIG_PASSPHRASE": "",
            "PULUMI_SKIP_UPDATE_CHECK": "1",
            "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
            "PULUMI_IGNORE_AMBIENT_PLUGINS": "false",
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
            **(env or {}),
        }
        self.timings: list[tuple[str, float]] = []

    # -- files -----------------------------------------------------------------------------

    @property
    def config_file(self) -> Path:
        return self.project / "stacks" / f"Pulumi.{self.name}.yaml"

    @property
    def default_store_path(self) -> Path:
        return self.project / ".arklow" / "arklow.db"

    @property
    def store_url(self) -> str:
        return self.env.get("ARKLOW_STORE") or f"sqlite:///{self.default_store_path}"

    def set_config(self, config: Mapping[str, Any]) -> None:
        """Write ``stacks/Pulumi.<stack>.yaml`` (keys like ``arklow:topology``)."""
        self.config_file.write_text(yaml.safe_dump({"config": dict(config)}, sort_keys=False))

    def set_topology(self, topology: Mapping[str, Any]) -> None:
        self.set_config({"arklow:topology": topology})

    # -- commands --------------------------------------------------------------------------

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        argv = [str(PULUMI), *args, "--non-interactive"]
        started = time.perf_counter()
        result = subprocess.run(
            argv,
            cwd=self.project,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=self.timeout,
            check=False,
        )
        self.timings.append((" ".join(args[:1]), time.perf_counter() - started))
        if check and result.returncode != 0:
            raise PulumiError(list(args), result)
        return result

    def arklow(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """``arklow ARGS`` (:func:`tests.arklow_cli.run`) in the project, with exactly the stack's
        environment: what it leaves out of this process's stays out."""
        cleared = arklow_cli.only(self.env)
        return arklow_cli.run(
            list(args), env=self.env, cwd=self.project, timeout=timeout, cleared=cleared
        )

    def run_json(self, *args: str, check: bool = True) -> Any:
        result = self.run(*args, "--json", check=False)
        try:
            document = parse_json_output(result.stdout)
        except json.JSONDecodeError as exc:
            raise PulumiError([*args, "--json"], result) from exc
        if check and result.returncode != 0:
            raise PulumiError([*args, "--json"], result, document)
        return document

    def init(self) -> Stack:
        self.run("stack", "init", self.name)
        return self

    def select_args(self) -> tuple[str, ...]:
        return ("--stack", self.name)

    def preview(self, *extra: str) -> Any:
        return self.run_json("preview", *self.select_args(), *extra)

    def up(self, *extra: str) -> Any:
        return self.run_json("up", "--yes", "--skip-preview", *self.select_args(), *extra)

    def refresh(self, *extra: str) -> Any:
        return self.run_json("refresh", "--yes", "--skip-preview", *self.select_args(), *extra)

    def refresh_preview(self, *extra: str) -> Any:
        return self.run_json("refresh", "--preview-only", *self.select_args(), *extra)

    def destroy(self, *extra: str) -> Any:
        return self.run_json("destroy", "--yes", "--skip-preview", *self.select_args(), *extra)

    def export(self) -> Any:
        return self.run_json_plain("stack", "export", *self.select_args())

    def run_json_plain(self, *args: str) -> Any:
        return json.loads(self.run(*args).stdout)

    def resources(self) -> list[dict[str, Any]]:
        """The stack's resources in state (without the stack and provider resources)."""
        deployment = self.export()["deployment"]
        return [r for r in deployment.get("resources") or [] if not r["type"].startswith("pulumi:")]

    def outputs(self) -> dict[str, Any]:
        return self.run_json("stack", "output", *self.select_args())

    # -- the store -------------------------------------------------------------------------

    def topology(self) -> dict[str, Any]:
        """What ``arklow topology show --format json`` prints for this stack's store."""
        result = self.arklow("topology", "show", "--store", self.store_url, "--format", "json")
        if result.returncode != 0:
            raise RuntimeError(f"arklow topology show failed:\n{result.stdout}\n{result.stderr}")
        return json.loads(result.stdout)


# -- reading engine JSON -----------------------------------------------------------------------


def parse_json_output(stdout: str) -> Any:
    """``preview --json`` prints one document; ``up``/``refresh``/``destroy --json`` print one
    engine event per line. Events become a document of the same shape as a preview's: ``steps``
    (from ``resourcePreEvent``), ``outputs`` (``resOutputsEvent`` metadata), ``changeSummary``,
    ``diagnostics`` and the raw ``events``."""
    text = stdout.strip()
    if not text:
        return {}
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    events = [json.loads(line) for line in text.splitlines() if line.strip()]
    doc: dict[str, Any] = {"events": events, "steps": [], "outputs": [], "diagnostics": []}
    for event in events:
        if "resourcePreEvent" in event:
            doc["steps"].append(event["resourcePreEvent"]["metadata"])
        elif "resOutputsEvent" in event:
            doc["outputs"].append(event["resOutputsEvent"]["metadata"])
        elif "diagnosticEvent" in event:
            diag = event["diagnosticEvent"]
            if diag.get("severity") != "debug":
                doc["diagnostics"].append(diag)
        elif "summaryEvent" in event:
            doc["changeSummary"] = event["summaryEvent"].get("resourceChanges") or {}
            doc["result"] = event["summaryEvent"].get("result")
    return doc


def short_type(urn_or_type: str) -> str:
    """``pulumi-python:dynamic/arklow:Pool`` -> ``Pool``; ``...::Pool::name`` urn -> ``Pool``."""
    if urn_or_type.startswith("urn:"):
        urn_or_type = urn_or_type.split("::")[2]
    return urn_or_type.rsplit(":", 1)[-1]


def resource_name(urn: str) -> str:
    return urn.split("::", 3)[3]


def steps(result: Any) -> list[dict[str, Any]]:
    """The steps of ``pulumi preview --json`` (or ``up --json``), stack/provider steps dropped."""
    found = result.get("steps") or [] if isinstance(result, dict) else []
    return [s for s in found if not short_type(s["urn"]).startswith(("Stack", "provider"))]


def arklow_steps(result: Any, ops: Iterable[str] | None = None) -> list[tuple[str, str, str]]:
    """(op, type, name) for every Arklow step, sorted; ``same`` steps unless ``ops`` says."""
    wanted = set(ops) if ops is not None else None
    out = []
    for step in steps(result):
        urn = step["urn"]
        if "arklow" not in urn.split("::")[2]:
            continue
        if wanted is not None and step["op"] not in wanted:
            continue
        if wanted is None and step["op"] == "same":
            continue
        out.append((step["op"], short_type(urn), resource_name(urn)))
    return sorted(out)


def count_ops(result: Any) -> Counter[tuple[str, str]]:
    return Counter((op, kind) for op, kind, _ in arklow_steps(result))
