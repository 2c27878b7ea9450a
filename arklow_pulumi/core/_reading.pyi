"""Types of the fast document reader's compiled lane loop (``_reading.c``)."""

from collections.abc import Mapping

def read_lanes(
    destination: str,
    value: object,
    resources: tuple[str, ...],
    lane_type: type,
    setters: tuple[object, ...],
    empty: Mapping[str, float],
    limits: tuple[int, float, float, float],
    /,
) -> tuple[tuple[object, ...], bool] | None: ...
