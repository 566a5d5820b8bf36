"""Writes to traits outside a reflection cycle: staff vetoes.

A dissolved trait keeps its row, evidence and history: its stage becomes `dissolved` and
`invalid_at` is set (it stopped being believed then, so it leaves current reads while "as of"
an earlier instant still sees it). The audit trigger logs the change as STAGE_CHANGE.
"""

import uuid
from collections.abc import Sequence

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from memories.models import Memory, MemoryType, TraitStage
from neuromem_site.access import Caller, user_access_check
from neuromem_site.db.actor import audit_actor
from neuromem_site.errors import Conflict, Forbidden, Invalid, NotFound
from neuromem_site.validation import text_problem, validated
from reflection.services.maintenance import trait_view_refresh_after_commit

# The audit log's actor for a staff decision on a trait (seed 002: system / reflection / user).
VETO_ACTOR = "user"
REASON_MAX_CHARS = 1000


def traits_veto(*, caller: Caller, trait_ids: Sequence[uuid.UUID], reason: str) -> list[Memory]:
    """Dissolve the traits (staff only), recording who and why in each trait's
    `metadata.veto`; the history's actor is `user`. All or nothing: one trait that cannot be
    vetoed (missing, already dissolved, changed meanwhile) leaves every one as it was."""
    if not caller.is_staff:
        raise Forbidden("Vetoing a trait needs a staff client.")
    reason = (reason or "").strip()
    validated(reason=text_problem(reason) if reason else "A veto needs a reason.")
    if len(reason) > REASON_MAX_CHARS:
        raise Invalid(f"At most {REASON_MAX_CHARS} characters.", field="reason")
    try:
        ids = list(dict.fromkeys(uuid.UUID(str(trait_id)) for trait_id in trait_ids))
    except ValueError:
        raise Invalid("Each must be a trait id (UUID).", field="trait_ids") from None
    if not ids:
        raise Invalid("Name at least one trait.", field="trait_ids")
    now = timezone.now()
    with transaction.atomic(), audit_actor(VETO_ACTOR):
        traits = Memory.objects.filter(memory_type=MemoryType.TRAIT, pk__in=ids).in_bulk()
        for trait_id in ids:
            trait = traits.get(trait_id)
            if trait is None:
                raise NotFound(f"Trait '{trait_id}' not found.")
            user_access_check(caller=caller, user_id=trait.user_id, write=True)
            if trait.trait_stage == TraitStage.DISSOLVED or trait.expired_at or trait.invalid_at:
                raise Conflict(f"Trait '{trait_id}' is no longer current.", field="trait_id")
            veto = {"reason": reason, "by": caller.name, "at": now.isoformat()}
            changed = Memory.objects.filter(
                memory_type=MemoryType.TRAIT, pk=trait_id, version=trait.version
            ).update(
                trait_stage=TraitStage.DISSOLVED,
                invalid_at=now,
                updated_at=now,
                metadata={**trait.metadata, "veto": veto},
                version=F("version") + 1,
            )
            if not changed:
                raise Conflict(
                    f"Trait '{trait_id}' changed while it was vetoed; try again.", field="version"
                )
        trait_view_refresh_after_commit()
        return list(Memory.objects.filter(memory_type=MemoryType.TRAIT, pk__in=ids))


def trait_veto(*, caller: Caller, trait_id: uuid.UUID, reason: str) -> Memory:
    (trait,) = traits_veto(caller=caller, trait_ids=[trait_id], reason=reason)
    return trait
