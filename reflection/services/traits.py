"""Writes to traits outside a reflection cycle: staff vetoes, and what forgetting takes away.

A dissolved trait keeps its row, evidence and history: its stage becomes `dissolved`, then
`expired_at` is set (seed 002 §5.2: the service stopped holding it then, so it leaves current
and latest reads while "as of" an earlier instant still sees it). The audit trigger logs a
STAGE_CHANGE, then a DELETE (reflection/services/maintenance.py, `traits_expire_dissolved`).
"""

import uuid
from collections import defaultdict
from collections.abc import Sequence

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from core.access import Caller, user_access_check
from core.db.actor import audit_actor
from core.errors import Conflict, Forbidden, Invalid, NotFound
from core.validation import text_problem, validated
from memories.models import Memory, MemoryType, TraitStage
from memories.redaction import redact
from memories.signals import ForgottenEffect
from reflection.models import EvidenceType, TraitEvidence
from reflection.rules import lifecycle_rules
from reflection.services.maintenance import (
    trait_view_refresh_after_commit,
    traits_expire_dissolved,
)

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
            # Stored in the trait's metadata: held to its rule, no secret (docs/privacy.md).
            veto = {"reason": redact(reason).text, "by": caller.name, "at": now.isoformat()}
            changed = Memory.objects.filter(
                memory_type=MemoryType.TRAIT, pk=trait_id, version=trait.version
            ).update(
                trait_stage=TraitStage.DISSOLVED,
                updated_at=now,
                metadata={**trait.metadata, "veto": veto},
                version=F("version") + 1,
            )
            if not changed:
                raise Conflict(
                    f"Trait '{trait_id}' changed while it was vetoed; try again.", field="version"
                )
        traits_expire_dissolved(trait_ids=ids, now=now)
        trait_view_refresh_after_commit()
        return list(Memory.objects.filter(memory_type=MemoryType.TRAIT, pk__in=ids))


def trait_veto(*, caller: Caller, trait_id: uuid.UUID, reason: str) -> Memory:
    (trait,) = traits_veto(caller=caller, trait_ids=[trait_id], reason=reason)
    return trait


def _founding_evidence(trait_ids: set[uuid.UUID]) -> set[uuid.UUID]:
    """The evidence rows that founded each trait (the memories it was made from, at its first
    confidence), as against those that reinforced it since: its earliest supporting rows
    beyond its reinforcement count. Forgetting one undoes no reinforcement."""
    counts = dict(
        Memory.objects.filter(pk__in=trait_ids).values_list("id", "trait_reinforcement_count")
    )
    supporting = defaultdict(list)
    for row_id, trait_id in (
        TraitEvidence.objects.filter(trait_id__in=trait_ids, evidence_type=EvidenceType.SUPPORTING)
        .order_by("created_at", "id")
        .values_list("id", "trait_id")
    ):
        supporting[trait_id].append(row_id)
    return {
        row_id
        for trait_id, row_ids in supporting.items()
        for row_id in row_ids[: max(0, len(row_ids) - (counts.get(trait_id) or 0))]
    }


def traits_after_forget(*, user_id: str, memory_ids: list[uuid.UUID]) -> ForgottenEffect:
    """Memories of the user were forgotten: the evidence they gave traits (and the evidence of
    traits forgotten themselves) is removed, and each trait that lost some is re-weighed as if
    that evidence had never come — every reinforcement c ← c + (1 − c)·f undone, every
    contradiction c ← c·(1 − f) undone — or dissolved when no supporting evidence is left or
    its confidence falls below the dissolution floor."""
    forgotten = set(memory_ids)
    if not forgotten:
        return ForgottenEffect()
    evidence = TraitEvidence.objects.filter(Q(memory_id__in=forgotten) | Q(trait_id__in=forgotten))
    lost: dict[uuid.UUID, list[tuple[str, str]]] = defaultdict(list)
    rows = list(evidence.values_list("id", "trait_id", "evidence_type", "quality"))
    founding = _founding_evidence({trait_id for _, trait_id, _, _ in rows} - forgotten)
    for row_id, trait_id, kind, quality in rows:
        if trait_id in forgotten:
            continue
        lost.setdefault(trait_id, [])  # re-checked below: it may have no evidence left
        if row_id not in founding:
            lost[trait_id].append((kind, quality))
    evidence.delete()
    rules = lifecycle_rules()
    now = timezone.now()
    effect = ForgottenEffect()
    traits = (
        Memory.objects.current()
        .filter(user_id=user_id, memory_type=MemoryType.TRAIT, pk__in=lost)
        .exclude(trait_stage=TraitStage.DISSOLVED)
    )
    for trait in traits:
        confidence = trait.trait_confidence
        reinforcements = trait.trait_reinforcement_count or 0
        contradictions = trait.trait_contradiction_count or 0
        for kind, quality in lost[trait.id]:
            if kind == EvidenceType.SUPPORTING:
                reinforcements = max(0, reinforcements - 1)
                if confidence is not None:
                    confidence = rules.reinforcement_undone(confidence, quality)
            else:
                contradictions = max(0, contradictions - 1)
                if confidence is not None:
                    confidence = rules.contradiction_undone(confidence)
        # A preference or core trait is supported by its children too (it may have no
        # evidence of its own).
        children = Memory.objects.current().filter(
            memory_type=MemoryType.TRAIT, trait_parent_id=trait.id
        )
        supported = (
            TraitEvidence.objects.filter(
                trait_id=trait.id, evidence_type=EvidenceType.SUPPORTING
            ).exists()
            or children.exclude(trait_stage=TraitStage.DISSOLVED).exists()
        )
        if not supported or (confidence is not None and confidence < rules.dissolve_below):
            changes = {"trait_stage": TraitStage.DISSOLVED}
            effect.dissolved.append(trait.id)
        else:
            stage = trait.trait_stage
            if confidence is not None and stage != TraitStage.TREND:
                stage = rules.stage_for(confidence)
            changes = {"trait_stage": stage, "trait_confidence": confidence}
            effect.reweighed.append(trait.id)
        Memory.objects.filter(memory_type=MemoryType.TRAIT, pk=trait.id).update(
            **changes,
            trait_reinforcement_count=reinforcements,
            trait_contradiction_count=contradictions,
            updated_at=now,
            version=F("version") + 1,
        )
    traits_expire_dissolved(trait_ids=effect.dissolved, now=now)
    if lost or Memory.objects.filter(memory_type=MemoryType.TRAIT, pk__in=forgotten).exists():
        trait_view_refresh_after_commit()  # the decay view holds the traits' text until then
    return effect
