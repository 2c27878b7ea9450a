"""The progressive-filling kernel of arklow-pulumi's allocation engine (``kernel/src/``),
compiled into the package by maturin."""

from collections.abc import Iterable
from typing import final

from typing_extensions import Self

__all__ = [
    "__version__",
    "Network",
    "Filled",
    "Allocated",
    "Sizings",
    "MAX_COUNT",
    "DOMAIN_MIN_FACTOR",
    "DOMAIN_MAX_FACTOR",
    "MAX_AMOUNT",
    "MAX_POOLS",
]

__version__: str
DOMAIN_MIN_FACTOR: float
DOMAIN_MAX_FACTOR: float
MAX_AMOUNT: float
MAX_POOLS: int
MAX_COUNT: int

@final
class Filled:
    """What :meth:`Network.fill` returns: each lane's allocation, which pools saturated, each
    pool's usage."""

    @property
    def allocation(self) -> list[float]: ...
    @property
    def saturated(self) -> list[bool]: ...
    @property
    def used(self) -> list[float]: ...

@final
class Allocated:
    """What :meth:`Network.allocate` returns: each lane's cap, allocation and admission, each
    pool's demand."""

    @property
    def caps(self) -> list[float]: ...
    @property
    def allocation(self) -> list[float]: ...
    @property
    def admission(self) -> list[float]: ...
    @property
    def pool_demand(self) -> list[float]: ...

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
