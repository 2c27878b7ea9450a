"""Shown outputs in README.md and docs/*.md, run and compared (tests/docs) or rewritten (``make
docs-outputs``).

A fenced block right after a line ``<!-- docs-output -->`` is a terminal session: each line that
starts with ``$ `` is a command (continued by a trailing ``\\`` or a here-document up to its
delimiter), and the lines after it, up to the next command, are what it prints (stdout and stderr,
as a terminal shows them). The commands of one block run in order in one fresh temporary
directory, each in ``bash`` with the venv's ``arklow`` first on PATH and the repository's
``examples/`` copied in; a block that needs a file makes it itself (a ``cat > t.yaml <<'EOF'``),
so nothing is left in the repository (the directory itself prints as ``…``). The comparison is
exact, except for ``…``: a line that is only ``…`` stands for any number of lines, and ``…``
inside a line for any text (a path, a time).

A block that needs more than files (a stack up on the local clouds) names a set-up instead:
``<!-- docs-output setup: tools/docs_stack_up.sh ARGS -->``, a script (path from the repository)
run first in the session's directory, its output not shown; the environment it leaves in
``.docs-env`` (export lines) is the session's shell's, as the README's shell keeps what its
Pulumi section exported.

``python tools/docs_outputs.py --write`` runs every block and writes what the commands print
now in place of what is shown: a block without ``…`` is replaced whole; in a block with ``…``,
each shown line is replaced by the printed line it stands for (found in order by its first
word), so the elisions stay as they are. ``--check`` (the default) prints the blocks that
differ and exits 1 when one does.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MARKER = "<!-- docs-output -->"
SETUP = re.compile(r"^<!-- docs-output setup: (.+) -->$")
ENV_FILE = ".docs-env"  # what a set-up leaves for the session's shell (export lines)
ELLIPSIS = "…"
TIMEOUT_S = 600.0
HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")


@dataclass(frozen=True, slots=True)
class Step:
    command: list[str]  # the lines of the command, ``$ `` removed from the first
    shown: list[str]  # what the document shows it printing


@dataclass(frozen=True, slots=True)
class Block:
    path: Path
    start: int  # index of the first line inside the fence
    end: int  # index of the closing fence
    steps: list[Step]
    setup: str | None = None  # a command run first, unshown (``<!-- docs-output setup: … -->``)

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.start}"


def documents() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def blocks(path: Path) -> Iterator[Block]:
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        setup = SETUP.match(lines[i].strip())
        if lines[i].strip() == MARKER or setup:
            fence = i + 1
            if fence >= len(lines) or not lines[fence].startswith("```"):
                raise ValueError(f"{path}:{i + 1}: {MARKER} must be followed by a fenced block")
            end = next(
                (j for j in range(fence + 1, len(lines)) if lines[j].startswith("```")), None
            )
            if end is None:
                raise ValueError(f"{path}:{fence + 1}: the fenced block is never closed")
            steps = _steps(lines[fence + 1 : end], path, fence + 1)
            yield Block(path, fence + 1, end, steps, setup.group(1) if setup else None)
            i = end
        i += 1


def _steps(body: list[str], path: Path, first: int) -> list[Step]:
    steps: list[Step] = []
    i = 0
    if body and not body[0].startswith("$ "):
        raise ValueError(f"{path}:{first + 1}: a shown session starts with a '$ ' command")
    while i < len(body):
        command = [body[i][2:]]
        i += 1
        delimiter = _heredoc(command[0])
        while i < len(body) and (command[-1].endswith("\\") or delimiter):
            command.append(body[i])
            i += 1
            if delimiter and command[-1].strip() == delimiter:
                delimiter = None
            elif not delimiter:
                delimiter = _heredoc(command[-1])
        shown: list[str] = []
        while i < len(body) and not body[i].startswith("$ "):
            shown.append(body[i])
            i += 1
        steps.append(Step(command, shown))
    return steps


def _heredoc(line: str) -> str | None:
    found = HEREDOC.search(line)
    return found.group(2) if found else None


# -- running ------------------------------------------------------------------------------


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARKLOW_", "PULUMI_"))}
    tools = [str(REPO / ".tools" / "bin"), str(Path(sys.prefix) / "bin")]
    env["PATH"] = os.pathsep.join([*tools, env.get("PATH", "")])
    env["COLUMNS"] = "100"
    return env


def run_block(block: Block) -> list[list[str]]:
    """What each step prints now, run in a fresh directory."""
    printed: list[list[str]] = []
    with tempfile.TemporaryDirectory(prefix="arklow-docs-") as work:
        shutil.copytree(REPO / "examples", Path(work) / "examples")
        env = _environment()
        if block.setup is not None:
            done = subprocess.run(
                ["bash", "-c", f"{REPO}/{block.setup}"],
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
                timeout=TIMEOUT_S,
                check=False,
            )
            if done.returncode != 0:
                raise RuntimeError(f"{block.name}: set-up {block.setup} failed:\n{done.stderr}")
        for step in block.steps:
            sourced = f". ./{ENV_FILE}\n" if (Path(work) / ENV_FILE).is_file() else ""
            result = subprocess.run(
                ["bash", "-c", sourced + "\n".join(step.command)],
                cwd=work,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=TIMEOUT_S,
                check=False,
            )
            # the directory is new each run: shown as …, which matches any text
            printed.append(result.stdout.replace(work, ELLIPSIS).splitlines())
    return printed


# -- comparing and rewriting ----------------------------------------------------------------


def _pattern(shown: list[str]) -> re.Pattern[str]:
    parts = []
    for line in shown:
        if line.strip() == ELLIPSIS:
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            text = ".*?".join(re.escape(piece) for piece in line.split(ELLIPSIS))
            parts.append(text + r"\n")
    return re.compile("".join(parts))


def matches(shown: list[str], printed: list[str]) -> bool:
    text = "".join(f"{line}\n" for line in printed)
    return _pattern(shown).fullmatch(text) is not None


def _key(line: str) -> str:
    """What a shown line is found by: its first word with a letter or digit (a table row's name,
    a heading's first word), the figures after it free to change."""
    return next((word for word in line.split() if any(c.isalnum() for c in word)), line)


def rewritten(shown: list[str], printed: list[str]) -> list[str]:
    """``printed`` in ``shown``'s place (see the module doc)."""
    if not any(ELLIPSIS in line for line in shown):
        return list(printed)
    out, cursor = [], 0
    for line in shown:
        if ELLIPSIS in line:
            out.append(line)
            continue
        key = _key(line)
        found = next((j for j in range(cursor, len(printed)) if _key(printed[j]) == key), None)
        if found is None:
            out.append(line)
            continue
        out.append(printed[found])
        cursor = found + 1
    return out


def differences(block: Block, printed: list[list[str]]) -> list[str]:
    lines = []
    for step, now in zip(block.steps, printed, strict=True):
        if not matches(step.shown, now):
            lines.append(f"{block.name}: $ {step.command[0]}")
            lines += [f"  shown:   {s}" for s in step.shown]
            lines += [f"  printed: {p}" for p in now]
    return lines


def write(block: Block, printed: list[list[str]]) -> None:
    lines = block.path.read_text().splitlines()
    body: list[str] = []
    for step, now in zip(block.steps, printed, strict=True):
        body.append(f"$ {step.command[0]}")
        body += step.command[1:]
        body += step.shown if matches(step.shown, now) else rewritten(step.shown, now)
    lines[block.start : block.end] = body
    block.path.write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the shown outputs")
    args = parser.parse_args(argv)
    failed = False
    for path in documents():
        # bottom up: a rewritten block may change the length of the file above the next one
        for block in reversed(list(blocks(path))):
            printed = run_block(block)
            if args.write:
                write(block, printed)
                continue
            shown = differences(block, printed)
            failed = failed or bool(shown)
            print("\n".join(shown) if shown else f"{block.name}: as shown")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
