"""The dev stack as the main job applies it: a working copy of the root program under
``.arklow/run/``, its stack handled through Pulumi's Automation API.

No tracked file is written, and none needs to be there: when ``pulumi stack rm dev`` (Pulumi's
advice after ``destroy``) has deleted ``stacks/Pulumi.dev.yaml``, the copy is made from git's
committed one (:func:`~arklow_pulumi.devservers.clouds.committed_settings`); the run has its
own state and ``PULUMI_HOME``, so a ``destroy`` or a deleted ``.pulumi`` elsewhere changes nothing
here. The stack is created (and selected) with
``create_or_select_stack``, which, like ``pulumi stack init``, writes an ``encryptionsalt`` line
into the stack's settings file, and the mid-day join is a ``set_config`` of one path
(``arklow:topology.pools[i].members[n]``), which the CLI writes into that file node by node.
Both would edit ``stacks/Pulumi.dev.yaml`` in the working tree, so they run on a copy:
``Pulumi.yaml`` (with an absolute ``virtualenv``), ``__main__.py`` and ``stacks/`` with the dev
stack's settings copied byte for byte. Its comments and layout survive both edits (a YAML load
and dump would drop them). The file backend (``state/``), ``PULUMI_HOME`` and the SQLite store
(``arklow.db``) sit beside the copy and stay after the run, to inspect.

``pulumi up`` itself runs as a subprocess with a deadline (the Automation API has none).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from arklow_pulumi.core.errors import ArklowError, InvalidInput
from arklow_pulumi.devservers.clouds import committed_settings
from arklow_pulumi.reading.files import read_document

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
    """The copy of the dev stack in ``work``: its settings through the Automation API, its
    ``pulumi up`` through the CLI."""

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
        self._handle: Any = None

    @property
    def config_file(self) -> Path:
        return self.project / "stacks" / f"Pulumi.{self.stack}.yaml"

    def prepare(self) -> None:
        """A fresh copy of the program and its stack settings, and the stack (created); the
        previous run's state is gone."""
        if self.work.exists():
            shutil.rmtree(self.work)
        (self.work / "state").mkdir(parents=True)
        (self.work / "pulumi-home").mkdir()
        (self.project / "stacks").mkdir(parents=True)
        path = self.repo / "Pulumi.yaml"
        found = read_document(path, "project")
        if not isinstance(found, Mapping):
            raise InvalidInput.one(f"project file {str(path)!r}", "(document)", "is not a mapping")
        project = json.loads(json.dumps(found))  # plain str for a YAML 1.1 scalar kept as text
        project["runtime"] = {"name": "python", "options": {"virtualenv": sys.prefix}}
        (self.project / "Pulumi.yaml").write_text(yaml.safe_dump(project, sort_keys=False))
        shutil.copy(self.repo / "__main__.py", self.project / "__main__.py")
        # byte for byte; git's committed copy when `pulumi stack rm` deleted the file
        text, _note = committed_settings(self.repo, self.stack)
        self.config_file.write_bytes(text.encode("utf-8"))
        self._stack()

    def _stack(self) -> Any:
        """The Automation API's handle on the copy's stack (created or selected once)."""
        if self._handle is None:
            from pulumi.automation import LocalWorkspaceOptions, create_or_select_stack

            options = LocalWorkspaceOptions(
                work_dir=str(self.project),
                pulumi_home=self.env["PULUMI_HOME"],
                env_vars=self._automation_env(),
                pulumi_command=self._command(),
            )
            work_dir = str(self.project)
            self._handle = self._automation(
                "stack init",
                lambda: create_or_select_stack(self.stack, work_dir=work_dir, opts=options),
            )
        return self._handle

    def _command(self) -> Any:
        """The CLI this run found (``.tools/bin/pulumi`` or the one on PATH)."""
        from pulumi.automation import PulumiCommand

        return PulumiCommand(root=str(self.pulumi.parent.parent), skip_version_check=True)

    def _automation_env(self) -> dict[str, str]:
        """What the Automation API's commands run with. It starts from this process's
        environment, so each ``PULUMI_``/``ARKLOW_`` variable of it that the run does not set
        is set empty here (unset, to the CLI): no user backend, passphrase file or store leaks
        into the run."""
        cleared = {k: "" for k in os.environ if k.startswith(("PULUMI_", "ARKLOW_"))}
        return {**cleared, **self.env}

    def topology(self) -> dict[str, Any]:
        """``arklow:topology`` of the stack, as its settings hold it now."""
        value = self._automation(
            "config get", lambda: self._stack().get_config("arklow:topology").value
        )
        return dict(json.loads(value))

    def join(self, destination: str, pool: str) -> None:
        """Make ``destination`` a member of ``pool`` in the stack's settings (applied by the
        next :meth:`up`): one path set, the rest of the file as it was, comments included."""
        pools = self.topology()["pools"]
        index = next((i for i, p in enumerate(pools) if p["name"] == pool), None)
        if index is None:
            raise ScenarioError(f"stack '{self.stack}': pool {pool!r} is not declared")
        members = pools[index].get("members") or []
        if destination in members:
            return
        from pulumi.automation import ConfigValue

        key = f"arklow:topology.pools[{index}].members[{len(members)}]"
        self._automation(
            "config set",
            lambda: self._stack().set_config(key, ConfigValue(value=destination), path=True),
        )

    def up(self) -> None:
        self.run("up", "--yes", "--skip-preview", "--stack", self.stack)

    def _automation(self, what: str, call: Any) -> Any:
        from pulumi.automation import CommandError

        try:
            return call()
        except CommandError as exc:
            text = str(exc)
            lines = [ln.strip() for ln in text.splitlines() if "error" in ln.lower()]
            detail = lines[-1] if lines else "see its output"
            log = self.work / f"pulumi-{what.replace(' ', '-')}.log"
            log.write_text(text)
            raise ScenarioError(f"pulumi {what} failed: {detail} (full output: {log})") from None

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
