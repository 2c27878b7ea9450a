"""A small logging HTTP proxy for the moto server (moto keeps no request log of its own that shows
headers): it forwards each request unchanged and records method, path, the ``Action`` of a query
API call and the ``User-Agent``, so a test reads which epoch sent each Auto Scaling call."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs


class LoggingProxy:
    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.log: list[dict[str, str]] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                proxy._forward(self, "POST")

            def do_GET(self) -> None:
                proxy._forward(self, "GET")

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def _forward(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else None
        action = parse_qs((body or b"").decode(errors="replace")).get("Action", [""])[0]
        with self._lock:
            self.log.append(
                {
                    "method": method,
                    "path": handler.path,
                    "action": action,
                    "user_agent": handler.headers.get("User-Agent", ""),
                }
            )
        headers = {k: v for k, v in handler.headers.items() if k.lower() != "host"}
        request = urllib.request.Request(self.upstream + handler.path, body, headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                status, data, out = answer.status, answer.read(), answer.headers
        except urllib.error.HTTPError as exc:
            status, data, out = exc.code, exc.read(), exc.headers
        handler.send_response(status)
        for key, value in out.items():
            if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                handler.send_header(key, value)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
