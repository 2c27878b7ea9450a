"""Run a GitHub Actions job's ``run:`` steps on this machine, in order, as the runner would.

What the runner does and this does too: the job's and each step's ``env:``; ``${{ ... }}``
expressions (the ones a test hands in, plus ``steps.<id>.outcome`` and
``steps.<id>.outputs.<name>``; any other fails the test, so a new one in the workflow is noticed);
each script run as ``bash -e`` in the checkout; lines a step appends to ``$GITHUB_PATH`` put first
on PATH for the later steps, and ``name=value`` lines in ``$GITHUB_OUTPUT`` become its outputs;
``continue-on-error``; a failed step skips the rest but for steps whose ``if:`` asks for a failure.
``uses:`` steps are GitHub's actions: they are listed, not run (the test stands in for them)."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


@dataclass
class Step:
    name: str
    outcome: str  # success, failure or skipped (as steps.<id>.outcome)
    outputs: dict[str, str] = field(default_factory=dict)
    stdout: str = ""
    stderr: str = ""


@dataclass
class Job:
    """One job of a workflow file, run step by step in ``checkout``."""

    document: Mapping[str, Any]
    checkout: Path
    work: Path
    values: Mapping[str, str]  # expression -> value (secrets.X, matrix.Y, github.Z)
    env: Mapping[str, str]  # the runner's own environment
    steps: dict[str, Step] = field(default_factory=dict)
    path: list[str] = field(default_factory=list)  # from $GITHUB_PATH, newest first
    failed: bool = False

    def value(self, expression: str) -> str:
        if expression in self.values:
            return self.values[expression]
        step = re.fullmatch(r"steps\.([\w-]+)\.(outcome|outputs\.([\w-]+))", expression)
        if step:
            done = self.steps[step.group(1)]
            return done.outcome if step.group(3) is None else done.outputs.get(step.group(3), "")
        raise AssertionError(
            f"the workflow uses an expression the test does not know: {expression}"
        )

    def expand(self, text: str) -> str:
        return EXPRESSION.sub(lambda m: self.value(m.group(1)), text)

    def condition(self, text: str) -> bool:
        """``if:``: one comparison ``A == 'b'`` (all this workflow uses)."""
        match = re.fullmatch(r"(\S+)\s*==\s*'([^']*)'", text.strip())
        assert match, f"the test reads only `A == 'b'` conditions: {text}"
        return self.value(match.group(1)) == match.group(2)

    def run(self, steps: list[Mapping[str, Any]], only: set[str] | None = None) -> list[str]:
        """Run ``steps`` (or those named in ``only``); the ``uses:`` actions skipped, named."""
        used = []
        for number, step in enumerate(steps):
            key = str(step.get("id") or step.get("name") or number)
            if "uses" in step:
                used.append(str(step["uses"]))
                continue
            if only is not None and step.get("name") not in only:
                continue
            wanted = self.condition(step["if"]) if "if" in step else not self.failed
            if not wanted:
                self.steps[key] = Step(str(step.get("name")), "skipped")
                continue
            self.steps[key] = done = self.run_script(step, number)
            if done.outcome == "failure" and not step.get("continue-on-error"):
                self.failed = True
        return used

    def run_script(self, step: Mapping[str, Any], number: int) -> Step:
        files = self.work / f"step-{number}"
        files.mkdir(parents=True, exist_ok=True)
        github_path, github_output = files / "path", files / "output"
        github_path.touch()
        github_output.touch()
        env = {
            **self.env,
            **{k: self.expand(str(v)) for k, v in (self.document.get("env") or {}).items()},
            **{k: self.expand(str(v)) for k, v in (step.get("env") or {}).items()},
            "GITHUB_PATH": str(github_path),
            "GITHUB_OUTPUT": str(github_output),
            "CI": "true",
        }
        env["PATH"] = os.pathsep.join([*self.path, self.env["PATH"]])
        script = files / "script.sh"
        script.write_text(self.expand(str(step["run"])))
        result = subprocess.run(
            ["bash", "-e", str(script)],
            cwd=self.checkout,
            env=env,
            capture_output=True,
            text=True,
            timeout=3600,
            check=False,
        )
        self.path[:0] = reversed(github_path.read_text().splitlines())
        outputs = dict(
            line.split("=", 1) for line in github_output.read_text().splitlines() if "=" in line
        )
        outcome = "success" if result.returncode == 0 else "failure"
        return Step(str(step.get("name")), outcome, outputs, result.stdout, result.stderr)
