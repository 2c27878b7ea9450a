"""Plain values of the Compute API test server: resource links, timestamps, ids and the API's
error body (``{"error": {"code", "message", "errors": [...], "status"}}``)."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from typing import Any, ClassVar

BASE = "https://www.googleapis.com/compute/v1"
_ids = itertools.count(1_000_000_000_000)


def new_id() -> int:
    """A fresh numeric resource id, as the API gives each MIG, autoscaler and operation."""
    return next(_ids)


def rfc3339(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def scope_link(project: str, scope: str) -> str:
    return f"{BASE}/projects/{project}/{scope}"


class ApiError(Exception):
    """An HTTP error with the Compute API's error body."""

    STATUS: ClassVar[dict[int, tuple[str, str]]] = {
        400: ("INVALID_ARGUMENT", "invalid"),
        403: ("PERMISSION_DENIED", "forbidden"),
        404: ("NOT_FOUND", "notFound"),
        409: ("ABORTED", "resourceNotReady"),
        412: ("FAILED_PRECONDITION", "conditionNotMet"),
        429: ("RESOURCE_EXHAUSTED", "rateLimitExceeded"),
        500: ("INTERNAL", "internalError"),
        503: ("UNAVAILABLE", "backendError"),
    }

    def __init__(self, code: int, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        status, default_reason = self.STATUS.get(code, ("UNKNOWN", "unknown"))
        self.status = status
        self.reason = reason or default_reason

    def body(self) -> dict[str, Any]:
        domain = "usageLimits" if self.code == 429 else "global"
        return {
            "error": {
                "code": self.code,
                "message": self.message,
                "errors": [{"message": self.message, "domain": domain, "reason": self.reason}],
                "status": self.status,
            }
        }
