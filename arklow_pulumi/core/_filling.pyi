"""Types of the compiled progressive-filling kernel (``_filling.c``)."""

from collections.abc import Mapping, Sequence

def pack(
    weights: Sequence[float],
    lane_pools: Sequence[Sequence[tuple[int, float]]],
    pool_lanes: Sequence[Sequence[tuple[int, float]]],
    pools: int,
    /,
) -> bytes: ...
def fill(
    caps: Sequence[float], capacity: Sequence[float], packed: bytes, /
) -> tuple[list[float], list[bool], list[float]] | None: ...
def pool_demand(caps: Sequence[float], packed: bytes, /) -> list[float] | None: ...
def fillable(room: list[float], residual: Sequence[float], packed: bytes, /) -> bool | None: ...
def demand_ok(
    demand: Mapping[str, float], known: Mapping[str, int], max_units: float, /
) -> bool: ...
def lane_caps(
    demand: Mapping[str, float], keys: Sequence[str], limits: Sequence[float], /
) -> tuple[list[float], list[float]] | None: ...
