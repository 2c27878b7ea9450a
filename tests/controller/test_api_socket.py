"""The controller's listening socket says it is TCP, so asyncio turns Nagle off on every accepted
connection (otherwise each answer written in two parts waits for a ~40 ms delayed ACK: found by
bench/bench_ingest.py)."""

from __future__ import annotations

import socket

from arklow_pulumi.controller.running import _bind


def test_the_listener_is_tcp_so_accepted_connections_get_nodelay() -> None:
    listener = _bind("127.0.0.1", 0)
    try:
        assert listener.proto == socket.IPPROTO_TCP
        client = socket.create_connection(listener.getsockname())
        accepted, _ = listener.accept()
        try:
            # what asyncio's transport checks before setting TCP_NODELAY (base_events._set_nodelay)
            assert accepted.proto == socket.IPPROTO_TCP
        finally:
            accepted.close()
            client.close()
    finally:
        listener.close()
