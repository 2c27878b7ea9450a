"""The dev stack as the main job applies it: a copy of the root program under ``.arklow/run/``.

The copy (``Pulumi.yaml`` with an absolute ``virtualenv``, ``__main__.py``, ``stacks/`` with the
dev stack's config) keeps the run from touching the working tree: ``pulumi stack init`` writes an
``encryptionsalt`` into the stack's config file, and the mid-day join edits it. The file backend
(``state/``), ``PULUMI_HOME`` and the SQLite store (``arklow.db``) sit beside it and stay after
the run, to inspect.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from arklow_pulumi.core.errors import ArklowError

PULUMI_TIMEOUT_S = 900.0


class ScenarioError(ArklowError):
    """The main job cannot go on (no engine, a failed ``pulumi up``)."""


def find_pulumi(repo: Path) -> Path:
    built = repo / ".tools" / "bin" / "pulumi"
    if built.is_file() and os.access(built, os.X_OK):
        return built
    found = shutil.which("pulumi")
    if found:
        return Path(found)
    raise ScenarioError(
        "pulumi: the Pulumi engine is not installed (make engine builds it into .tools/bin)"
    )


class DevStack:
    """``pulumi`` commands on the copy of the dev stack in ``work``."""

    def __init__(
        self, repo: Path, work: Path, cloud_env: Mapping[str, str], stack: str = "dev"
    ) -> None:
        self.repo = repo
        self.work = work
        self.stack = stack
        self.project = work / "project"
        self.pulumi = find_pulumi(repo)
        self.store_url = f"sqlite:///{(work / 'arklow.db').resolve()}"
        venv_bin = Path(sys.prefix) / "bin"  # the venv this process runs from
        base = {k: v for k, v in os.environ.items() if not k.startswith(("PULUMI_", "ARKLOW_"))}
        self.env: dict[str, str] = {
            **base,
            **cloud_env,
            # the engine first, then the venv: dynamic providers run the python found on PATH
            "PATH": os.pathsep.join([str(self.pulumi.parent), str(venv_bin), base.get("PATH", "")]),
            "PULUMI_HOME": str(work / "pulumi-home"),
            "PULUMI_BACKEND_URL": f"file://{(work / 'state').resolve()}",
            "PULUMI_CONFIG_PASSPHRASE": "",
            "PULUMI_SKIP_UPDATE_CHECK": "1",
            "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
            "ARKLOW_STORE": self.store_url,
        }

    @property
    def config_file(self) -> Path:
        return self.project / "stacks" / f"Pulumi.{self.stack}.yaml"

    def prepare(self) -> None:
        """A fresh copy of the program and its stack config; the previous run's state is gone."""
        if self.work.exists():
            shutil.rmtree(self.work)
        (self.work / "state").mkdir(parents=True)
        (self.work / "pulumi-home").mkdir()
        (self.project / "stacks").mkdir(parents=True)
        project = yaml.safe_load((self.repo / "Pulumi.yaml").read_text())
        project["runtime"] = {"name": "python", "options": {"virtualenv": sys.prefix}}
        (self.project / "Pulumi.yaml").write_text(yaml.safe_dump(project, sort_keys=False))
        shutil.copy(self.repo / "__main__.py", self.project / "__main__.py")
        shutil.copy(self.repo / "stacks" / f"Pulumi.{self.stack}.yaml", self.config_file)
        self.run("stack", "init", self.stack)

    def topology(self) -> dict[str, Any]:
        config = yaml.safe_load(self.config_file.read_text())["config"]
        return dict(config["arklow:topology"])

    def join(self, destination: str, pool: str) -> None:
        """Make ``destination`` a member of ``pool`` in the stack's config (not applied yet)."""
        document = yaml.safe_load(self.config_file.read_text())
        pools = document["config"]["arklow:topology"]["pools"]
        spec = next((p for p in pools if p["name"] == pool), None)
        if spec is None:
            raise ScenarioError(f"stack '{self.stack}': pool {pool!r} is not declared")
        if destination not in spec["members"]:
            spec["members"].append(destination)
        self.config_file.write_text(yaml.safe_dump(document, sort_keys=False))

    def up(self) -> None:
        self.run("up", "--yes", "--skip-preview", "--stack", self.stack)

    def run(self, *args: str) -> str:
        try:
            result = subprocess.run(
                [str(self.pulumi), *args, "--non-interactive"],
                cwd=self.project,
                env=self.env,
                capture_output=True,
                text=True,
                timeout=PULUMI_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise ScenarioError(f"pulumi {args[0]}: no answer in {PULUMI_TIMEOUT_S:.0f}s") from None
        if result.returncode != 0:
            lines = [ln for ln in (result.stdout + result.stderr).splitlines() if "error" in ln]
            detail = lines[-1].strip() if lines else f"exit {result.returncode}"
            log = self.work / f"pulumi-{args[0]}.log"
            log.write_text(result.stdout + result.stderr)
            raise ScenarioError(f"pulumi {args[0]} failed: {detail} (full output: {log})")
        return result.stdout
