"""A Compute Engine API test server for the subset Arklow calls (stdlib only).

REST paths as the google-cloud-compute REST transport builds them, under ``/compute/v1``:

- ``projects/{p}/aggregated/instanceGroupManagers`` and ``.../aggregated/autoscalers`` (GET, paged)
- ``projects/{p}/{zones|regions}/{s}/instanceGroupManagers`` (GET list), ``.../{name}`` (GET),
  ``.../{name}/resize?size=N&requestId=R`` (POST)
- ``projects/{p}/{zones|regions}/{s}/autoscalers`` (GET list, PATCH ``?autoscaler=NAME``),
  ``.../autoscalers/{name}`` (GET)
- ``projects/{p}/{zones|regions}/{s}/operations/{op}`` (GET) and ``.../{op}/wait`` (POST)

Errors carry the API's body ``{"error": {"code", "message", "errors": [...], "status"}}``. The same
``requestId`` twice returns the first operation and changes nothing again.

Admin API (not part of Compute): ``POST /_admin/reset``; ``POST /_admin/groups`` with
``{"project", "zone"|"region", "name", "targetSize", "autoscaler": {"min", "max", "mode"}?}`` or
``{"groups": [...]}``; ``POST /_admin/faults`` with ``{"latency_ms", "error_rate", "codes",
"after_apply", "scripted": [{"method", "path", "code", "count", "after_apply"}], "op_errors":
[{"path", "count", "code", "message", "http_status"}], "early_waits": N, "stuck_ops": N,
"wait_limit": S}``; ``GET /_admin/calls`` (counts per route, resizes applied, errors injected,
and a log of the last requests with their query and body; ``POST`` to zero them); ``POST
/_admin/signal`` with ``{"project", "zone"|"region", "name", "size"}`` (what an autoscaler's signal
asks for: its recommendation within its bounds); ``POST /_admin/clock`` with ``{"skip": S}`` (move
the server's time S seconds forward: operations, settling and autoscaler stabilization go by it).
Injected faults with ``after_apply`` let a mutation take effect and still answer with the error,
as a lost response would: a client retrying with the same ``requestId`` must not resize twice.
Operation faults: ``op_errors`` make the next matching mutations (``path`` is matched against
the route, e.g. ``resize`` or ``autoscalers.patch``) start an operation that ends DONE with that
error, nothing applied; ``early_waits`` make the next N ``wait`` calls answer at once with the
operation not DONE (as the API does when busy); ``stuck_ops`` keep the next N operations RUNNING
for ever; ``wait_limit`` is how long ``wait`` holds a request (the API: about 120 s).
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from arklow_pulumi.devservers.compute_listing import PREFIX, listed, one
from arklow_pulumi.devservers.compute_model import World
from arklow_pulumi.devservers.compute_values import ApiError

WAIT_LIMIT = 120.0
LOG_SIZE = 1000
SCOPE = r"(?P<scope>(?:zones|regions)/[^/]+)"
Handler = Callable[
    ["ComputeServer", str, dict[str, str], dict[str, list[str]], dict[str, Any]], Any
]


@dataclass
class Faults:
    latency_ms: float = 0.0
    error_rate: float = 0.0
    codes: tuple[int, ...] = (429, 503)
    after_apply: float = 0.5
    scripted: list[dict[str, Any]] = field(default_factory=list)
    op_errors: list[dict[str, Any]] = field(default_factory=list)
    early_waits: int = 0
    stuck_ops: int = 0
    wait_limit: float = WAIT_LIMIT

    @classmethod
    def parse(cls, body: dict[str, Any]) -> Faults:
        return cls(
            latency_ms=float(body.get("latency_ms", 0.0)),
            error_rate=float(body.get("error_rate", 0.0)),
            codes=tuple(int(c) for c in body.get("codes", (429, 503))),
            after_apply=float(body.get("after_apply", 0.5)),
            scripted=[dict(s) for s in body.get("scripted", [])],
            op_errors=[dict(s) for s in body.get("op_errors", [])],
            early_waits=int(body.get("early_waits", 0)),
            stuck_ops=int(body.get("stuck_ops", 0)),
            wait_limit=float(body.get("wait_limit", WAIT_LIMIT)),
        )

    def operation_faults(self, route: str) -> tuple[dict[str, Any] | None, bool]:
        """(error, stuck) for the operation a mutation on ``route`` starts. Under the lock."""
        fail = None
        for rule in self.op_errors:
            if rule.get("count", 1) > 0 and str(rule.get("path", "")) in route:
                rule["count"] = rule.get("count", 1) - 1
                fail = rule
                break
        stuck = self.stuck_ops > 0
        if stuck:
            self.stuck_ops -= 1
        return fail, stuck


class ComputeServer:
    """The server and its state; ``start()`` serves on a thread, ``serve_forever()`` in front."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        op_delay: float = 0.05,
        settle_delay: float = 0.2,
        faults: Faults | None = None,
        seed: int | None = None,
    ) -> None:
        self.world = World(op_delay=op_delay, settle_delay=settle_delay)
        self.faults = faults or Faults()
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.calls: Counter[str] = Counter()
        self.log: deque[dict[str, Any]] = deque(maxlen=LOG_SIZE)
        self.injected: Counter[int] = Counter()
        self.rng = random.Random(seed)
        self.httpd = ThreadingHTTPServer((host, port), _make_handler(self))
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> ComputeServer:
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self.httpd.serve_forever()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # -- admin ---------------------------------------------------------------------------------

    def reset(self) -> None:
        with self.lock:
            self.world = World(op_delay=self.world.op_delay, settle_delay=self.world.settle_delay)
            self.faults = Faults()
            self.reset_calls()

    def reset_calls(self) -> None:
        with self.lock:
            self.calls.clear()
            self.log.clear()
            self.injected.clear()
            self.world.resizes.clear()

    def add_group(self, spec: dict[str, Any]) -> dict[str, Any]:
        where = (spec.get("zone") and f"zones/{spec['zone']}") or f"regions/{spec['region']}"
        with self.lock:
            mig = self.world.add_group(
                str(spec.get("project", "arklow-dev")),
                where,
                str(spec["name"]),
                int(spec.get("targetSize", spec.get("target_size", 0))),
                spec.get("autoscaler"),
            )
            return {"name": mig.name, "selfLink": mig.link}

    def skip(self, seconds: float) -> None:
        """Move the server's time forward (see :meth:`World.skip`)."""
        with self.lock:
            self.world.skip(seconds)

    def set_signal(self, spec: dict[str, Any]) -> dict[str, Any]:
        where = (spec.get("zone") and f"zones/{spec['zone']}") or f"regions/{spec.get('region')}"
        if not isinstance(spec.get("name"), str) or not isinstance(spec.get("size"), int):
            raise ApiError(400, "expected {project, zone|region, name, size: integer}")
        with self.lock:
            scaler = self.world.set_signal(
                str(spec.get("project", "arklow-dev")), where, spec["name"], spec["size"]
            )
            return {"name": scaler.name, "recommendation": scaler.recommendation()}

    def set_faults(self, body: dict[str, Any]) -> None:
        with self.lock:
            self.faults = Faults.parse(body)

    def call_report(self) -> dict[str, Any]:
        with self.lock:
            return {
                "total": sum(self.calls.values()),
                "by_route": dict(self.calls),
                "resizes": list(self.world.resizes),
                "injected": {str(k): v for k, v in self.injected.items()},
                "log": list(self.log),
            }

    # -- requests ------------------------------------------------------------------------------

    def handle(
        self, method: str, path: str, query: dict[str, list[str]], body: dict[str, Any]
    ) -> Any:
        if path.startswith("/_admin/"):
            return self._admin(method, path, body)
        if not path.startswith(PREFIX):
            raise ApiError(404, f"The requested URL {path} was not found on this server.")
        rest = path[len(PREFIX) :]
        for verb, pattern, name, handler in ROUTES:
            match = pattern.fullmatch(rest)
            if match and verb == method:
                return self._dispatch(method, name, handler, match.groupdict(), query, body)
        raise ApiError(404, f"The requested URL {path} was not found on this server.")

    def _dispatch(
        self,
        method: str,
        name: str,
        handler: Handler,
        params: dict[str, str],
        query: dict[str, list[str]],
        body: dict[str, Any],
    ) -> Any:
        with self.lock:
            self.calls[f"{method} {name}"] += 1
            self.log.append(
                {"route": f"{method} {name}", "query": {k: v[0] for k, v in query.items()}}
                | ({"body": body} if body else {})
            )
            self.world.autoscale()
            faults = self.faults
            fault = self._pick_fault(method, name)
        if faults.latency_ms:
            time.sleep(faults.latency_ms / 1000.0)
        if fault is not None and not fault[1]:
            raise self._injected(fault[0])
        result = handler(self, params.pop("project"), params, query, body)
        if fault is not None:
            raise self._injected(fault[0])
        return result

    def _pick_fault(self, method: str, name: str) -> tuple[int, bool] | None:
        """(code, after_apply) for this request, or None. Called under the lock."""
        route = f"{method} {name}"
        for rule in self.faults.scripted:
            if (
                rule.get("count", 1) > 0
                and rule.get("method", method) == method
                and str(rule.get("path", "")) in route
            ):
                rule["count"] = rule.get("count", 1) - 1
                return int(rule["code"]), bool(rule.get("after_apply", False))
        if self.faults.error_rate and self.rng.random() < self.faults.error_rate:
            code = self.rng.choice(self.faults.codes)
            mutating = method in ("POST", "PATCH") and not name.endswith("wait")
            return code, mutating and self.rng.random() < self.faults.after_apply
        return None

    def _injected(self, code: int) -> ApiError:
        with self.lock:
            self.injected[code] += 1
        messages = {
            429: "Rate Limit Exceeded",
            503: "The service is currently unavailable.",
            500: "Internal error. Please try again or contact Google Support.",
            409: "The resource is not ready",
        }
        return ApiError(code, messages.get(code, f"Injected error {code}"))

    def _admin(self, method: str, path: str, body: dict[str, Any]) -> Any:
        if path == "/_admin/reset" and method == "POST":
            self.reset()
            return {}
        if path == "/_admin/groups" and method == "POST":
            specs = body.get("groups", [body])
            return {"groups": [self.add_group(s) for s in specs]}
        if path == "/_admin/faults" and method == "POST":
            self.set_faults(body)
            return {}
        if path == "/_admin/signal" and method == "POST":
            return self.set_signal(body)
        if path == "/_admin/clock" and method == "POST":
            seconds = body.get("skip")
            if not isinstance(seconds, int | float) or isinstance(seconds, bool):
                raise ApiError(400, "expected {skip: seconds}")
            self.skip(float(seconds))
            return {"now": self.world.now()}
        if path == "/_admin/calls":
            if method == "POST":
                self.reset_calls()
            return self.call_report()
        raise ApiError(404, f"no admin route {method} {path}")

    # -- compute routes ------------------------------------------------------------------------

    def get_mig(self, project: str, p: dict[str, str], q: Any, b: Any) -> Any:
        with self.lock:
            mig = self.world.mig(project, p["scope"], p["name"])
            return self._render_mig(mig)

    def _render_mig(self, mig: Any) -> dict[str, Any]:
        w = self.world
        return mig.render(w.now(), w.settle_delay, w.autoscaler_of(mig))  # type: ignore[no-any-return]

    def list_migs(self, project: str, p: dict[str, str], q: dict[str, list[str]], b: Any) -> Any:
        with self.lock:
            return listed(
                "instanceGroupManager", project, p["scope"], self.world.migs, q, self._render_mig
            )

    def aggregated_migs(self, project: str, p: Any, q: dict[str, list[str]], b: Any) -> Any:
        with self.lock:
            migs = self.world.migs
            return listed("instanceGroupManager", project, None, migs, q, self._render_mig)

    def _render_autoscaler(self, scaler: Any) -> dict[str, Any]:
        mig = next((m for m in self.world.migs.values() if m.link == scaler.target), None)
        return scaler.render(mig)  # type: ignore[no-any-return]

    def aggregated_autoscalers(self, project: str, p: Any, q: dict[str, list[str]], b: Any) -> Any:
        with self.lock:
            return listed(
                "autoscaler", project, None, self.world.autoscalers, q, self._render_autoscaler
            )

    def list_autoscalers(
        self, project: str, p: dict[str, str], q: dict[str, list[str]], b: Any
    ) -> Any:
        with self.lock:
            return listed(
                "autoscaler",
                project,
                p["scope"],
                self.world.autoscalers,
                q,
                self._render_autoscaler,
            )

    def get_autoscaler(self, project: str, p: dict[str, str], q: Any, b: Any) -> Any:
        with self.lock:
            scaler = self.world.autoscalers.get((project, p["scope"], p["name"]))
            if scaler is None:
                raise ApiError(
                    404,
                    f"The resource 'projects/{project}/{p['scope']}/autoscalers/{p['name']}' "
                    "was not found",
                )
            return self._render_autoscaler(scaler)

    def resize(self, project: str, p: dict[str, str], q: dict[str, list[str]], b: Any) -> Any:
        raw = one(q, "size")
        if raw is None or not re.fullmatch(r"-?\d+", raw):
            raise ApiError(
                400,
                "Required field 'size' not specified"
                if raw is None
                else f"Invalid value for field 'size': '{raw}'.",
            )
        with self.changed:
            fail, stuck = self.faults.operation_faults("POST instanceGroupManagers.resize")
            op = self.world.resize(
                project, p["scope"], p["name"], int(raw), one(q, "requestId"), fail, stuck
            )
            self.changed.notify_all()
            return op.render(self.world.now())

    def patch_autoscaler(
        self, project: str, p: dict[str, str], q: dict[str, list[str]], b: dict[str, Any]
    ) -> Any:
        name = one(q, "autoscaler") or b.get("name")
        if not name:
            raise ApiError(400, "Required field 'autoscaler' not specified")
        with self.changed:
            fail, stuck = self.faults.operation_faults("PATCH autoscalers.patch")
            op = self.world.patch_autoscaler(
                project, p["scope"], str(name), b, one(q, "requestId"), fail, stuck
            )
            return op.render(self.world.now())

    def get_operation(self, project: str, p: dict[str, str], q: Any, b: Any) -> Any:
        with self.lock:
            op = self.world.operation(project, p["scope"], p["op"])
            return op.render(self.world.now())

    def wait_operation(self, project: str, p: dict[str, str], q: Any, b: Any) -> Any:
        with self.lock:
            op = self.world.operation(project, p["scope"], p["op"])
            if self.faults.early_waits > 0:  # busy: answer at once, not DONE
                self.faults.early_waits -= 1
                return op.render(self.world.now(), not_done=True)
            limit = self.faults.wait_limit
        deadline = time.time() + limit
        while op.status(self.world.now()) != "DONE" and time.time() < deadline:
            time.sleep(min(0.01, max(0.0, op.done_at() - self.world.now())) or 0.001)
        with self.lock:
            return op.render(self.world.now())


def _route(
    verb: str, pattern: str, name: str, handler: Handler
) -> tuple[str, re.Pattern[str], str, Handler]:
    return verb, re.compile(r"(?P<project>[^/]+)/" + pattern), name, handler


S = ComputeServer
ROUTES = [
    _route(
        "GET",
        "aggregated/instanceGroupManagers",
        "aggregated/instanceGroupManagers",
        S.aggregated_migs,
    ),
    _route("GET", "aggregated/autoscalers", "aggregated/autoscalers", S.aggregated_autoscalers),
    _route("GET", SCOPE + "/instanceGroupManagers", "instanceGroupManagers.list", S.list_migs),
    _route(
        "GET",
        SCOPE + "/instanceGroupManagers/(?P<name>[^/]+)",
        "instanceGroupManagers.get",
        S.get_mig,
    ),
    _route(
        "POST",
        SCOPE + "/instanceGroupManagers/(?P<name>[^/]+)/resize",
        "instanceGroupManagers.resize",
        S.resize,
    ),
    _route("GET", SCOPE + "/autoscalers", "autoscalers.list", S.list_autoscalers),
    _route("PATCH", SCOPE + "/autoscalers", "autoscalers.patch", S.patch_autoscaler),
    _route("GET", SCOPE + "/autoscalers/(?P<name>[^/]+)", "autoscalers.get", S.get_autoscaler),
    _route("GET", SCOPE + "/operations/(?P<op>[^/]+)", "operations.get", S.get_operation),
    _route("POST", SCOPE + "/operations/(?P<op>[^/]+)/wait", "operations.wait", S.wait_operation),
]


def _make_handler(server: ComputeServer) -> type[BaseHTTPRequestHandler]:
    class RequestHandler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _serve(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw.strip() else {}
                if not isinstance(body, dict):
                    raise ApiError(400, "Invalid JSON payload received.")
                result = server.handle(self.command, parts.path, parse_qs(parts.query), body)
                self._reply(200, result)
            except ApiError as exc:
                self._reply(exc.code, exc.body())
            except json.JSONDecodeError:
                self._reply(400, ApiError(400, "Invalid JSON payload received.").body())
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client gave up waiting (its timeout)
            except Exception as exc:  # a bug in the server: say so the way the API would
                self._reply(500, ApiError(500, f"Internal error: {exc!r}").body())

        def _reply(self, code: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json; charset=UTF-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

    return RequestHandler
