"""What a cycle reflects on: the user's new memories and traits, loaded."""

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import Exists, OuterRef, QuerySet

from memories.models import (
    Memory,
    MemorySource,
    MemoryType,
    TraitStage,
    TraitSubtype,
)
from memories.predicates import latest_q
from reflection import wording
from reflection.detection import (
    EvidenceSeen,
    Observation,
    TraitView,
    said_by_user,
)
from reflection.models import EvidenceType, TraitEvidence
from reflection.rules import lifecycle_rules

ACTOR = "reflection"
# Earlier memories no trait cites are looked at again, with new ones (at most this many,
# from the last trend window).
PRIOR_LIMIT = 500
# behavior → preference → core
CHAIN_LEVELS = 3


class StaleTrait(Exception):
    """A trait changed between planning and writing (optimistic lock)."""


@dataclass
class TraitState:
    """A trait as the plan sees it: loaded (version set) or created by the plan."""

    id: uuid.UUID
    content: str
    subtype: str
    stage: str
    confidence: float | None
    version: int | None = None  # None: created by the plan (a loaded trait has its row's)
    context: str | None = None
    parent_id: uuid.UUID | None = None
    reinforcements: int = 0
    contradictions: int = 0
    last_reinforced: datetime | None = None
    first_observed: datetime | None = None
    window_start: datetime | None = None
    window_end: datetime | None = None
    derived_from: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    evidence: list[EvidenceSeen] = field(default_factory=list)
    contexts: set[str] = field(default_factory=set)
    sessions: set[uuid.UUID] = field(default_factory=set)
    new_evidence: list[tuple[uuid.UUID, str, str]] = field(default_factory=list)
    importance: float = 0.5
    changed: bool = False
    dissolved: bool = False
    reworded: bool = False  # new content: new hash, lexical vector and embedding

    @property
    def created(self) -> bool:
        return self.version is None

    @property
    def open(self) -> bool:
        return not self.dissolved and self.stage != TraitStage.DISSOLVED

    def view(self) -> TraitView:
        return TraitView(self.id, self.content, self.subtype, self.stage, self.parent_id)


@dataclass
class CycleState:
    user_id: str
    scanned_ids: list[uuid.UUID]  # every new memory, whether it can be part of a pattern or not
    session_ids: set[uuid.UUID]  # the sessions they came from
    observations: list[Observation]  # those that can, and unattached earlier ones
    traits: list[TraitState]


def _sessions_of(memory_ids: list[uuid.UUID]) -> dict[uuid.UUID, uuid.UUID]:
    """memory id → the session it came from."""
    return dict(
        MemorySource.objects.filter(memory_id__in=memory_ids)
        .order_by("memory_id", "created_at")
        .values_list("memory_id", "session_id")
    )


def _observations(rows: list[Memory], *, new: bool) -> list[Observation]:
    """The rows a pattern can be made of. Traits are habits, tastes and values, not a
    profile: a fact is one only when it says so ("The user prefers green tea"), never a
    profile slot's value ("The user lives in Austin") nor a plain statement ("My dog is called
    Rex"); an episode is, unless its words state a profile slot ("I moved to Austin")."""
    sessions = _sessions_of([row.id for row in rows])
    observations = []
    for row in rows:
        if row.memory_type == MemoryType.FACT:
            if row.key is not None or not wording.explicit(row.content):
                continue
        elif wording.profile(said_by_user(row.content)):
            continue
        observations.append(
            Observation(
                id=row.id,
                content=row.content,
                created_at=row.created_at,
                session_id=sessions.get(row.id),
                new=new,
                metadata=row.metadata or {},
                is_fact=row.memory_type == MemoryType.FACT,
                importance=row.importance,
            )
        )
    return observations


def unreflected_memories(*, user_id: str) -> QuerySet[Memory]:
    """The user's current facts and episodes no cycle has scanned yet (idx_memories_unreflected)."""
    return Memory.objects.filter(
        latest_q(),
        user_id=user_id,
        memory_type__in=[MemoryType.FACT, MemoryType.EPISODIC],
        reflected_at__isnull=True,
    )


def cycle_state_load(*, user_id: str, now: datetime) -> CycleState:
    """What the cycle reflects on: the user's unreflected facts and episodes (oldest first, at
    most REFLECTION_MAX_MEMORIES), earlier ones within a trend window that no trait cites, and
    every trait not dissolved, with its evidence."""
    rules = lifecycle_rules()
    reflectable = Memory.objects.filter(
        latest_q(), user_id=user_id, memory_type__in=[MemoryType.FACT, MemoryType.EPISODIC]
    )
    new = list(
        unreflected_memories(user_id=user_id).order_by("created_at", "id")[
            : settings.REFLECTION_MAX_MEMORIES
        ]
    )
    cited = TraitEvidence.objects.filter(memory_id=OuterRef("id"))
    priors = list(
        reflectable.filter(
            reflected_at__isnull=False,
            invalid_at__isnull=True,
            created_at__gte=now - rules.trend_window(emotional=False),
        )
        .exclude(Exists(cited))
        .order_by("-created_at")[:PRIOR_LIMIT]
    )
    traits = [
        _trait_state(row)
        for row in Memory.objects.current()
        .filter(user_id=user_id, memory_type=MemoryType.TRAIT)
        .exclude(trait_stage=TraitStage.DISSOLVED)
        .order_by("created_at", "id")
    ]
    _evidence_load(traits)
    return CycleState(
        user_id=user_id,
        scanned_ids=[row.id for row in new],
        session_ids=set(
            MemorySource.objects.filter(memory_id__in=[row.id for row in new]).values_list(
                "session_id", flat=True
            )
        ),
        observations=_observations(new, new=True) + _observations(priors, new=False),
        traits=traits,
    )


def _trait_state(row: Memory) -> TraitState:
    return TraitState(
        id=row.id,
        version=row.version,
        content=row.content,
        subtype=row.trait_subtype or TraitSubtype.BEHAVIOR,
        stage=row.trait_stage or (row.metadata or {}).get("trait_stage") or TraitStage.CANDIDATE,
        confidence=row.trait_confidence,
        context=row.trait_context,
        parent_id=row.trait_parent_id,
        reinforcements=row.trait_reinforcement_count or 0,
        contradictions=row.trait_contradiction_count or 0,
        last_reinforced=row.trait_last_reinforced,
        first_observed=row.trait_first_observed,
        window_start=row.trait_window_start,
        window_end=row.trait_window_end,
        derived_from=row.trait_derived_from,
        metadata=dict(row.metadata or {}),
        importance=row.importance,
    )


def _evidence_load(traits: list[TraitState]) -> None:
    by_id = {trait.id: trait for trait in traits}
    rows = list(
        TraitEvidence.objects.filter(trait_id__in=by_id).values_list(
            "trait_id", "memory_id", "evidence_type"
        )
    )
    memory_ids = [memory_id for _, memory_id, _ in rows]
    texts = dict(Memory.objects.filter(pk__in=memory_ids).values_list("id", "content"))
    sessions = _sessions_of(memory_ids)
    for trait_id, memory_id, evidence_type in rows:
        trait = by_id[trait_id]
        text = said_by_user(texts.get(memory_id, ""))
        supports = evidence_type == EvidenceType.SUPPORTING
        trait.evidence.append(EvidenceSeen(memory_id, supports, text, sessions.get(memory_id)))
        if supports:
            if context := wording.context(text):
                trait.contexts.add(context)
            if memory_id in sessions:
                trait.sessions.add(sessions[memory_id])
