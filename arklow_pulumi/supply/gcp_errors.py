"""google-api-core exceptions, as the project's own (the caller chains the original).

404 → GroupNotFound. 429, 5xx and 409 are temporary: reads are always safe to repeat, and every
mutation carries a request id, so repeating it cannot apply it twice. 412 (a precondition, such as
resizing an autoscaled regional MIG), 400 and 403 are permanent. A TLS failure (an ``http://``
server reached as ``https://``, an untrusted certificate) is permanent too: retrying cannot help.
A read timeout is temporary and told apart from an unreachable API (the call may have been
applied, or an operations ``wait`` held longer than the call's timeout).
"""

from __future__ import annotations

from arklow_pulumi.core.topology import GroupRef
from arklow_pulumi.supply.errors import (
    GroupNotFound,
    MissingCredentials,
    PermanentSupplyError,
    SupplyError,
    TemporarySupplyError,
)

TEMPORARY_STATUS = frozenset({409, 429, 500, 502, 503, 504})


def map_gcp_error(exc: Exception, ref: GroupRef | None) -> SupplyError:
    from google.api_core import exceptions as gexc

    if isinstance(exc, SupplyError):
        return exc
    if isinstance(exc, gexc.GoogleAPICallError):
        code = int(exc.code or 0)
        message = f"HTTP {code}: {exc.message}"
        if code == 404 and ref is not None:
            return GroupNotFound(ref)
        if code in TEMPORARY_STATUS or code >= 500:
            return TemporarySupplyError(message, ref, _retry_after(exc))
        return PermanentSupplyError(message, ref)
    if isinstance(exc, gexc.RetryError):
        return TemporarySupplyError(f"retry budget exhausted: {exc}", ref)
    if _is_tls_error(exc):
        return PermanentSupplyError(
            "TLS handshake with the Compute API endpoint failed (an http:// server given as "
            f"https://, or a certificate not trusted): {exc}",
            ref,
        )
    if is_read_timeout(exc):
        return TemporarySupplyError(f"no answer from the Compute API in time: {exc}", ref)
    if _is_transport_error(exc):
        return TemporarySupplyError(f"cannot reach the Compute API: {exc}", ref)
    from google.auth import exceptions as auth_exc

    if isinstance(exc, auth_exc.DefaultCredentialsError):
        return MissingCredentials(
            "no Google credentials found (no Application Default Credentials: set "
            "GOOGLE_APPLICATION_CREDENTIALS to a key file, or run `gcloud auth "
            "application-default login`; a test endpoint in ARKLOW_GCP_COMPUTE_ENDPOINT needs "
            "none)",
            ref,
        )
    if isinstance(exc, ValueError) and str(exc).startswith("Invalid request"):
        # google-api-core refuses a request whose path fields do not fit the URI template (an
        # empty zone, a "/" in a name); its message is a screenful of the template.
        return PermanentSupplyError(
            f"field '{_bad_path_field(ref)}': does not fit in a Compute API path "
            "(empty, or holding '/')",
            ref,
        )
    first_line = (str(exc).strip().splitlines() or [""])[0]
    return PermanentSupplyError(f"{type(exc).__name__}: {first_line}", ref)


def _bad_path_field(ref: GroupRef | None) -> str:
    if ref is not None:
        for field in ("project", "zone", "region", "name"):
            value = getattr(ref, field)
            if value is not None and (not value or "/" in value):
                return field
    return "name"


def _retry_after(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    header = getattr(response, "headers", {}).get("Retry-After") if response is not None else None
    try:
        return float(header) if header else None
    except ValueError:
        return None


def is_read_timeout(exc: BaseException | None) -> bool:
    """The server accepted the connection but did not answer within the call's timeout. requests
    raises ``ReadTimeout``, or, when urllib3 wrapped the timeout in a ``MaxRetryError`` (a
    transport with retries configured), a ``ConnectionError`` around it: both are one thing."""
    import requests
    from urllib3.exceptions import MaxRetryError, ReadTimeoutError

    if isinstance(exc, requests.exceptions.ReadTimeout):
        return True
    if not isinstance(exc, requests.exceptions.ConnectionError) or not exc.args:
        return False
    reason = exc.args[0]
    if isinstance(reason, MaxRetryError):
        reason = reason.reason
    return isinstance(reason, ReadTimeoutError)


def _is_tls_error(exc: Exception) -> bool:
    import ssl

    import requests

    return isinstance(exc, (requests.exceptions.SSLError, ssl.SSLError))


def _is_transport_error(exc: Exception) -> bool:
    import requests

    return isinstance(
        exc, (requests.ConnectionError, requests.Timeout, ConnectionError, TimeoutError)
    )
