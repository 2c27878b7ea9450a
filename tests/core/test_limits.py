"""Documented ranges of every number and the one name rule (issue 8, items 5 and 7).

Each case is checked twice: through the spec (what ``arklow validate``, ``arklow allocate`` and
``pulumi preview`` parse) and, where a value can be built in code, through the topology rules.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from arklow_pulumi.core.allocating import allocate
from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.core.limits import MAX_COUNT, MAX_NAME_LENGTH, MAX_UNITS, name_problem
from arklow_pulumi.core.rules import add_destination, add_pool
from arklow_pulumi.core.topology import Destination, GroupRef, Lane, Pool, ScaleTarget, Topology
from arklow_pulumi.reading.parsing import parse_demand, parse_topology
from arklow_pulumi.reading.spec import build_topology


def doc(
    lane: dict[str, Any] | None = None,
    pool: dict[str, Any] | None = None,
    target: dict[str, Any] | None = None,
    dest: dict[str, Any] | None = None,
) -> dict[str, Any]:
    lane_doc = {"name": "l", "limit": 5, **(lane or {})}
    target_doc = {
        "kind": "aws_asg",
        "name": "t",
        "min_replicas": 0,
        "max_replicas": 5,
        "units_per_replica": 1,
        **(target or {}),
    }
    dest_doc = {"name": "d", "resources": ["gpu"], "lanes": [lane_doc], **(dest or {})}
    pool_doc = {
        "name": "p",
        "resource": "gpu",
        "members": ["d"],
        "scale_targets": [target_doc],
        **(pool or {}),
    }
    return {"destinations": [dest_doc], "pools": [pool_doc]}


REFUSED = [
    # (name, document, object, field)
    ("units_per_replica 1.0e+306", doc(target={"units_per_replica": 1.0e306}), "scale target 't'", "units_per_replica"),
    ("max_replicas 10**400", doc(target={"max_replicas": 10**400}), "scale target 't'", "max_replicas"),
    ("replicas above 1e6", doc(target={"replicas": MAX_COUNT + 1}), "scale target 't'", "replicas"),
    ("units_per_replica tiny", doc(target={"units_per_replica": 1e-300}), "scale target 't'", "units_per_replica"),
    ("limit 1e200", doc(lane={"limit": 1e200}), "lane 'l'", "limit"),
    ("cost 1e200", doc(lane={"cost": {"gpu": 1e200}}), "lane 'l'", "cost.gpu"),
    ("weight 1e200", doc(lane={"weight": 1e200}), "lane 'l'", "weight"),
    ("weight subnormal", doc(lane={"weight": 5e-324}), "lane 'l'", "weight"),
    ("capacity above 1e12", doc(pool={"capacity": 2e12}), "pool 'p'", "capacity"),
    ("capacity below 1e-9", doc(pool={"capacity": 1e-300}), "pool 'p'", "capacity"),
    ("standalone capacity 1e200", doc(dest={"standalone_capacity": {"gpu": 1e200}}), "destination 'd'", "standalone_capacity"),
    ("headroom 1e300", doc(pool={"headroom": 1e300}), "pool 'p'", "headroom"),
    ("name of 256 characters", doc(dest={"name": "d" * 256}), "destination", "name"),
    ("lane name with a control character", doc(lane={"name": "a\x07b"}), "lane", "name"),
    ("pool name with NUL", doc(pool={"name": "p\x00"}), "pool", "name"),
    ("resource with a line separator", doc(pool={"resource": "gpu\u2028"}), "pool 'p'", "resource"),
    ("target name with a bidi override", doc(target={"name": "t\u202e"}), "scale target", "name"),
    ("group name of 256 characters", doc(target={"group": "g" * 256}), "scale target 't'", "group"),
    ("region with a newline", doc(target={"region": "us-east-1\n"}), "scale target 't'", "region"),
    ("member name of 256 characters", doc(pool={"members": ["m" * 256]}), "pool 'p'", "members"),
    ("destination name ending in a space", doc(dest={"name": "d "}), "destination", "name"),
    ("lane name beginning with a space", doc(lane={"name": " l"}), "lane", "name"),
    ("pool name of one space", doc(pool={"name": " "}), "pool", "name"),
    ("destination name in NFD", doc(dest={"name": "cafe\u0301"}), "destination", "name"),
    ("resource with a compatibility look-alike", doc(pool={"resource": "\u212b"}), "pool 'p'", "resource"),
    ("target group in NFD", doc(target={"group": "gro\u0308up"}), "scale target 't'", "group"),
    ("standalone pool name over 255", doc(dest={"name": "d" * 200, "resources": ["r" * 60], "lanes": []}, pool={"members": []}), "destination", "resources"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "document", "obj", "field"), REFUSED, ids=[c[0] for c in REFUSED])
def test_out_of_range_is_refused_naming_object_and_field(
    name: str, document: dict[str, Any], obj: str, field: str
) -> None:
    with pytest.raises(InvalidInput) as info:
        build_topology(parse_topology(document))
    text = str(info.value)
    assert obj in text and f"field '{field}" in text, text
    assert "\n" not in text and len(text) < 1000


def test_largest_values_allocate_to_finite_numbers() -> None:
    """Every number at its documented maximum (or minimum): no overflow, no NaN, no infinity."""
    big = doc(
        lane={"limit": MAX_UNITS, "weight": 1e-6, "cost": {"gpu": 1e6}},
        pool={"capacity": 1e-9, "headroom": 100},
        target={"max_replicas": MAX_COUNT, "units_per_replica": 1e-6, "replicas": 0},
    )
    big["destinations"][0]["lanes"] += [
        {"name": f"x{k}", "limit": MAX_UNITS, "weight": 1e6, "cost": {"gpu": 1e-6}}
        for k in range(50)
    ]
    topo = build_topology(parse_topology(big))
    demand = dict(parse_demand({"lanes": {f"d/x{k}": MAX_UNITS for k in range(50)}}).lanes)
    demand["d/l"] = MAX_UNITS
    result = allocate(topo, demand)
    numbers = [v for lane in result.lanes.values() for v in vars_of(lane)]
    pool = result.pools["p"]
    numbers += [pool.capacity, pool.demand, pool.pressure or 0.0]
    assert all(math.isfinite(x) for x in numbers)
    assert pool.desired_by_target == (MAX_COUNT,)


def vars_of(lane: Any) -> list[float]:
    return [lane.demand, lane.allocation, lane.held, lane.admission]


def test_names_of_255_printable_characters_are_accepted() -> None:
    name = "é" * MAX_NAME_LENGTH
    topo = build_topology(
        parse_topology(
            {
                "destinations": [
                    {"name": name, "resources": [], "lanes": [{"name": name, "limit": 1}]}
                ]
            }
        )
    )
    assert f"{name}/{name}" in allocate(topo, {}).lanes


def test_a_look_alike_name_is_refused_naming_both_forms() -> None:
    """NFC ``é`` and NFD ``e\u0301`` look the same: the second is refused, both shown."""
    document = {
        "destinations": [
            {"name": "caf\u00e9", "resources": [], "lanes": []},
            {"name": "cafe\u0301", "resources": [], "lanes": []},
        ]
    }
    with pytest.raises(InvalidInput) as info:
        build_topology(parse_topology(document))
    assert str(info.value) == (
        "destination 'cafe\u0301': field 'name': must be in Unicode NFC: 'e\u0301' (U+0065 U+0301) looks "
        "like '\u00e9' (U+00E9) but is another name; write '\u00e9'"
    )
    with pytest.raises(InvalidInput, match="must be in Unicode NFC"):
        add_destination(Topology(), Destination("cafe\u0301", (), ()))  # built in code: same rule


@pytest.mark.parametrize("name", ["a b", "x", "é", "\u0301a", "'=x", "=1+1", "a`b", "\u00c5"])
def test_names_the_rule_accepts(name: str) -> None:
    assert name_problem(name) is None


@pytest.mark.parametrize(
    ("demand", "needle"),
    [(1e200, "less than or equal to 1000000000000"), (math.inf, "finite"), (-1.0, "greater")],
)
def test_demand_out_of_range_is_refused(demand: float, needle: str) -> None:
    with pytest.raises(InvalidInput, match=needle):
        parse_demand({"lanes": {"d/l": demand}})
    topo = build_topology(parse_topology(doc()))
    with pytest.raises(InvalidInput, match="demand lane 'd/l'"):
        allocate(topo, {"d/l": demand})


BUILT_IN_CODE = [
    # objects made in code (library users, providers) meet the same ranges through the rules
    ("limit", lambda: add_destination(Topology(), Destination("d", (), (Lane("d", "l", 1e200),)))),
    ("weight", lambda: add_destination(Topology(), Destination("d", (), (Lane("d", "l", 1, 1e-300),)))),
    ("name", lambda: add_destination(Topology(), Destination("d\x1b[31m"))),
    ("name", lambda: add_destination(Topology(), Destination("d" * 256))),
    ("capacity", lambda: add_pool(Topology(), Pool("p", "gpu", capacity=1e-300))),
    ("headroom", lambda: add_pool(Topology(), Pool("p", "gpu", headroom=math.inf))),
    ("max_replicas", lambda: add_pool(Topology(), Pool("p", "gpu", scale_targets=(target(hi=10**400),)))),
    ("units_per_replica", lambda: add_pool(Topology(), Pool("p", "gpu", scale_targets=(target(upr=1e306),)))),
    ("group", lambda: add_pool(Topology(), Pool("p", "gpu", scale_targets=(target(group="g\t"),)))),
]  # fmt: skip


def target(hi: int = 5, upr: float = 1.0, group: str = "g") -> ScaleTarget:
    return ScaleTarget("t", GroupRef("aws_asg", group, region="r"), 0, hi, upr, 0)


@pytest.mark.parametrize(
    ("field", "make"), BUILT_IN_CODE, ids=[f"{c[0]}-{i}" for i, c in enumerate(BUILT_IN_CODE)]
)
def test_objects_built_in_code_meet_the_same_ranges(field: str, make: Any) -> None:
    with pytest.raises(InvalidInput, match=f"field '{field}'"):
        make()


SAME_WORDS = [
    # (field, document, the same value built in code): one rule, one message, on both paths
    ("weight", doc(lane={"weight": 30_000_000}), lambda: add_destination(Topology(), Destination("d", ("gpu",), (Lane("d", "l", 5, 3e7),)))),
    ("limit", doc(lane={"limit": -1}), lambda: add_destination(Topology(), Destination("d", ("gpu",), (Lane("d", "l", -1.0),)))),
    ("capacity", doc(pool={"capacity": 1e-12}), lambda: add_pool(Topology(), Pool("p", "gpu", capacity=1e-12))),
    ("max_replicas", doc(target={"max_replicas": 10**7}), lambda: add_pool(Topology(), Pool("p", "gpu", scale_targets=(target(hi=10**7),)))),
    ("name", doc(dest={"name": "d" * 256}), lambda: add_destination(Topology(), Destination("d" * 256))),
]  # fmt: skip


@pytest.mark.parametrize(("field", "document", "make"), SAME_WORDS, ids=[c[0] for c in SAME_WORDS])
def test_a_field_breaks_its_rule_in_the_same_words_on_every_path(
    field: str, document: dict[str, Any], make: Any
) -> None:
    with pytest.raises(InvalidInput) as from_file:
        build_topology(parse_topology(document))
    with pytest.raises(InvalidInput) as from_code:
        make()
    messages = {p.message for p in from_file.value.problems if p.field == field}
    assert messages and messages == {
        p.message for p in from_code.value.problems if p.field == field
    }
