"""The base of every Arklow provider: configuration, and the store a resource lives in.

The store URL: the resource's ``store`` input (resolved in the Pulumi program from its
``store=`` argument, ``arklow:store`` config, ``$ARKLOW_STORE`` or the default SQLite file beside
``Pulumi.yaml``, and kept as a secret), else ``arklow:store`` from provider config, else
``$ARKLOW_STORE``, else the default beside the provider process's working directory.
"""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

from pulumi.dynamic import ConfigureRequest, ReadResult, ResourceProvider

from arklow_pulumi.core.errors import ArklowError
from arklow_pulumi.store_location import resolve_store_url

if TYPE_CHECKING:
    from arklow_pulumi.store import service as service
    from arklow_pulumi.store.engine import Store
else:

    class _LazyService(ModuleType):
        """The store's service layer, imported on first use: a preview (check, diff) and the
        Pulumi program itself never touch the store, so they skip SQLAlchemy's import cost."""

        def __getattr__(self, name: str) -> Any:
            from arklow_pulumi.store import service as module

            return getattr(module, name)

    service = _LazyService("arklow_pulumi.store.service (lazy)")

CONFIG_KEYS = (
    "arklow:store",
    "arklow:awsEndpoint",
    "arklow:awsRegion",
    "arklow:gcpComputeEndpoint",
)


_CALLS = ("check", "diff", "create", "read", "update", "delete")


# Guards the process-global ``sys.tracebacklimit`` (see :func:`_plain_errors`).
_TRACEBACK_LOCK = threading.Lock()


def _show_frames(show: bool) -> None:
    with _TRACEBACK_LOCK:
        if not show:
            sys.tracebacklimit = 0
        elif hasattr(sys, "tracebacklimit"):
            del sys.tracebacklimit


def _plain_errors(method: Callable[..., Any]) -> Callable[..., Any]:
    """Let an :class:`ArklowError` reach the user as its one-line message.

    The SDK's provider server reports every exception with ``traceback.format_exc()`` after our
    method has returned, so the only lever is the process-global ``sys.tracebacklimit``: it is set
    to 0 when an :class:`ArklowError` leaves the method (bad input, a refused rule: the frames
    would only bury the message) and removed when any other exception does (a bug keeps its full
    traceback). The lock keeps each change whole. Calls run concurrently (up to 4 per provider),
    so another call's error may change the limit between our raise and the server's
    ``format_exc()``: that race is cosmetic only (one report shows frames it would have hidden,
    or hides them), it never changes what a call does or which error is reported.
    """

    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except ArklowError as exc:
            _show_frames(False)
            # Without the chain too: the SDK or driver error under it would print its own text.
            raise exc from None
        except Exception:
            _show_frames(True)
            raise

    return call


class StoreProvider(ResourceProvider):
    """Holds provider config as plain strings; never a client, engine or connection."""

    config: dict[str, str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in _CALLS:
            if name in cls.__dict__:
                setattr(cls, name, _plain_errors(cls.__dict__[name]))

    def __init__(self) -> None:
        super().__init__()
        self.config = {}

    def configure(self, req: ConfigureRequest) -> None:
        found = {key: req.config.get(key) for key in CONFIG_KEYS}
        self.config = {key: str(value) for key, value in found.items() if value not in (None, "")}

    def store(self, props: dict[str, Any]) -> Store:
        explicit = props.get("store")
        url = resolve_store_url(
            explicit if isinstance(explicit, str) else None, self.config.get("arklow:store")
        )
        from arklow_pulumi.store.engine import open_store

        return open_store(url)


def gone(id_: str) -> ReadResult:
    """What ``read`` returns for an object deleted outside Pulumi: refresh drops it from state."""
    return ReadResult("", {})


def with_store(outs: dict[str, Any], props: dict[str, Any]) -> dict[str, Any]:
    if props.get("store") is not None:
        outs["store"] = props["store"]
    return outs
