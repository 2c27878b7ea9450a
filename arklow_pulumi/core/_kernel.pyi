"""The progressive-filling kernel of arklow-pulumi's allocation engine (``kernel/src/``),
compiled into the package by maturin."""

from collections.abc import Iterable
from typing import Final, Self, final

__all__ = [
    "DOMAIN_MAX_FACTOR",
    "DOMAIN_MIN_FACTOR",
    "MAX_AMOUNT",
    "MAX_COUNT",
    "MAX_POOLS",
    "Allocated",
    "Filled",
    "Network",
    "Sizings",
    "__version__",
]

__version__: str
DOMAIN_MIN_FACTOR: float
DOMAIN_MAX_FACTOR: float
MAX_AMOUNT: float
MAX_POOLS: int
MAX_COUNT: int

@final
class Filled:
    """What :meth:`Network.fill` returns, as read-only attributes."""

    allocation: Final[list[float]]
    saturated: Final[list[bool]]
    used: Final[list[float]]

@final
class Allocated:
    """What :meth:`Network.allocate` returns: each lane's cap, allocation and admission, each
    pool's demand (read-only attributes)."""

    caps: Final[list[float]]
    allocation: Final[list[float]]
    admission: Final[list[float]]
    pool_demand: Final[list[float]]

@final
class Network:
    """A topology's lanes for the filling, checked and copied once."""

    def __new__(
        cls,
        weights: Iterable[float],
        limits: Iterable[float],
        lane_pools: Iterable[Iterable[tuple[int, float]]],
        pools: int,
    ) -> Self: ...
    @property
    def lanes(self) -> int: ...
    @property
    def pools(self) -> int: ...
    def fill(self, caps: Iterable[float], capacity: Iterable[float]) -> Filled: ...
    def allocate(
        self,
        demands: Iterable[float],
        capacity: Iterable[float],
        admission: bool = True,
        max_demand: float = ...,
    ) -> Allocated: ...

@final
class Sizings:
    """Every pool's single-tick scale decision (see ``src/sizing.rs``), checked and copied once:
    each pool a ``(grow, static_capacity, targets)``, each target a
    ``(units_per_replica, min_replicas, max_replicas)``."""

    def __new__(
        cls, pools: Iterable[tuple[float, float, Iterable[tuple[float, int, int]]]]
    ) -> Self: ...
    @property
    def pools(self) -> int: ...
    def desired(self, demands: Iterable[float]) -> list[tuple[int, ...]]: ...
