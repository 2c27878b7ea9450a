"""A clock the scenario moves by hand: the controller reads it, nothing sleeps."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class SimulatedClock:
    """``time()`` is the simulated wall clock; ``monotonic()`` moves with it (tick durations
    measured on it are 0, so a tick never "overruns" the interval)."""

    now: float

    def time(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
