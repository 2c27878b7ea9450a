"""Topology, demand and other documents read from files (an adapter: the core never reads files).

A file is read as text (UTF-8), parsed by :func:`~arklow_pulumi.reading.text.parse_document` and
validated in one step into core values (:func:`~arklow_pulumi.reading.parsing.parse_topology`,
then :func:`~arklow_pulumi.reading.spec.build_topology`). Every failure is one
:class:`~arklow_pulumi.core.errors.InvalidInput` naming the file, the object and the field.

Every file the project reads is opened by :func:`open_input`: a regular file (a FIFO, a device
such as ``/dev/zero``, a socket or a directory is refused before a byte is read, and opening
never waits on a FIFO's writer) of at most a documented size: :data:`MAX_DOCUMENT_BYTES` for a
document (topology, demand, tokens, stack config), :data:`MAX_TRACE_BYTES` for a demand trace
(:mod:`arklow_pulumi.simulation.tracing`). A document is read up to its limit and no further,
even if the file grows while it is read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.core.topology import Topology
from arklow_pulumi.reading.parsing import parse_demand, parse_topology
from arklow_pulumi.reading.spec import build_topology
from arklow_pulumi.reading.text import MalformedDocument, parse_document

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "MAX_TRACE_BYTES",
    "load_demand",
    "load_topology",
    "open_input",
    "read_document",
]

MAX_DOCUMENT_BYTES = 32 * 2**20  # 32 MiB: a topology of 100,000 lanes is about 8 MiB of YAML
MAX_TRACE_BYTES = 2**30  # 1 GiB: a 7-day trace of 1,000 lanes reporting every 5 min is 40 MB

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def open_input(path: Path, source: str, limit: int) -> BinaryIO:
    """``path`` opened for reading in binary, once it is known to be a regular file of at most
    ``limit`` bytes; else one :class:`InvalidInput` naming ``source``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO opens without waiting
    except OSError as exc:
        raise InvalidInput.one(source, "(file)", exc.strerror or str(exc)) from exc
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            kind = next((what for test, what in _KINDS if test(found.st_mode)), "a special file")
            raise InvalidInput.one(source, "(file)", f"is {kind}, not a regular file")
        if found.st_size > limit:
            raise InvalidInput.one(source, "(file)", _too_large(found.st_size, limit))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _too_large(size: int | None, limit: int) -> str:
    what = f"is {size:,} bytes" if size is not None else "is larger than that"
    return f"{what}, over the limit of {limit:,} bytes ({limit // 2**20} MiB) for this file"


def read_document(path: Path, what: str) -> object:
    """Parse one YAML (or JSON) document; an unreadable, oversized, special or malformed file is
    one :class:`InvalidInput` line."""
    obj = f"{what} file {str(path)!r}"
    try:
        with open_input(path, obj, MAX_DOCUMENT_BYTES) as handle:
            data = handle.read(MAX_DOCUMENT_BYTES + 1)
    except OSError as exc:
        raise InvalidInput.one(obj, "(file)", exc.strerror or str(exc)) from exc
    if len(data) > MAX_DOCUMENT_BYTES:  # it grew after it was opened
        raise InvalidInput.one(obj, "(file)", _too_large(None, MAX_DOCUMENT_BYTES))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput.one(obj, "(file)", "is not UTF-8 text") from exc
    del data
    try:
        return parse_document(text)
    except MalformedDocument as exc:
        raise InvalidInput.one(obj, "(yaml)", str(exc)) from exc


def load_topology(path: Path) -> Topology:
    raw = read_document(path, "topology")
    spec = parse_topology(raw, f"topology {str(path)!r}")
    del raw  # the plain values are checked: the topology is built in the memory they held
    return build_topology(spec)


def load_demand(path: Path) -> dict[str, float]:
    raw = read_document(path, "demand")
    return dict(parse_demand(raw, f"demand {str(path)!r}").lanes)
