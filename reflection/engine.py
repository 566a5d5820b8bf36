"""One reflection cycle for one user: load, plan, apply.

The plan is made in memory, with no transaction open (the detector may embed or call an LLM),
in the design's order: scan new memories → trends → behaviors → preferences → cores →
contradictions. `cycle_apply` then writes it in the caller's transaction, together with the
steps that are plain SQL over the user's traits (trend windows that ended, decay) and the scan
marks. The lifecycle's numbers are reflection/rules.py's.
"""

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Exists, F, OuterRef, QuerySet

from core.db.actor import audit_actor
from memories.meaning import current_q, latest_q
from memories.models import (
    ConversationSession,
    EmbeddingStatus,
    Memory,
    MemorySource,
    MemoryType,
    TraitContext,
    TraitDerivedFrom,
    TraitStage,
    TraitSubtype,
)
from memories.services import embeddings_schedule
from memories.services.writes import memory_content_columns, memory_rows_insert
from reflection import cues
from reflection.detection import (
    EvidenceSeen,
    Observation,
    Review,
    TraitView,
    detector,
    said_by_user,
)
from reflection.models import EvidenceQuality, EvidenceType, TraitEvidence
from reflection.rules import LifecycleRules, lifecycle_rules
from reflection.services.maintenance import traits_dissolve_weak, trends_expire

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
    version: int | None
    content: str
    subtype: str
    stage: str
    confidence: float | None
    context: str | None
    parent_id: uuid.UUID | None
    reinforcements: int
    contradictions: int
    last_reinforced: datetime | None
    first_observed: datetime | None
    window_start: datetime | None
    window_end: datetime | None
    derived_from: str | None
    metadata: dict[str, Any]
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


@dataclass
class CyclePlan:
    user_id: str
    now: datetime
    traits: list[TraitState]
    scanned_ids: list[uuid.UUID]
    session_ids: set[uuid.UUID]
    # Filled in by cycle_apply: trends at their window's end, traits decayed away.
    trends_promoted: int = 0
    traits_expired: int = 0
    traits_decayed_away: int = 0

    @property
    def memories_scanned(self) -> int:
        return len(self.scanned_ids)

    @property
    def traits_created(self) -> int:
        return sum(1 for t in self.traits if t.created and not t.dissolved)

    @property
    def traits_updated(self) -> int:
        changed = sum(1 for t in self.traits if not t.created and t.changed and not t.dissolved)
        return changed + self.trends_promoted

    @property
    def traits_dissolved(self) -> int:
        planned = sum(1 for t in self.traits if t.dissolved and not t.created)
        return planned + self.traits_expired + self.traits_decayed_away

    @property
    def changes_traits(self) -> bool:
        return any(t.changed for t in self.traits) or bool(
            self.trends_promoted or self.traits_expired or self.traits_decayed_away
        )


# --- Load --------------------------------------------------------------------------------------


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
            if row.key is not None or not cues.explicit(row.content):
                continue
        elif cues.profile(said_by_user(row.content)):
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
            if context := cues.context(text):
                trait.contexts.add(context)
            if memory_id in sessions:
                trait.sessions.add(sessions[memory_id])


# --- Plan --------------------------------------------------------------------------------------


def evidence_quality(
    observation: Observation, *, contexts: set[str], sessions: set[uuid.UUID]
) -> str:
    """A (the trait holds in another context too), B (an explicit statement), C (another
    conversation than the evidence so far), else D (same conversation, or implicit)."""
    if observation.context and contexts and observation.context not in contexts:
        return EvidenceQuality.A
    if observation.explicit:
        return EvidenceQuality.B
    if observation.session_id and sessions and observation.session_id not in sessions:
        return EvidenceQuality.C
    return EvidenceQuality.D


def _observe(trait: TraitState, observation: Observation, *, supports: bool) -> str:
    """Record a piece of evidence on the trait (its quality against what came before)."""
    quality = evidence_quality(observation, contexts=trait.contexts, sessions=trait.sessions)
    kind = EvidenceType.SUPPORTING if supports else EvidenceType.CONTRADICTING
    trait.new_evidence.append((observation.id, kind, quality))
    trait.evidence.append(
        EvidenceSeen(observation.id, supports, observation.text, observation.session_id)
    )
    if supports:
        if observation.context:
            trait.contexts.add(observation.context)
        if observation.session_id:
            trait.sessions.add(observation.session_id)
    trait.changed = True
    return quality


def _set_confidence(trait: TraitState, confidence: float, rules: LifecycleRules) -> None:
    trait.confidence = confidence
    if trait.stage != TraitStage.TREND:
        trait.stage = rules.stage_for(confidence)


def _new_trait(
    *,
    content: str,
    subtype: str,
    stage: str,
    confidence: float | None,
    now: datetime,
    derived_from: str = TraitDerivedFrom.REFLECTION,
    first_observed: datetime | None = None,
) -> TraitState:
    return TraitState(
        id=uuid.uuid4(),
        version=None,
        content=content,
        subtype=subtype,
        stage=stage,
        confidence=confidence,
        context=None,
        parent_id=None,
        reinforcements=0,
        contradictions=0,
        last_reinforced=now,
        first_observed=first_observed or now,
        window_start=None,
        window_end=None,
        derived_from=derived_from,
        metadata={},
        changed=True,
    )


def cycle_plan(state: CycleState, *, now: datetime) -> CyclePlan:
    rules = lifecycle_rules()
    patterns = detector()
    traits = {trait.id: trait for trait in state.traits}
    observations = {o.id: o for o in state.observations}
    detection = patterns.detect(
        observations=state.observations,
        traits=[t.view() for t in state.traits if t.open],
    )
    # Evidence on existing traits: trends count reinforcements, the others change confidence.
    # Evidence for a behavior is evidence for its preference and core too (its chain).
    contradicting: dict[uuid.UUID, list[Observation]] = {}
    for match in sorted(detection.matches, key=lambda m: observations[m.memory_id].created_at):
        observation = observations[match.memory_id]
        for trait in _chain(traits[match.trait_id], traits):
            if not match.supports:
                contradicting.setdefault(trait.id, []).append(observation)
                continue
            quality = _observe(trait, observation, supports=True)
            trait.reinforcements += 1
            trait.last_reinforced = max(trait.last_reinforced or now, observation.created_at)
            if trait.stage != TraitStage.TREND and trait.confidence is not None:
                _set_confidence(trait, rules.reinforced(trait.confidence, quality), rules)
    # New patterns: enough memories make a behavior, fewer a trend watched over a window.
    for pattern in detection.patterns:
        members = [observations[i] for i in pattern.memory_ids]
        first = min(o.created_at for o in members)
        if len(members) >= rules.behavior_min_memories:
            trait = _new_trait(
                content=pattern.content,
                subtype=TraitSubtype.BEHAVIOR,
                stage=rules.stage_for(rules.behavior_initial_confidence),
                confidence=rules.behavior_initial_confidence,
                now=now,
                first_observed=first,
            )
        else:
            last = max(o.created_at for o in members)
            emotional = any(o.emotional for o in members)
            window_end = first + rules.trend_window(emotional=emotional)
            if last - first >= timedelta(days=rules.trend_max_span_days) or window_end <= now:
                continue  # too spread out for a trend, or its window is already over
            trait = _new_trait(
                content=pattern.content,
                subtype=TraitSubtype.BEHAVIOR,
                stage=TraitStage.TREND,
                confidence=None,
                now=now,
                first_observed=first,
            )
            trait.window_start, trait.window_end = first, window_end
            trait.metadata["emotional"] = emotional
        for observation in sorted(members, key=lambda o: o.created_at):
            _observe(trait, observation, supports=True)
        trait.last_reinforced = max(o.created_at for o in members)
        trait.importance = sum(o.importance for o in members) / len(members)
        traits[trait.id] = trait
    # Promotion: behaviors → preferences → cores.
    for child_subtype, parent_subtype, floor in (
        (TraitSubtype.BEHAVIOR, TraitSubtype.PREFERENCE, rules.preference_min_child_confidence),
        (TraitSubtype.PREFERENCE, TraitSubtype.CORE, rules.core_min_child_confidence),
    ):
        _promote(traits, child_subtype, parent_subtype, floor, rules, now)
    # Contradictions, then the dedicated review of traits contested beyond the ratio.
    for trait_id, pieces in contradicting.items():
        trait = traits[trait_id]
        strong = any(o.explicit for o in pieces)
        for observation in pieces:
            _observe(trait, observation, supports=False)
        trait.contradictions += len(pieces)
        if trait.stage != TraitStage.TREND and trait.confidence is not None:
            confidence = rules.contradicted(trait.confidence, len(pieces), strong=strong)
            _set_confidence(trait, confidence, rules)
        against = sum(1 for e in trait.evidence if not e.supports)
        if against / len(trait.evidence) > rules.contradiction_review_ratio:
            _apply_review(trait, patterns.review(trait=trait.view(), evidence=trait.evidence), now)
    for trait in traits.values():
        contexts = trait.contexts
        if trait.context != TraitContext.CONTEXTUAL and contexts:
            merged = cues.contexts_merged(contexts)
            if merged != trait.context:
                trait.context, trait.changed = merged, True
    return CyclePlan(
        user_id=state.user_id,
        now=now,
        traits=[trait for trait in traits.values() if trait.changed],
        scanned_ids=state.scanned_ids,
        session_ids=state.session_ids,
    )


def _chain(trait: TraitState, traits: dict[uuid.UUID, TraitState]) -> list[TraitState]:
    """The trait and its open ancestors, nearest first (chains have at most three levels)."""
    chain = [trait]
    while len(chain) < CHAIN_LEVELS:
        parent = traits.get(chain[-1].parent_id) if chain[-1].parent_id else None
        if parent is None or not parent.open:
            break
        chain.append(parent)
    return chain


def _has_parent(trait: TraitState, traits: dict[uuid.UUID, TraitState]) -> bool:
    """A parent that is gone (dissolved, vetoed) counts as none: the child may join another."""
    parent = traits.get(trait.parent_id) if trait.parent_id else None
    return parent is not None and parent.open


def _promote(
    traits: dict[uuid.UUID, TraitState],
    child_subtype: str,
    parent_subtype: str,
    floor: float,
    rules: LifecycleRules,
    now: datetime,
) -> None:
    """Children (no parent yet, confident enough) join a parent that says the same, or at
    least `promotion_min_children` of them make a new one, as confident as the least of them."""
    children = [
        t
        for t in traits.values()
        if t.open
        and t.subtype == child_subtype
        and t.stage != TraitStage.TREND
        and not _has_parent(t, traits)
        and (t.confidence or 0) >= floor
    ]
    parents = [t for t in traits.values() if t.open and t.subtype == parent_subtype]
    groupings = detector().group(
        children=[c.view() for c in children], parents=[p.view() for p in parents]
    )
    for grouping in groupings:
        members = [traits[i] for i in grouping.child_ids]
        if grouping.parent_id is not None:
            parent = traits[grouping.parent_id]
        elif len(members) >= rules.promotion_min_children:
            confidence = min(m.confidence or 0 for m in members)
            parent = _new_trait(
                content=grouping.content,
                subtype=parent_subtype,
                stage=rules.stage_for(confidence),
                confidence=confidence,
                now=now,
                first_observed=min(m.first_observed or now for m in members),
            )
            traits[parent.id] = parent
        else:
            continue
        # The parent is written too, so the optimistic lock also covers it (a parent vetoed
        # meanwhile makes the cycle plan again rather than attach children to it).
        parent.changed = True
        for member in members:
            member.parent_id, member.changed = parent.id, True
            parent.contexts |= member.contexts
            parent.sessions |= member.sessions


def _apply_review(trait: TraitState, review: Review, now: datetime) -> None:
    trait.metadata["review"] = {"decision": review.decision, "at": now.isoformat()}
    if review.decision == "dissolve":
        trait.dissolved = True
        trait.metadata["dissolved"] = {
            "reason": "contradicted by its evidence",
            "at": now.isoformat(),
        }
    elif review.decision == "split":
        trait.context = TraitContext.CONTEXTUAL
        trait.derived_from = TraitDerivedFrom.CONTRADICTION_SPLIT
        trait.metadata["contexts"] = review.contexts or {}
    elif review.content and review.content != trait.content:
        trait.content, trait.reworded = review.content, True


# --- Apply -------------------------------------------------------------------------------------


def _trait_columns(trait: TraitState, now: datetime) -> dict[str, Any]:
    columns = {
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
    if trait.dissolved:
        columns["invalid_at"] = now
    return columns


def cycle_apply(plan: CyclePlan) -> None:
    """Write the plan (inside the caller's transaction), then expire the user's ended trend
    windows, dissolve what decayed away, and mark the scanned memories and their sessions."""
    now = plan.now
    with audit_actor(ACTOR):
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
                    **_trait_columns(trait, now),
                )
                for trait in plan.traits
                if trait.created and not trait.dissolved
            ]
        )
        # New words for a trait change its row in place: its evidence, children and the decay
        # view know it by id. Like any new content, it is embedded again.
        wording = memory_content_columns(
            {trait.id: trait.content for trait in plan.traits if trait.reworded}
        )
        for trait in plan.traits:
            if trait.created:
                continue
            columns = _trait_columns(trait, now) | wording.get(trait.id, {})
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
    embeddings_schedule(memory_ids=list(wording))
