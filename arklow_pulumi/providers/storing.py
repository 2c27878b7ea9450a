"""The base of every Arklow provider: configuration, the store a resource lives in, and the
identity (create id, owning stack and URN) it claims there.

The store URL, resolved at every call:

- ``create`` and ``update`` get the program's *current* inputs: the resource's ``store`` input
  first (resolved in the program from its ``store=`` argument, ``arklow:store`` config,
  ``$ARKLOW_STORE`` or the default SQLite file beside ``Pulumi.yaml``, kept as a secret);
- ``read`` and ``delete`` get the inputs *in state*, which may hold a URL whose password has since
  been rotated: the current provider config ``arklow:store`` comes first, then ``$ARKLOW_STORE``,
  then the URL in state, then the default beside the provider process's working directory.

The owner (``owner_stack``, ``owner_urn``) is a pair of inputs the resources add: inside the
provider process ``pulumi.get_stack()`` is "stack" and the SDK hands ``create`` no URN.
"""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

from pulumi.dynamic import (
    ConfigureRequest,
    CreateResult,
    ReadResult,
    ResourceProvider,
    UpdateResult,
)

from arklow_pulumi import settings
from arklow_pulumi.core.errors import ArklowError
from arklow_pulumi.store.identity import Claim, Owner, new_create_id
from arklow_pulumi.store_location import resolve_store_url

# The first import of SQLAlchemy (and Alembic, when a store is migrated) must not run in two
# threads at once: up to 4 provider calls run concurrently, and two threads importing
# SQLAlchemy's mutually dependent modules can each see the other's module half-initialized
# ("partially initialized module 'sqlalchemy.orm.exc'"). Every path to the store modules takes
# this lock; after the first call it costs an uncontended acquire.
_STORE_LOCK = threading.RLock()

if TYPE_CHECKING:
    from arklow_pulumi.store import service as service
    from arklow_pulumi.store.engine import Store
else:

    class _LazyService(ModuleType):
        """The store's service layer, imported on first use: a preview's check and diff never
        touch the store, and the Pulumi program only once its settled outputs are read
        (resources/settling.py), so they skip SQLAlchemy's import cost until then."""

        def __getattr__(self, name: str) -> Any:
            with _STORE_LOCK:
                from arklow_pulumi.store import service as module

            return getattr(module, name)

    service = _LazyService("arklow_pulumi.store.service (lazy)")

# Every key the supply selection reads (arklow:gcpProject was once dropped here).
CONFIG_KEYS = tuple(setting.key for setting in settings.PROVIDER_CONFIG_KEYS)


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
        """The store of a create or update: ``props`` are the program's current inputs."""
        explicit = props.get("store")
        url = resolve_store_url(
            explicit if isinstance(explicit, str) else None, settings.STORE.get(self.config)
        )
        return _open(url)

    def stored_store(self, props: dict[str, Any]) -> Store:
        """The store of a read or delete: ``props`` come from state, so the current provider
        config and environment win over the URL there (a rotated password)."""
        in_state = props.get("store")
        for candidate in (
            settings.STORE.get(self.config),
            settings.STORE_ENV.get(),
            in_state if isinstance(in_state, str) else None,
        ):
            if candidate:
                return _open(candidate)
        return _open(resolve_store_url())


class NamedObjectProvider(StoreProvider):
    """A provider whose object is stored under its Arklow name (``arklow_name``): ``read`` is
    the store's view of it, when it is still the object this create made (else refresh drops it
    from state), as :meth:`outputs` shows it."""

    def view(self, store: Store, name: str) -> Any:
        """The service's view of the object ``name`` (``None`` when it is not stored)."""
        raise NotImplementedError

    @staticmethod
    def document(view: Any) -> dict[str, Any]:
        """The object's own outputs, from a view of it."""
        raise NotImplementedError

    def outputs(self, view: Any, props: dict[str, Any]) -> dict[str, Any]:
        """The resource's outputs from a view (the store's answer: no second read); ``{}`` for
        ``None``."""
        return {} if view is None else with_store(self.document(view), props)

    def created(self, props: dict[str, Any], write: Callable[[Store, Claim], Any]) -> CreateResult:
        """A create: ``write`` stores the object claimed under a new id of its own (never the id
        of an object it replaces) and returns the store's view of it, which the outputs show."""
        create_id = new_create_id()
        view = write(self.store(props), claim_of(create_id, props))
        return CreateResult(create_id, self.outputs(view, props))

    def updated(
        self, id_: str, props: dict[str, Any], write: Callable[[Store, Claim], Any]
    ) -> UpdateResult:
        """An update of the object created as ``id_``: as :meth:`created`, under the same id."""
        view = write(self.store(props), claim_of(id_, props))
        return UpdateResult(self.outputs(view, props))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        outs = self.stored_outputs(self.stored_store(props), props, id_)
        # No cloud check here: refresh shows what the store holds (drift), it does not fail.
        return ReadResult(id_, outs) if outs else gone(id_)

    def stored_outputs(self, store: Store, props: dict[str, Any], id_: str) -> dict[str, Any]:
        view = self.view(store, stored_name(props, id_))
        return self.outputs(view, props) if view is not None and is_own(view, id_) else {}


def _open(url: str) -> Store:
    with _STORE_LOCK:
        from arklow_pulumi.store import service  # noqa: F401  (imported here, under the lock)
        from arklow_pulumi.store.engine import open_store

        return open_store(url)


OWNER_KEYS = ("owner_stack", "owner_urn")


def owner_of(props: dict[str, Any]) -> Owner | None:
    stack, urn = props.get("owner_stack"), props.get("owner_urn")
    if isinstance(stack, str) and stack and isinstance(urn, str) and urn:
        return Owner(stack, urn)
    return None


def stored_name(props: dict[str, Any], id_: str) -> str:
    """The name an object is stored under: its ``arklow_name`` input, else its Pulumi id."""
    return str(props.get("arklow_name") or id_)


def claim_of(create_id: str, props: dict[str, Any]) -> Claim:
    return Claim(create_id, owner_of(props))


def is_own(view: Any, id_: str) -> bool:
    """Whether a stored object (a service view, or None) is the one created as ``id_``."""
    return view is not None and view.identity.create_id == id_


def gone(id_: str) -> ReadResult:
    """What ``read`` returns for an object deleted outside Pulumi: refresh drops it from state."""
    return ReadResult("", {})


def with_store(outs: dict[str, Any], props: dict[str, Any]) -> dict[str, Any]:
    """``outs`` with the inputs that are not the object's own data echoed: the store URL and the
    owner, so the next diff compares them."""
    for key in ("store", *OWNER_KEYS):
        if props.get(key) is not None:
            outs[key] = props[key]
    return outs
