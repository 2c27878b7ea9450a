"""Who created a stored object, and what a create, update or delete may do to it.

Every row a Pulumi resource creates records the id of that one create (``create_id``, returned to
the engine as the resource's id) and its owner: the stack and the resource's URN. The rules follow
from how the engine works (docs/store.md, "Store identity"):

- **delete and update act only on the row with their own create id.** A create-before-delete
  replacement creates (or takes over) the object first; the delete of the old resource then finds
  another create id and leaves the object alone.
- **a create that finds its own stack's row adopts it**: the row was left by an interrupted
  ``pulumi up`` (the commit landed, the state never heard of it) or by a rename within the stack.
  Adoption applies the new inputs and gives the row the new create id, so a stale resource of the
  old id can no longer touch it.
- **a row of another stack is a conflict** naming that stack.
- a row with no owner recorded (written outside Pulumi, or before schema 0002 and not yet updated)
  is left to the rules, as before: a second destination of one name is refused, a membership moves.

Plain values only (no SQLAlchemy import: the Pulumi program and previews load this module); the
rows are read and stamped in :mod:`.snapshots`.

The stack is compared together with the project, both taken from the URN
(``urn:pulumi:<stack>::<project>::<type>::<name>``): two projects may each have a stack ``dev``.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from arklow_pulumi.core.errors import Problem, TopologyRuleViolation


def new_create_id() -> str:
    return uuid.uuid4().hex


def stack_of_urn(urn: str | None) -> tuple[str, str] | None:
    """``(stack, project)`` of a URN, or None when ``urn`` is not one."""
    if not urn or not urn.startswith("urn:pulumi:"):
        return None
    parts = urn[len("urn:pulumi:") :].split("::")
    return (parts[0], parts[1]) if len(parts) >= 4 else None


@dataclass(frozen=True)
class Owner:
    """The Pulumi stack and resource (URN) a create runs for."""

    stack: str
    urn: str

    def same_stack(self, found: Identity) -> bool:
        if found.owner_stack != self.stack:
            return False
        mine, theirs = stack_of_urn(self.urn), stack_of_urn(found.owner_urn)
        return mine is None or theirs is None or mine[1] == theirs[1]


@dataclass(frozen=True)
class Claim:
    """What a create or update stamps on its row: its create id and, when known, its owner."""

    create_id: str
    owner: Owner | None = None


@dataclass(frozen=True)
class Identity:
    """A row's identity as stored."""

    create_id: str | None = None
    owner_stack: str | None = None
    owner_urn: str | None = None


NONE = Identity()


def may_adopt(obj: str, found: Identity | None, claim: Claim) -> bool:
    """Whether a create may take over the row ``found``: True for a row of the claim's own stack;
    False when there is no row or no owner to compare (the rules decide); a conflict otherwise."""
    if found is None or claim.owner is None or found.owner_stack is None:
        return False
    if claim.owner.same_stack(found):
        return True
    raise TopologyRuleViolation(
        [
            Problem(
                obj,
                "name",
                f"already in the store, created by stack {found.owner_stack!r} "
                f"({found.owner_urn}); one object has one owner: rename it here, or remove it "
                f"from stack {found.owner_stack!r} first",
            )
        ]
    )


def require_own(obj: str, found: Identity | None, create_id: str | None) -> None:
    """An update acts only on its own row: refuse when the stored row is another create's."""
    if create_id is None or found is None or found.create_id == create_id:
        return
    by = f"stack {found.owner_stack!r}" if found.owner_stack else "no recorded stack"
    raise TopologyRuleViolation(
        [
            Problem(
                obj,
                "name",
                f"the stored object belongs to another create ({by}), not to this resource; "
                "run `pulumi refresh` to drop the stale resource from the state",
            )
        ]
    )


def owns(found: Identity | None, create_id: str | None) -> bool:
    """Whether a delete of ``create_id`` may remove the row (None: the caller is not Pulumi, which
    acts by name as before)."""
    return found is not None and (create_id is None or found.create_id == create_id)
