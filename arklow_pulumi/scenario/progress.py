"""A one-line progress bar on a terminal; a line every 10% when the output is not one."""

from __future__ import annotations

import sys
from typing import TextIO

WIDTH = 40


class Progress:
    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.total = max(1, total)
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self._last_decile = -1

    def update(self, done: int, label: str) -> None:
        fraction = min(1.0, done / self.total)
        if self.tty:
            filled = int(WIDTH * fraction)
            bar = "#" * filled + "-" * (WIDTH - filled)
            self.stream.write(f"\r[{bar}] {fraction:4.0%} {label}")
            if done >= self.total:
                self.stream.write("\n")
        else:
            decile = int(fraction * 10)
            if decile == self._last_decile:
                return
            self._last_decile = decile
            self.stream.write(f"{fraction:4.0%} {label}\n")
        self.stream.flush()

    def interrupt(self, line: str) -> None:
        """Print a line above the bar (the bar is redrawn on the next update)."""
        if self.tty:
            self.stream.write("\r" + " " * (WIDTH + 30) + "\r")
        self.stream.write(line + "\n")
        self.stream.flush()
