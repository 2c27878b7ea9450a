"""Running ``arklow`` as a user does: a real process, or the same entry point in this process.

Both give a :class:`subprocess.CompletedProcess` (exit code, stdout, stderr). The in-process forms
(:func:`in_process` with a test's fixtures, :func:`call` without) call
:func:`arklow_pulumi.cli.main.main` with ``sys.argv`` and the environment patched for that call
only: the exit codes and streams are the real ones, without a process start per case.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

ARKLOW = str(Path(sys.executable).parent / "arklow")
Result = subprocess.CompletedProcess[str]
Invoke = Callable[..., Result]
# Variables a user's shell may hold that would change what a command reads.
CLEARED = ("ARKLOW_STORE", "ARKLOW_DEBUG")


def run(
    args: list[str],
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 120,
    cleared: tuple[str, ...] = CLEARED,
) -> Result:
    """``arklow ARGS`` as a real process, ``env`` over this one's without the ``cleared``."""
    base = {k: v for k, v in os.environ.items() if k not in cleared}
    return subprocess.run(
        [ARKLOW, *args],
        env={**base, **(env or {})},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def only(env: Mapping[str, str]) -> tuple[str, ...]:
    """The ``cleared`` that gives :func:`run`'s command exactly ``env``: every variable of this
    process's that ``env`` leaves out."""
    return tuple(os.environ.keys() - env.keys())


def in_process(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    cleared: tuple[str, ...] = CLEARED,
) -> Invoke:
    """An ``invoke(args, env=None)`` that runs ``arklow ARGS`` in this process (``env`` applied,
    the ``cleared`` variables dropped, for that call only)."""
    from arklow_pulumi.cli.main import main

    def invoke(args: list[str], env: Mapping[str, str] | None = None) -> Result:
        with monkeypatch.context() as patch:
            for key in cleared:
                patch.delenv(key, raising=False)
            for key, value in (env or {}).items():
                patch.setenv(key, value)
            patch.setattr(sys, "argv", ["arklow", *args])
            capsys.readouterr()
            with pytest.raises(SystemExit) as info:
                main()
        out = capsys.readouterr()
        code = info.value.code
        return subprocess.CompletedProcess(
            args, code if isinstance(code, int) else 1, out.out, out.err
        )

    return invoke


def call(
    args: list[str],
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    cleared: tuple[str, ...] = CLEARED,
) -> Result:
    """``arklow ARGS`` through the entry point of :func:`in_process`, where a test has no
    fixtures to hand: ``env`` applied, the ``cleared`` dropped and ``cwd`` the working directory
    for this call only; stdout and stderr are read from buffers of their own."""
    from arklow_pulumi.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    code: object = None
    with pytest.MonkeyPatch.context() as patch, redirect_stdout(out), redirect_stderr(err):
        for key in cleared:
            patch.delenv(key, raising=False)
        for key, value in (env or {}).items():
            patch.setenv(key, value)
        if cwd is not None:
            patch.chdir(cwd)
        patch.setattr(sys, "argv", ["arklow", *args])
        try:
            main()
        except SystemExit as exc:
            code = exc.code
    return subprocess.CompletedProcess(
        args, code if isinstance(code, int) else 1, out.getvalue(), err.getvalue()
    )


def assert_one_line_error(result: Result, what: str = "") -> str:
    """Exit 2, nothing on stdout, exactly one line on stderr; returns that line."""
    shown = f"{what} exit {result.returncode}\nstdout: {result.stdout!r}\nstderr: {result.stderr!r}"
    assert result.returncode == 2, shown
    assert result.stdout == "", shown
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), shown
    return lines[0]
