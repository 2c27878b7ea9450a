"""The progressive-filling kernel of arklow-pulumi's allocation engine (``kernel/src/``),
compiled into the package by maturin."""

from collections.abc import Iterable

__version__: str
DOMAIN_MIN_FACTOR: float
DOMAIN_MAX_FACTOR: float
MAX_AMOUNT: float
MAX_POOLS: int

class Network:
    """A topology's lanes for the filling, checked and copied once."""

    def __init__(
        self,
        weights: Iterable[float],
        limits: Iterable[float],
        lane_pools: Iterable[Iterable[tuple[int, float]]],
        pools: int,
    ) -> None: ...
    @property
    def lanes(self) -> int: ...
    @property
    def pools(self) -> int: ...
    def fill(
        self, caps: Iterable[float], capacity: Iterable[float]
    ) -> tuple[list[float], list[bool], list[float]]: ...
    def allocate(
        self,
        demands: Iterable[float],
        capacity: Iterable[float],
        admission: bool = True,
        max_demand: float = ...,
    ) -> tuple[list[float], list[float], list[float], list[float]]: ...

MAX_COUNT: int

class Sizings:
    """Every pool's single-tick scale decision (see ``src/sizing.rs``), checked and copied once:
    each pool a ``(grow, static_capacity, targets)``, each target a
    ``(units_per_replica, min_replicas, max_replicas)``."""

    def __init__(
        self, pools: Iterable[tuple[float, float, Iterable[tuple[float, int, int]]]]
    ) -> None: ...
    @property
    def pools(self) -> int: ...
    def desired(self, demands: Iterable[float]) -> list[tuple[int, ...]]: ...
