"""Demand history packed one row per tick: the lane ids and the demands as two blobs.

A tick writes one history row per lane whose demand changed (and every lane once per keyframe
interval): at 10,000 lanes that was 10,000 table rows and index entries per tick. Stored packed,
the tick's history is one row holding two arrays of the same length ``n``:

- ``lanes``: the lanes' ids in the lane dictionary (``runtime_demand_lanes``), int32
  little-endian;
- ``demands``: the demands, float64 little-endian (IEEE 754 doubles, so every value, including
  -0.0, subnormals and large numbers, comes back bit for bit).

Row ``i`` of the tick is ``(lanes[i], demands[i])``; the order is the order the tick gave, so a
lane twice in one tick keeps its later value last, as its later row did.
"""

from __future__ import annotations

import struct
import sys
from array import array
from collections.abc import Iterable

_BIG_ENDIAN = sys.byteorder == "big"
_ONE_LANE = struct.Struct("<i")
if array("i").itemsize != 4 or array("d").itemsize != 8:  # pragma: no cover - exotic platforms
    raise ImportError("demand history packing needs 4-byte 'i' and 8-byte 'd' arrays")


def pack_lanes(ids: Iterable[int]) -> bytes:
    """Lane ids as int32 little-endian."""
    return _little_endian(array("i", ids))


def pack_demands(demands: Iterable[float]) -> bytes:
    """Demands as float64 little-endian."""
    return _little_endian(array("d", demands))


def unpack_lanes(blob: bytes | memoryview) -> array[int]:
    values = array("i")
    _load(values, blob)
    return values


def unpack_demands(blob: bytes | memoryview) -> array[float]:
    values = array("d")
    _load(values, blob)
    return values


def lanes_in(blob: bytes, ids: Iterable[int]) -> set[int]:
    """Which of ``ids`` a lane blob holds, found in the bytes (no array of the whole row): for a
    reader looking for a few lanes through many rows."""
    found = set()
    for lane in ids:
        needle = _ONE_LANE.pack(lane)
        at = blob.find(needle)
        while at > 0 and at % 4:  # a match across two items: look further
            at = blob.find(needle, at + 1)
        if at >= 0:
            found.add(lane)
    return found


def _little_endian(values: array[int] | array[float]) -> bytes:
    if _BIG_ENDIAN:  # pragma: no cover - no big-endian machine runs the tests
        values.byteswap()
    return values.tobytes()


def _load(values: array[int] | array[float], blob: bytes | memoryview) -> None:
    if len(blob) % values.itemsize:
        raise ValueError(
            f"packed demand history: {len(blob)} bytes are not whole {values.itemsize}-byte items"
        )
    values.frombytes(blob)
    if _BIG_ENDIAN:  # pragma: no cover
        values.byteswap()
