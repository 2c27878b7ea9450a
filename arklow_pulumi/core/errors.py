"""The project's error hierarchy for the core: every problem names its object and its field."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with an input: which object, which field, and why."""

    obj: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.obj}: field '{self.field}': {self.message}"


class ArklowError(Exception):
    """Base of every error the project raises on purpose."""


class InvalidInput(ArklowError):
    """Input (a topology, a demand report, a change) breaks the schema or a topology rule.

    Raised before anything stored is changed. ``problems`` holds every problem found; ``str()``
    renders them on one line so a CLI can print it as is.
    """

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems: tuple[Problem, ...] = tuple(problems)
        if not self.problems:
            raise ValueError("InvalidInput needs at least one problem")
        super().__init__("; ".join(str(p) for p in self.problems))

    @classmethod
    def one(cls, obj: str, field: str, message: str) -> InvalidInput:
        return cls([Problem(obj, field, message)])


class TopologyRuleViolation(InvalidInput):
    """A change would break one of the topology rules T1–T7."""
