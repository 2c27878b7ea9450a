"""The documented limits of every number and name in a topology, and the target kinds.

Kept apart from :mod:`arklow_pulumi.core.spec` (which builds its pydantic models from them) so
that code which only needs a bound — the allocation engine, the fast document reader, the
controller's intake — does not import pydantic. :mod:`arklow_pulumi.core.spec` documents what
each limit is for.
"""

from __future__ import annotations

from typing import Literal

MAX_NAME_LENGTH = 255
MAX_COUNT = 1_000_000
MAX_UNITS = 1e12
MIN_CAPACITY = 1e-9
MIN_FACTOR, MAX_FACTOR = 1e-6, 1e6
MIN_UNITS_PER_REPLICA = 1e-6
MAX_HEADROOM = 100.0

TargetKind = Literal["aws_asg", "gcp_mig"]
TARGET_KINDS: tuple[TargetKind, ...] = ("aws_asg", "gcp_mig")
DEFAULT_HEADROOM = 0.1
