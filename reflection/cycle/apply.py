"""The cycle's plan written, in the caller's transaction."""

from typing import Any

from django.db.models import F

from core.db.actor import audit_actor
from memories.models import (
    ConversationSession,
    EmbeddingStatus,
    Memory,
    MemoryType,
    TraitStage,
)
from memories.predicates import current_q, latest_q
from memories.services import embeddings_schedule, lock_memory_writes
from memories.services.rows import memory_content_columns, memory_rows_insert
from reflection.cycle.plan import CyclePlan
from reflection.cycle.state import ACTOR, StaleTrait, TraitState
from reflection.models import TraitEvidence
from reflection.services.maintenance import (
    traits_dissolve_weak,
    traits_expire_dissolved,
    trends_expire,
)


def _trait_columns(trait: TraitState) -> dict[str, Any]:
    return {
        "content": trait.content,
        "trait_subtype": trait.subtype,
        "trait_stage": TraitStage.DISSOLVED if trait.dissolved else trait.stage,
        "trait_confidence": trait.confidence,
        "trait_context": trait.context,
        "trait_parent_id": trait.parent_id,
        "trait_reinforcement_count": trait.reinforcements,
        "trait_contradiction_count": trait.contradictions,
        "trait_last_reinforced": trait.last_reinforced,
        "trait_first_observed": trait.first_observed,
        "trait_window_start": trait.window_start,
        "trait_window_end": trait.window_end,
        "trait_derived_from": trait.derived_from,
        "metadata": trait.metadata,
    }


def _evidence_still_held(plan: CyclePlan) -> None:
    """Under the user's memory-write locks (held to the end of the caller's transaction): the
    memories the plan cites as evidence are still there as the planner read them (the latest
    version, not forgotten), else StaleTrait (plan again). A forget or an edit committed while
    the cycle planned would otherwise come back as a trait citing what is gone."""
    lock_memory_writes({(plan.user_id, kind) for kind in MemoryType.values})
    cited = {memory_id for trait in plan.traits for memory_id, _, _ in trait.new_evidence}
    held = Memory.objects.filter(latest_q(), forgotten_at__isnull=True, pk__in=cited)
    gone = cited - set(held.values_list("id", flat=True))
    if gone:
        raise StaleTrait(f"{len(gone)} evidence memories changed since the cycle read them")


def cycle_apply(plan: CyclePlan) -> None:
    """Write the plan (inside the caller's transaction), then expire the user's ended trend
    windows, dissolve what decayed away, and mark the scanned memories and their sessions."""
    now = plan.now
    with audit_actor(ACTOR):
        _evidence_still_held(plan)
        memory_rows_insert(
            [
                Memory(
                    id=trait.id,
                    user_id=plan.user_id,
                    memory_type=MemoryType.TRAIT,
                    importance=trait.importance,
                    valid_at=now,
                    created_at=now,
                    embedding_status=EmbeddingStatus.PENDING,
                    **_trait_columns(trait),
                )
                for trait in plan.traits
                if trait.created and not trait.dissolved
            ]
        )
        # New words for a trait change its row in place: its evidence, children and the decay
        # view know it by id. Like any new content, it is embedded again.
        new_wording = memory_content_columns(
            {trait.id: trait.content for trait in plan.traits if trait.reworded}
        )
        for trait in plan.traits:
            if trait.created:
                continue
            columns = _trait_columns(trait) | new_wording.get(trait.id, {})
            updated = (
                Memory.objects.filter(
                    memory_type=MemoryType.TRAIT,
                    pk=trait.id,
                    version=trait.version,
                )
                .filter(current_q())
                .update(**columns, updated_at=now, version=F("version") + 1)
            )
            if not updated:
                raise StaleTrait(f"trait {trait.id} changed since the cycle read it")
        # Dissolved, then expired (seed 002 §5.2), each logged: see traits_expire_dissolved.
        traits_expire_dissolved(
            trait_ids=[t.id for t in plan.traits if t.dissolved and not t.created], now=now
        )
        TraitEvidence.objects.bulk_create(
            [
                TraitEvidence(
                    trait_id=trait.id, memory_id=memory_id, evidence_type=kind, quality=quality
                )
                for trait in plan.traits
                if not (trait.created and trait.dissolved)
                for memory_id, kind, quality in trait.new_evidence
            ]
        )
        expiry = trends_expire(now=now, user_id=plan.user_id)
        plan.trends_promoted, plan.traits_expired = expiry.promoted, expiry.dissolved
        plan.traits_decayed_away = traits_dissolve_weak(now=now, user_id=plan.user_id)
        Memory.objects.filter(
            memory_type__in=[MemoryType.FACT, MemoryType.EPISODIC], pk__in=plan.scanned_ids
        ).update(reflected_at=now)
        ConversationSession.objects.filter(pk__in=plan.session_ids).update(last_reflected_at=now)
    embeddings_schedule(memory_ids=list(new_wording))
