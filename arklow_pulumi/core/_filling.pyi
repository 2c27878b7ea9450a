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
def checked_caps(
    demand: Mapping[str, float], keys: Sequence[str], limits: Sequence[float], max_units: float, /
) -> tuple[list[float], list[float]] | None: ...
def lane_caps(
    demand: Mapping[str, float], keys: Sequence[str], limits: Sequence[float], /
) -> tuple[list[float], list[float]] | None: ...
def active_room(
    demands: list[float], limits: Sequence[float], alloc: Sequence[float], /
) -> list[float] | None: ...
def idle_room(demands: list[float], limits: Sequence[float], /) -> list[float] | None: ...
def add(a: list[float], b: Sequence[float], /) -> list[float] | None: ...
def held(caps: list[float], alloc: Sequence[float], /) -> list[float] | None: ...
def clamp(admitted: list[float], limits: Sequence[float], /) -> list[float] | None: ...
def compile_lanes(
    destinations: Sequence[object],
    memberships: Mapping[tuple[str, str], str],
    pool_index: Mapping[str, int],
    pools: int,
    /,
) -> tuple[
    tuple[str, ...],
    dict[str, int],
    tuple[float, ...],
    tuple[float, ...],
    tuple[tuple[tuple[int, float], ...], ...],
    tuple[tuple[tuple[int, float], ...], ...],
]: ...
