"""The cycle's plan, made in memory with no transaction open."""

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from memories.models import (
    TraitContext,
    TraitDerivedFrom,
    TraitStage,
    TraitSubtype,
)
from reflection import wording
from reflection.cycle.state import CHAIN_LEVELS, CycleState, TraitState
from reflection.detection import (
    EvidenceSeen,
    Observation,
    Pattern,
    Review,
    detector,
)
from reflection.models import EvidenceQuality, EvidenceType
from reflection.rules import LifecycleRules, lifecycle_rules


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
        content=content,
        subtype=subtype,
        stage=stage,
        confidence=confidence,
        last_reinforced=now,
        first_observed=first_observed or now,
        derived_from=derived_from,
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
        matched = traits[match.trait_id]
        past_window = matched.window_end is not None and observation.created_at > matched.window_end
        if matched.stage == TraitStage.TREND and past_window:
            continue  # a trend counts what is said by its window's end; this one stays free
        for trait in _chain(matched, traits):
            if not match.supports:
                contradicting.setdefault(trait.id, []).append(observation)
                continue
            quality = _observe(trait, observation, supports=True)
            trait.reinforcements += 1
            trait.last_reinforced = max(trait.last_reinforced or now, observation.created_at)
            if trait.stage != TraitStage.TREND and trait.confidence is not None:
                _set_confidence(trait, rules.reinforced(trait.confidence, quality), rules)
    # New patterns: enough memories make a behavior, fewer a trend watched over a window.
    for pattern in _same_worded_merged(detection.patterns):
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
        evidence = _evidence_with_children(trait, traits)
        against = sum(1 for e in evidence if not e.supports)
        if against / len(evidence) > rules.contradiction_review_ratio:
            _apply_review(trait, patterns.review(trait=trait.view(), evidence=evidence), now)
    for trait in traits.values():
        contexts = trait.contexts
        if trait.context != TraitContext.CONTEXTUAL and contexts:
            merged = wording.contexts_merged(contexts)
            if merged != trait.context:
                trait.context, trait.changed = merged, True
    return CyclePlan(
        user_id=state.user_id,
        now=now,
        traits=[trait for trait in traits.values() if trait.changed],
        scanned_ids=state.scanned_ids,
        session_ids=state.session_ids,
    )


def _same_worded_merged(patterns: list[Pattern]) -> list[Pattern]:
    """Patterns of one cycle that say the same are one: an LLM detector reads the new memories
    a batch at a time, and each batch may find the pattern anew."""
    merged: dict[str, list[Pattern]] = {}
    for pattern in patterns:
        merged.setdefault(" ".join(pattern.content.casefold().split()), []).append(pattern)
    return [
        Pattern(tuple(dict.fromkeys(i for p in same for i in p.memory_ids)), same[0].content)
        for same in merged.values()
    ]


def _chain(trait: TraitState, traits: dict[uuid.UUID, TraitState]) -> list[TraitState]:
    """The trait and its open ancestors, nearest first (chains have at most three levels)."""
    chain = [trait]
    while len(chain) < CHAIN_LEVELS:
        parent = traits.get(chain[-1].parent_id) if chain[-1].parent_id else None
        if parent is None or not parent.open:
            break
        chain.append(parent)
    return chain


def _evidence_with_children(
    trait: TraitState, traits: dict[uuid.UUID, TraitState]
) -> list[EvidenceSeen]:
    """A trait's evidence and its open children's, each memory once: a preference promoted
    from behaviors has none of its own at first, and is as supported as they are."""
    seen = {(e.memory_id, e.supports): e for e in trait.evidence}
    for child in traits.values():
        if child.parent_id == trait.id and child.open and child is not trait:
            for e in _evidence_with_children(child, traits):
                seen.setdefault((e.memory_id, e.supports), e)
    return list(seen.values())


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
