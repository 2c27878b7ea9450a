"""Supply errors: what went wrong reaching a cloud group, and whether trying again can help.

Retry meaning is carried by the type: :class:`TemporarySupplyError` (throttling, an activity in
progress, a 5xx) may succeed later, after ``retry_after`` seconds if the cloud said so;
:class:`PermanentSupplyError` will not. Refusals decided by the project itself (a value out of
bounds, a group with its own scaling policies) are neither: nothing was sent to the cloud.
Adapters raise these with the SDK exception chained (``raise ... from exc``).
"""

from __future__ import annotations

from arklow_pulumi.core.errors import ArklowError
from arklow_pulumi.core.topology import GroupRef


class SupplyError(ArklowError):
    """Base of every supply error; ``ref`` is the group concerned, when there is one."""

    def __init__(self, message: str, ref: GroupRef | None = None) -> None:
        self.ref = ref
        super().__init__(f"{ref}: {message}" if ref is not None else message)


class PermanentSupplyError(SupplyError):
    """The cloud refused the call and will refuse it again (bad request, access denied, 412)."""


class TemporarySupplyError(SupplyError):
    """The call may succeed later: throttled, busy, or the service failed (429, 5xx, 409)."""

    def __init__(
        self, message: str, ref: GroupRef | None = None, retry_after: float | None = None
    ) -> None:
        self.retry_after = retry_after
        super().__init__(message, ref)


class MissingCredentials(PermanentSupplyError):
    """No credentials for the cloud at all: nothing can be described or resized until they are
    given, so this is reported as early as it is known (``pulumi preview``), not left for later."""


class GroupNotFound(PermanentSupplyError):
    """The group does not exist (or is not visible with these credentials)."""

    def __init__(self, ref: GroupRef) -> None:
        super().__init__("group not found", ref)


class OutOfBounds(SupplyError):
    """A replica count outside the group's or the target's [min, max]; nothing was sent."""

    def __init__(
        self, ref: GroupRef, replicas: int, low: int, high: int | None, whose: str
    ) -> None:
        self.replicas, self.low, self.high, self.whose = replicas, low, high, whose
        shown = "unbounded" if high is None else str(high)
        super().__init__(
            f"replicas {replicas} is outside the {whose} bounds [{low}, {shown}]; nothing changed",
            ref,
        )


class PolicyConflict(SupplyError):
    """The group has scaling policies of its own; it is left alone unless told to override."""

    def __init__(self, ref: GroupRef, policies: tuple[str, ...]) -> None:
        self.policies = policies
        super().__init__(
            f"group has its own scaling policies ({', '.join(policies)}); it is left alone "
            "unless the target sets override_policies: true",
            ref,
        )
