"""Plain-text tables, as the CLI and the main job's summary print them."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["figure", "table"]


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: set[int]) -> list[str]:
    """Aligned lines: the header, a rule, a line per row; the columns in ``right`` right-aligned,
    two spaces between columns, no trailing blanks. Padded column by column (10,000 pools are a
    table of 70,000 cells), then joined row by row."""
    if not headers:
        return ["", "", *("" for _ in rows)]
    columns = list(zip(headers, *rows, strict=True))
    widths = [max(map(len, column)) for column in columns]
    padded = [
        [c.rjust(w) for c in column] if k in right else [c.ljust(w) for c in column]
        for k, (column, w) in enumerate(zip(columns, widths, strict=True))
    ]
    lines = ["  ".join(cells).rstrip() for cells in zip(*padded, strict=True)]
    rule = "  ".join("-" * w for w in widths).rstrip()
    return [lines[0], rule, *lines[1:]]


def figure(value: float | None) -> str:
    """A number in a table: up to six significant digits (``6.86333``, ``24``, ``1.5e+06``), a
    small one in scientific notation (``2.50e-04``), ``-`` for none."""
    if value is None:
        return "-"
    return f"{value:g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.2e}"
