"""httpx for plain HTTP to the servers tests start on loopback.

httpx builds an SSL context for every client it makes, reading and parsing the system's CA
bundle (about 30 ms), which a plain ``http://`` request never uses: hundreds of clients over the
suite. These share one context, made once; the requests are httpx's own."""

from __future__ import annotations

import ssl
from typing import Any

import httpx

PLAIN_HTTP = ssl.create_default_context()


def client(**options: Any) -> httpx.Client:
    return httpx.Client(verify=PLAIN_HTTP, **options)


def get(url: str, **options: Any) -> httpx.Response:
    return httpx.get(url, verify=PLAIN_HTTP, **options)


def post(url: str, **options: Any) -> httpx.Response:
    return httpx.post(url, verify=PLAIN_HTTP, **options)
