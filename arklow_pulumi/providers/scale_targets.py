"""The provider of ``ScaleTarget``: binds a pool to an ASG or MIG that changes its supply.

Create and update check the group against the cloud with
:func:`arklow_pulumi.supply.verifying.verify_target` (the group exists; ``[min_replicas,
max_replicas]`` fits inside the group's own bounds). ``read`` does not: it returns what the store
holds, so one drifted group shows as drift in ``pulumi refresh`` instead of failing it. ``check``
verifies fully when an existing target's group changes (a replacement deletes the old target
first, so a new group that does not exist must fail at preview, before anything is deleted).
Otherwise it checks only the bounds, and only when the group can be described within a few
seconds: ``max_replicas`` above the group's own maximum fails at preview, while a stack without
cloud access (or whose group the program has yet to create) still previews.
The supply binding is built inside the call from plain provider config (``arklow:awsEndpoint``,
``arklow:gcpComputeEndpoint``...) or the environment (``AWS_ENDPOINT_URL``); no client is kept on
the instance.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from pulumi.dynamic import (
    CheckFailure,
    CheckResult,
    CreateResult,
    DiffResult,
    UpdateResult,
)

from arklow_pulumi.core.errors import InvalidInput, Problem
from arklow_pulumi.core.fields import declared, table
from arklow_pulumi.core.topology import GroupRef, ScaleTarget
from arklow_pulumi.core.validating import target_problems, target_reference_problems
from arklow_pulumi.providers.declaring import fields_of
from arklow_pulumi.providers.diffing import canonical, diff_inputs
from arklow_pulumi.providers.inputs import check_model, integral, is_unknown, parse_in_topology
from arklow_pulumi.providers.storing import (
    NamedObjectProvider,
    claim_of,
    service,
    stored_name,
    with_store,
)
from arklow_pulumi.reading.spec import ScaleTargetSpec, target_from_spec
from arklow_pulumi.supply.contract import Supply
from arklow_pulumi.supply.errors import MissingCredentials
from arklow_pulumi.supply.selecting import EndpointConfig, supply_for
from arklow_pulumi.supply.verifying import verify_target
from arklow_pulumi.topology_documents import target_document, value_from_document

# The resource's inputs: its Arklow name, its pool and the fields a target declares (core.fields).
FIELDS = fields_of(ScaleTarget)
INPUTS = ("arklow_name", "pool", *FIELDS)
IDENTITY = ("arklow_name", "pool", "group")
GROUP_FIELDS = tuple(f.name for f in table(GroupRef))


def _raw(props: dict[str, Any]) -> dict[str, Any]:
    """The inputs as a scale target of a topology file: the group's fields flattened into it
    (its name as ``group``), the counts as integers (the engine sends floats)."""
    group = props.get("group")
    if is_unknown(group) and not isinstance(group, dict):
        group = dict.fromkeys(GROUP_FIELDS, group)
    group = group if isinstance(group, dict) else {}
    raw = {field: group.get(field) for field in GROUP_FIELDS}
    raw["group"], raw["name"] = raw.pop("name"), props.get("arklow_name")
    for info in declared(ScaleTarget):
        if info.form != "group":
            value = props.get(info.name)
            raw[info.name] = integral(value) if info.form == "count" else value
    return raw


# The pool name a problem is reported under while the pool is not a known plain name.
UNNAMED_POOL = "?"


def _pool_label(pool: Any) -> str:
    return pool if isinstance(pool, str) and pool and not is_unknown(pool) else UNNAMED_POOL


def _problems(pool: Any, spec: ScaleTargetSpec) -> list[Problem]:
    """Rules of one target; an unknown pool (preview) is checked again at ``up``, not refused."""
    target = target_from_spec(spec)
    label = _pool_label(pool)
    obj = f"pool {label!r}, scale target {spec.name!r}"
    missing = not is_unknown(pool) and not (isinstance(pool, str) and pool)
    found = [Problem(obj, "pool", "is required")] if missing else []
    return [
        *found,
        *target_problems(label, target, fields_checked=True),
        *target_reference_problems(label, target),
    ]


def _partial_problems(pool: Any, parsed: Mapping[str, Any]) -> list[Problem]:
    """``min_replicas`` <= ``max_replicas`` from the fields that parsed, when others did not."""
    name, low, high = parsed.get("name"), parsed.get("min_replicas"), parsed.get("max_replicas")
    if not (isinstance(name, str) and isinstance(low, int) and isinstance(high, int)):
        return []
    # A stand-in for the fields that did not parse, valid so that only min/max can be reported.
    stand_in = ScaleTarget(name, GroupRef("aws_asg", name), low, high, 1.0, low)
    return [p for p in target_problems(_pool_label(pool), stand_in) if p.field == "min_replicas"]


def _normalized(spec: ScaleTargetSpec) -> dict[str, Any]:
    document = target_document(target_from_spec(spec))
    return {"arklow_name": spec.name, **{name: document[name] for name in FIELDS}}


# One binding per (kind, endpoints) per provider process, reused across calls: building a boto3
# client costs ~100 ms. Module-level, never on the provider instance, which Pulumi pickles.
_SUPPLIES: dict[tuple[str, EndpointConfig], Supply] = {}
_SUPPLIES_LOCK = threading.Lock()


def _supply(kind: str, config: EndpointConfig) -> Supply:
    with _SUPPLIES_LOCK:
        supply = _SUPPLIES.get((kind, config))
        if supply is None:
            supply = _SUPPLIES[(kind, config)] = supply_for(kind, config)
        return supply


# How long ``check`` waits for a group's description before leaving the bounds to ``create``.
PREVIEW_DESCRIBE_SECONDS = 5.0


def _within(
    seconds: float, call: Callable[[], list[Problem]]
) -> list[Problem] | MissingCredentials | None:
    """``call()``'s result, or None when it fails or takes longer than ``seconds`` (it then
    finishes, or not, on a daemon thread that never holds the provider process open). Missing
    credentials are returned: they are known now, and every later call would fail on them."""
    found: list[list[Problem] | MissingCredentials] = []

    def run() -> None:
        try:
            found.append(call())
        except MissingCredentials as exc:
            found.append(exc)
        except Exception:  # no cloud access: the bounds wait for ``create``
            return

    worker = threading.Thread(target=run, name="arklow-preview-describe", daemon=True)
    worker.start()
    worker.join(seconds)
    return found[0] if found else None


def _target(checked: dict[str, Any]) -> ScaleTarget:
    """The target that inputs returned by :meth:`ScaleTargetProvider.check` describe. They were
    validated there (and the engine hands ``create``/``update`` exactly those), so this only
    converts; the store's rule checks the target once more in its own transaction, against the
    topology it joins."""
    doc = {**checked, "name": str(checked["arklow_name"])}
    return value_from_document(ScaleTarget, doc, replicas=int(checked["min_replicas"]))


class ScaleTargetProvider(NamedObjectProvider):
    def check(self, olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        pool = news.get("pool")
        parent = {"name": _pool_label(pool), "resource": "?"}
        result = check_model(
            lambda raw: parse_in_topology(ScaleTargetSpec, "scale_targets", raw, parent),
            _raw(news),
            news,
            lambda spec: _problems(pool, spec),
            _normalized,
            lambda parsed: _partial_problems(pool, parsed),
        )
        for failure in result.failures:
            if failure.property in GROUP_FIELDS:
                failure.property = "group"
        if not result.failures and self._group_changes(olds, result.inputs):
            result.failures.extend(self._verify_new_group(result.inputs))
        elif not result.failures:
            result.failures.extend(self._bounds_if_described(result.inputs))
        return result

    def _bounds_if_described(self, checked: dict[str, Any]) -> list[CheckFailure]:
        """``[min_replicas, max_replicas]`` against the group's own bounds, when the group can
        be described within :data:`PREVIEW_DESCRIBE_SECONDS`, and missing credentials for the
        cloud. Otherwise (no cloud access at preview, no such group yet: the program may create
        it) nothing is reported here and ``create`` checks again."""
        if any(is_unknown(v) for v in checked.values()):
            return []
        target = _target(checked)
        config = EndpointConfig.from_provider_config(self.config)
        problems = _within(
            PREVIEW_DESCRIBE_SECONDS, lambda: verify_target(target, _supply(target.kind, config))
        )
        if isinstance(problems, MissingCredentials):
            return [CheckFailure("group", f"scale target {target.name!r}: {problems}")]
        return [CheckFailure(p.field, str(p)) for p in problems or () if p.field != "group"]

    @staticmethod
    def _group_changes(olds: Mapping[str, Any], checked: Mapping[str, Any]) -> bool:
        """An existing target (``olds``) whose fully known inputs name another group."""
        if not olds or not olds.get("group") or any(is_unknown(v) for v in checked.values()):
            return False
        return bool(canonical(olds.get("group")) != canonical(checked.get("group")))

    def _verify_new_group(self, checked: dict[str, Any]) -> list[CheckFailure]:
        """The new group exists and fits the bounds, checked read-only before the replacement
        deletes the old target (its Arklow name is kept, so the delete comes first)."""
        try:
            self.verify(_target(checked))
        except InvalidInput as exc:
            return [CheckFailure("group", str(p)) for p in exc.problems]
        return []

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        return diff_inputs(olds, news, INPUTS, IDENTITY)

    def create(self, props: dict[str, Any]) -> CreateResult:
        target, pool = _target(props), str(props["pool"])
        self.verify(target)
        return self.created(
            props,
            lambda store, claim: service.target_view(
                service.attach_target(store, pool, target, claim), target.name
            ),
        )

    def update(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        store, claim = self.store(news), claim_of(id_, news)
        target, pool = _target(news), str(news["pool"])
        if all(canonical(olds.get(k)) == canonical(news.get(k)) for k in INPUTS):
            # Only ``store`` or the owner changed (a rotated URL, a stack's first ``up`` after
            # schema 0002): no cloud call; the owner is recorded, the outputs carry the URL.
            if claim.owner is None:
                outs = self.stored_outputs(store, news, id_)
                return UpdateResult(outs or with_store(dict(olds), news))
        else:
            self.verify(target)
        # The store keeps the observed replica count, inside the new bounds.
        topo = service.update_target(store, pool, target, claim)
        return UpdateResult(self.outputs(service.target_view(topo, target.name), news))

    def delete(self, id_: str, props: dict[str, Any]) -> None:
        name = stored_name(props, id_)
        service.detach_target(self.stored_store(props), str(props["pool"]), name, id_)

    def view(self, store: Any, name: str) -> Any:
        return service.get_target(store, name)

    @staticmethod
    def document(view: service.TargetView) -> dict[str, Any]:
        return {"arklow_name": view.target.name, "pool": view.pool, **target_document(view.target)}

    def verify(self, target: ScaleTarget) -> None:
        """The group exists and the target's bounds fit inside the group's own."""
        supply = _supply(target.kind, EndpointConfig.from_provider_config(self.config))
        problems = verify_target(target, supply)
        if problems:
            raise InvalidInput(problems)
