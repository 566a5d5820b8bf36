"""Reflection's part in what memories asks of it (memories.hooks) and tells it
(memories.signals), connected in ReflectionConfig.ready: memories never imports reflection."""

import uuid
from typing import Any

from django.db.models import Q

from core.access import Caller
from memories.models import Memory
from memories.signals import ForgottenEffect
from reflection.models import ConsistencyIssue, ReflectionCycle, ReflectionTrigger, TraitEvidence
from reflection.rules import decayed_sql, lifecycle_rules
from reflection.selectors import decayed_confidence, traits_believed_memories
from reflection.services.cycles import reflection_cycle_request
from reflection.services.maintenance import (
    trait_view_create,
    trait_view_drop,
    trait_view_refresh,
    trait_view_refresh_after_commit,
)
from reflection.services.traits import traits_after_forget


class DecayedTraitBelief:
    """memories.hooks.TraitBelief by the lifecycle rules (TRAIT_RULES)."""

    def decayed(self, trait: Memory) -> float | None:
        return decayed_confidence(trait)

    def decayed_sql(self, alias: str) -> str:
        return decayed_sql(alias)

    def recall_params(self) -> dict[str, Any]:
        rules = lifecycle_rules()
        return {**rules.decay_params(), "min_trait_confidence": rules.recall_min_confidence}

    def believed(self, *, caller: Caller, user_id: str) -> list[Memory]:
        return traits_believed_memories(caller=caller, user_id=user_id)


class TraitViewEmbedding:
    """memories.hooks.EmbeddingColumnDependent: the decay view carries the traits' embeddings
    (migration 0007)."""

    def drop(self) -> None:
        trait_view_drop()

    def create(self) -> None:
        trait_view_create()

    def refresh(self) -> None:
        trait_view_refresh()


def traits_after_forgotten(
    *, user_id: str, memory_ids: list[uuid.UUID], **_: Any
) -> ForgottenEffect:
    return traits_after_forget(user_id=user_id, memory_ids=memory_ids)


def cycle_after_session(*, caller: Caller, user_id: str, **_: Any) -> None:
    reflection_cycle_request(
        caller=caller, user_id=user_id, trigger_type=ReflectionTrigger.SESSION_END
    )


def user_reflection_export(*, user_id: str, memory_ids: list[uuid.UUID], **_: Any) -> dict:
    return {
        "evidence": list(
            TraitEvidence.objects.filter(
                Q(trait_id__in=memory_ids) | Q(memory_id__in=memory_ids)
            ).order_by("created_at")
        ),
        "cycles": list(ReflectionCycle.objects.filter(user_id=user_id).order_by("started_at")),
        "consistency_issues": list(
            ConsistencyIssue.objects.filter(user_id=user_id).order_by("first_seen_at", "id")
        ),
    }


def user_reflection_purge(*, user_id: str, memory_ids: list[uuid.UUID], **_: Any) -> dict:
    counts = {
        "trait_evidence": TraitEvidence.objects.filter(trait_id__in=memory_ids).delete()[0]
        + TraitEvidence.objects.filter(memory_id__in=memory_ids).delete()[0],
        "reflection_cycles": ReflectionCycle.objects.filter(user_id=user_id).delete()[0],
        "consistency_issues": ConsistencyIssue.objects.filter(user_id=user_id).delete()[0],
    }
    # The decay view holds a copy of the user's traits until its next refresh: now, not in
    # half an hour (readers already skip traits gone from `memories`).
    trait_view_refresh_after_commit()
    return counts
