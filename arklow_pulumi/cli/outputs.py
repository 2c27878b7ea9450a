"""The one check of every command that writes a file: no output may be one of its inputs.

``arklow simulate --ticks-csv trace.csv --trace trace.csv`` would truncate the trace it is about
to read; ``arklow controller export-trace --output .arklow/arklow.db`` would write over the
store. Files are compared by identity (``st_dev``, ``st_ino``), not by name, so another spelling
of the path, a symbolic link or a hard link is caught too. An output that does not exist yet has
no identity and is fine (it cannot be an input that exists). Two outputs that are one existing
file are refused the same way.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from arklow_pulumi.core.errors import InvalidInput

__all__ = ["check_outputs"]

Named = tuple[str, Path | None]  # (option, path), e.g. ("--ticks-csv", Path("ticks.csv"))


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except (OSError, ValueError):  # missing (or not a path the system can hold): no identity
        return None
    return found.st_dev, found.st_ino


def check_outputs(outputs: Iterable[Named], inputs: Iterable[Named]) -> None:
    """Raise :class:`InvalidInput` (exit 2, one line) naming the output option and the input it
    would overwrite. Options given as ``None`` are skipped."""
    seen: dict[tuple[int, int], tuple[str, Path]] = {}
    for option, path in inputs:
        if path is not None and (identity := _identity(path)) is not None:
            seen.setdefault(identity, (option, path))
    for option, path in outputs:
        if path is None or (identity := _identity(path)) is None:
            continue
        other = seen.get(identity)
        if other is not None:
            raise InvalidInput.one(
                f"option {option}",
                option.lstrip("-"),
                f"{str(path)!r} is the file of {other[0]} ({str(other[1])!r}); writing it would "
                "destroy it: give another file",
            )
        seen[identity] = (option, path)
