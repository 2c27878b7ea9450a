"""The quick checks of :mod:`arklow_pulumi.core.validating` agree with the full ones.

``destination_is_plain`` and ``pool_is_plain`` let a large topology skip the generators of
``destination_problems`` and ``pool_problems``; they must say "plain" exactly when those find
nothing (else a problem could go unreported, or a valid topology be slowed for nothing).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from arklow_pulumi.core.topology import Destination, GroupRef, Lane, Pool, ScaleTarget, frozen_map
from arklow_pulumi.core.validating import (
    destination_is_plain,
    destination_problems,
    pool_is_plain,
    pool_problems,
)

NAMES = st.sampled_from(["gpu", "cpu", "a", "b/c", "", "x" * 200, "y" * 254, "z" * 256, "t\tab"])
NUMBERS = st.sampled_from([0.0, -0.0, 1e-10, 1e-9, 0.5, 1.0, 100.0, 100.5, 1e12, 2e12, -1.0])
NUMBERS_ALL = NUMBERS | st.just(float("nan"))
COUNTS = st.sampled_from([-1, 0, 1, 3, 10, 1_000_000, 1_000_001])


@st.composite
def destinations(draw: st.DrawFn) -> Destination:
    name = draw(NAMES)
    resources = tuple(draw(st.lists(NAMES, max_size=3)))
    lanes = tuple(
        Lane(
            name,
            draw(NAMES),
            1.0,
            1.0,
            frozen_map(draw(st.dictionaries(NAMES, st.just(1.0), max_size=2))),
        )
        for _ in range(draw(st.integers(0, 3)))
    )
    capacity = frozen_map(draw(st.dictionaries(NAMES, NUMBERS_ALL, max_size=2)))
    return Destination(name, resources, lanes, capacity)


@st.composite
def pools(draw: st.DrawFn) -> Pool:
    targets = tuple(
        ScaleTarget(
            name=draw(NAMES),
            group=GroupRef(
                draw(st.sampled_from(["aws_asg", "gcp_mig"])),
                draw(NAMES),
                draw(st.none() | NAMES),
                draw(st.none() | NAMES),
                draw(st.none() | NAMES),
            ),
            min_replicas=draw(COUNTS),
            max_replicas=draw(COUNTS),
            units_per_replica=draw(NUMBERS_ALL | st.just(1e-6)),
            replicas=draw(COUNTS),
        )
        for _ in range(draw(st.integers(0, 2)))
    )
    return Pool(
        name=draw(NAMES),
        resource=draw(NAMES),
        capacity=draw(NUMBERS_ALL),
        headroom=draw(NUMBERS_ALL),
        scale_targets=targets,
    )


@settings(max_examples=1500, deadline=None)
@given(dest=destinations())
def test_a_plain_destination_is_one_without_problems(dest: Destination) -> None:
    assert destination_is_plain(dest) == (not list(destination_problems(dest, True)))


@settings(max_examples=1500, deadline=None)
@given(pool=pools())
def test_a_plain_pool_is_one_without_problems(pool: Pool) -> None:
    assert pool_is_plain(pool) == (not list(pool_problems(pool)))
