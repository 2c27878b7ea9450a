"""Types of the compiled lane rendering (``_render.c``)."""

from collections.abc import Sequence

def json_lanes(
    keys: Sequence[str],
    demand: Sequence[float],
    allocation: Sequence[float],
    held: Sequence[float],
    admission: Sequence[float],
    /,
) -> str | None: ...
def table_lanes(
    keys: Sequence[str],
    demand: Sequence[float],
    allocation: Sequence[float],
    admission: Sequence[float],
    held: Sequence[float],
    color: bool,
    /,
) -> tuple[str, int] | None: ...
