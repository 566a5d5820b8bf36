"""Pattern detection: which new memories support or contradict which traits, which form new
patterns, which traits point the same way, and what to do with a contested trait.

Two implementations of one interface:
- `OfflineDetector` (the default): the configured embedding model's similarities (greedy
  centroid clustering, nearest trait) plus the cue rules of reflection/wording.py for polarity,
  explicit statements, contexts and emotion. Trait wording is the pattern's most central
  memory.
- `LLMDetector` (REFLECTION_DETECTOR=llm): an OpenAI-compatible chat model answers the same
  questions in JSON; it words traits itself.

Both run while a cycle plans, before its write transaction opens.
"""

import json
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import Any, Literal, Protocol

import numpy as np
from django.conf import settings

from core.openai_compat import OpenAICompatibleClient, OpenAICompatibleError, openai_settings
from memories.embeddings import embedding_provider
from memories.models import TraitContext
from reflection import wording
from reflection.rules import lifecycle_rules

EPISODE_SPEAKER = re.compile(r"(?:^|→\s*)(?:User: |用户：)(?P<said>.*)$", re.S)


def said_by_user(content: str) -> str:
    """An episode's user words (without the assistant turn it answers); other text as is."""
    match = EPISODE_SPEAKER.search(content)
    return match.group("said").strip() if match else content


@dataclass
class Observation:
    """A fact or episode a cycle reflects on (`new`), or an earlier one no trait cites yet."""

    id: uuid.UUID
    content: str
    created_at: datetime
    session_id: uuid.UUID | None
    new: bool
    metadata: dict[str, Any] = field(default_factory=dict)
    is_fact: bool = False
    importance: float = 0.5

    @property
    def text(self) -> str:
        return said_by_user(self.content)

    @property
    def polarity(self) -> int:
        return wording.polarity(self.text)

    @property
    def explicit(self) -> bool:
        return wording.explicit(self.text)

    @property
    def context(self) -> str | None:
        return wording.context(self.text)

    @property
    def emotional(self) -> bool:
        return wording.emotional(self.text, self.metadata)


@dataclass(frozen=True)
class TraitView:
    """What detection needs to know of a trait."""

    id: uuid.UUID
    content: str
    subtype: str | None
    stage: str | None
    parent_id: uuid.UUID | None


@dataclass(frozen=True)
class Match:
    memory_id: uuid.UUID
    trait_id: uuid.UUID
    supports: bool


@dataclass(frozen=True)
class Pattern:
    """A new pattern: its memories (oldest first) and how the trait reads."""

    memory_ids: tuple[uuid.UUID, ...]
    content: str


@dataclass(frozen=True)
class Detection:
    matches: list[Match]
    patterns: list[Pattern]


@dataclass(frozen=True)
class Grouping:
    """Traits that point the same way, and the parent that says so (existing: its id)."""

    child_ids: tuple[uuid.UUID, ...]
    content: str
    parent_id: uuid.UUID | None = None


Decision = Literal["revise", "split", "dissolve"]


@dataclass(frozen=True)
class Review:
    decision: Decision
    content: str | None = None  # a revised wording (None: keep it)
    # For a split: per context, whether the trait holds there and how surely.
    contexts: dict[str, dict[str, Any]] | None = None


@dataclass(frozen=True)
class EvidenceSeen:
    memory_id: uuid.UUID
    supports: bool
    text: str
    session_id: uuid.UUID | None


class PatternDetector(Protocol):
    def detect(
        self, *, observations: Sequence[Observation], traits: Sequence[TraitView]
    ) -> Detection: ...

    def group(
        self, *, children: Sequence[TraitView], parents: Sequence[TraitView]
    ) -> list[Grouping]: ...

    def review(self, *, trait: TraitView, evidence: Sequence[EvidenceSeen]) -> Review: ...


# --- Offline -----------------------------------------------------------------------------------


# Passes that move each memory to its nearest centroid after the greedy pass.
REFINE_PASSES = 2


def _unit(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


def split_review(
    evidence: Sequence[EvidenceSeen], *, min_ratio: float
) -> dict[str, dict[str, Any]] | None:
    """Per-context tendencies when contexts explain the contradiction: in every known
    context the evidence mostly agrees (at least `min_ratio`), and the contexts disagree with
    each other. None otherwise."""
    tally: dict[str, list[int]] = {}
    for item in evidence:
        context = wording.context(item.text)
        if context is None:
            continue
        counts = tally.setdefault(context, [0, 0])
        counts[0 if item.supports else 1] += 1
    contexts = {}
    for context, (supporting, contradicting) in tally.items():
        total = supporting + contradicting
        share = max(supporting, contradicting) / total
        if share < min_ratio:
            return None
        contexts[context] = {
            "tendency": "holds" if supporting >= contradicting else "does not hold",
            "confidence": round(share, 3),
            "supporting": supporting,
            "contradicting": contradicting,
        }
    tendencies = {entry["tendency"] for entry in contexts.values()}
    return contexts if len(tendencies) == 2 else None


class OfflineDetector:
    def __init__(self, *, cluster: float, match: float, parent: float) -> None:
        self.cluster_similarity = cluster
        self.match_similarity = match
        self.parent_similarity = parent

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        return _unit(np.asarray(embedding_provider().embed(list(texts)), dtype=np.float32))

    def detect(
        self, *, observations: Sequence[Observation], traits: Sequence[TraitView]
    ) -> Detection:
        # Only behaviors take evidence from memories; parents hear of it through them.
        leaves = [trait for trait in traits if trait.subtype in (None, "behavior")]
        vectors = self.vectors([o.text for o in observations])
        trait_vectors = self.vectors([t.content for t in leaves])
        trait_polarity = [wording.polarity(t.content) for t in leaves]
        matches, unmatched = [], []
        for n, observation in enumerate(observations):
            if observation.new and leaves:
                similarity = trait_vectors @ vectors[n]
                best = int(np.argmax(similarity))
                if similarity[best] >= self.match_similarity:
                    supports = observation.polarity == trait_polarity[best]
                    matches.append(Match(observation.id, leaves[best].id, supports))
                    continue
            unmatched.append(n)
        return Detection(matches, self._patterns(observations, vectors, unmatched))

    def _patterns(
        self, observations: Sequence[Observation], vectors: np.ndarray, indexes: list[int]
    ) -> list[Pattern]:
        """Greedy clustering in time order (each memory joins the nearest centroid of its
        polarity, if near enough, else starts a cluster), then REFINE_PASSES passes that move
        each memory to the nearest centroid of the first pass: the greedy order no longer
        decides which of two similar memories seeds a cluster."""
        order = sorted(indexes, key=lambda i: observations[i].created_at)
        polarity = {n: observations[n].polarity for n in order}
        labels: dict[int, int] = {}
        sums: list[np.ndarray] = []
        centroids: list[np.ndarray] = []
        signs: list[int] = []  # a cluster's polarity: its first member's
        for n in order:
            labels[n] = self._nearest(vectors[n], polarity[n], centroids, signs)
            if labels[n] == len(centroids):
                sums.append(vectors[n].copy())
                centroids.append(vectors[n].copy())
                signs.append(polarity[n])
            else:
                sums[labels[n]] += vectors[n]
                centroids[labels[n]] = sums[labels[n]] / (np.linalg.norm(sums[labels[n]]) or 1)
        for _ in range(REFINE_PASSES):
            totals = [np.zeros_like(total) for total in sums]
            for n, label in labels.items():
                totals[label] += vectors[n]
            fixed = [total / (np.linalg.norm(total) or 1) for total in totals]
            labels = {
                n: self._nearest(vectors[n], polarity[n], fixed, signs, own=labels[n])
                for n in order
            }
        clusters: dict[int, list[int]] = {}
        for n in order:
            clusters.setdefault(labels[n], []).append(n)
        patterns = []
        for members in clusters.values():
            if not any(observations[n].new for n in members):
                continue  # nothing new: seen before, and it was no pattern then
            single = observations[members[0]]
            if len(members) == 1 and not (single.explicit or single.emotional):
                continue  # one passing mention is no pattern yet
            patterns.append(
                Pattern(
                    tuple(observations[n].id for n in members),
                    self._wording([observations[n] for n in members], vectors[members]),
                )
            )
        return patterns

    def _nearest(
        self,
        vector: np.ndarray,
        sign: int,
        centroids: list[np.ndarray],
        signs: list[int],
        own: int | None = None,
    ) -> int:
        """The cluster of the same polarity whose centroid is nearest and near enough; else
        `own` (a refining pass keeps a memory where it was) or a new cluster's label."""
        best, best_similarity = None, self.cluster_similarity
        if centroids:
            similarity = np.stack(centroids) @ vector
            for k in np.argsort(-similarity):
                if similarity[k] < best_similarity:
                    break
                if signs[k] == sign:
                    best = int(k)
                    break
        if best is not None:
            return best
        return own if own is not None else len(centroids)

    @staticmethod
    def _wording(members: list[Observation], vectors: np.ndarray) -> str:
        """The most central member's words: a fact as written, an episode's user words."""
        centrality = (vectors @ vectors.T).sum(axis=1)
        order = sorted(range(len(members)), key=lambda i: (-members[i].is_fact, -centrality[i]))
        central = members[order[0]]
        if central.is_fact:
            return central.content
        return (
            f"反复提到：{central.text}"
            if wording.is_chinese(central.text)
            else (f"Repeatedly: {central.text}")
        )

    def group(
        self, *, children: Sequence[TraitView], parents: Sequence[TraitView]
    ) -> list[Grouping]:
        """Children near an existing parent join it; the rest that are near each other (same
        polarity) form new groups of at least two."""
        if not children:
            return []
        vectors = self.vectors([c.content for c in children])
        polarity = [wording.polarity(c.content) for c in children]
        groupings: list[Grouping] = []
        left = list(range(len(children)))
        if parents:
            parent_vectors = self.vectors([p.content for p in parents])
            joined: dict[int, list[int]] = {}
            for n in left:
                similarity = parent_vectors @ vectors[n]
                best = int(np.argmax(similarity))
                if similarity[best] >= self.parent_similarity and polarity[n] == wording.polarity(
                    parents[best].content
                ):
                    joined.setdefault(best, []).append(n)
            for best, members in joined.items():
                groupings.append(
                    Grouping(
                        tuple(children[n].id for n in members),
                        parents[best].content,
                        parents[best].id,
                    )
                )
            taken = {n for members in joined.values() for n in members}
            left = [n for n in left if n not in taken]
        while left:
            seed, *rest = left
            members = [seed] + [
                n
                for n in rest
                if polarity[n] == polarity[seed]
                and float(vectors[n] @ vectors[seed]) >= self.parent_similarity
            ]
            left = [n for n in left if n not in members]
            if len(members) >= 2:
                groupings.append(
                    Grouping(
                        tuple(children[n].id for n in members),
                        self._parent_wording([children[n].content for n in members]),
                    )
                )
        return groupings

    @staticmethod
    def _parent_wording(contents: list[str]) -> str:
        if all(wording.is_chinese(content) for content in contents):
            return "一贯：" + "；".join(contents)
        return "Consistently: " + "; ".join(contents)

    def review(self, *, trait: TraitView, evidence: Sequence[EvidenceSeen]) -> Review:
        """Split when contexts explain the contradictions, dissolve when they are the
        majority, otherwise revise (keep the wording; the confidence has already dropped)."""
        rules = lifecycle_rules()
        contexts = split_review(evidence, min_ratio=1 - rules.contradiction_review_ratio)
        if contexts is not None:
            return Review("split", contexts=contexts)
        contradicting = sum(1 for item in evidence if not item.supports)
        if contradicting / max(1, len(evidence)) > rules.contradiction_dissolve_ratio:
            return Review("dissolve")
        return Review("revise")


# --- LLM ---------------------------------------------------------------------------------------

# New memories per request, and earlier ones (no trait cites them) sent along as context.
LLM_BATCH = 100
LLM_EARLIER = 50

LLM_DETECT_PROMPT = """You maintain long-term traits (habits, preferences, values) of one user.
Given the user's new memories, earlier memories no trait explains yet, and their current traits,
answer a JSON object:
{"matches": [{"memory_id": "...", "trait_id": "...", "supports": true|false}],
 "patterns": [{"memory_ids": ["...", ...], "statement": "..."}]}
- A match: the memory is evidence for (supports=true) or against (false) an existing trait.
- A pattern: memories (not matched; at least one new, earlier ones may join) that together
  show a habit or preference; the statement describes the user in the third person, in the
  memories' language. A single memory is a pattern only when it states a habit or preference
  outright.
- Use only the ids given. Nothing fits: empty lists."""

LLM_GROUP_PROMPT = """You organise a user's traits into a hierarchy. Given child traits and
existing parent traits, answer a JSON object:
{"groups": [{"child_ids": ["...", ...], "parent_id": "..." or null, "statement": "..."}]}
- A group: children that point the same way. Join an existing parent (parent_id) or propose a
  new parent (parent_id null, at least two children) with a statement that generalises them,
  in their language. Use only the ids given."""

LLM_REVIEW_PROMPT = """A user's trait is contradicted by part of its evidence. Decide:
{"decision": "revise"|"split"|"dissolve", "statement": "..." or null,
 "contexts": {"work"|"personal"|"social"|"learning": {"tendency": "holds"|"does not hold",
 "confidence": 0..1}} or null}
- revise: the trait still holds in a corrected form (statement: the new wording);
- split: it holds in some contexts and not in others (contexts);
- dissolve: it does not hold."""


class LLMDetector:
    def __init__(self, *, base_url: str, api_key: str, model: str, timeout: float) -> None:
        self.model = model
        self.client = OpenAICompatibleClient(base_url=base_url, api_key=api_key, timeout=timeout)

    def _ask(self, prompt: str, payload: dict[str, Any]) -> dict[str, Any]:
        try:
            answer = self.client.chat_json(
                model=self.model,
                messages=[
                    {"role": "system", "content": prompt},
                    {"role": "user", "content": json.dumps(payload, ensure_ascii=False)},
                ],
            )
            parsed = json.loads(answer)
        except (OpenAICompatibleError, ValueError) as error:
            raise DetectionError(f"LLM detector failed: {error}") from error
        if not isinstance(parsed, dict):
            raise DetectionError("LLM detector answered no JSON object")
        return parsed

    def detect(
        self, *, observations: Sequence[Observation], traits: Sequence[TraitView]
    ) -> Detection:
        """One request per LLM_BATCH new memories (a cycle may hold thousands: one prompt
        would overflow the model's context), each with the traits and the most recent earlier
        memories no trait cites (they may join a pattern, as offline)."""
        new = [o for o in observations if o.new]
        earlier = sorted(
            (o for o in observations if not o.new), key=lambda o: o.created_at, reverse=True
        )[:LLM_EARLIER]
        matches: list[Match] = []
        patterns: list[Pattern] = []
        for start in range(0, len(new), LLM_BATCH):
            found = self._detect_batch(new[start : start + LLM_BATCH], earlier, traits)
            matches += found.matches
            patterns += found.patterns
        return Detection(matches, patterns)

    def _detect_batch(
        self,
        new: Sequence[Observation],
        earlier: Sequence[Observation],
        traits: Sequence[TraitView],
    ) -> Detection:
        fresh = {str(o.id): o for o in new}
        usable = fresh | {str(o.id): o for o in earlier}
        known = {str(t.id) for t in traits}
        answer = self._ask(
            LLM_DETECT_PROMPT,
            {
                "memories": [{"id": i, "text": o.text} for i, o in fresh.items()],
                "earlier_memories": [{"id": str(o.id), "text": o.text} for o in earlier],
                "traits": [{"id": str(t.id), "statement": t.content} for t in traits],
            },
        )
        matches, matched = [], set()
        for item in _items(answer, "matches"):
            memory_id, trait_id = str(item.get("memory_id")), str(item.get("trait_id"))
            supports = item.get("supports")
            if (
                memory_id in fresh
                and trait_id in known
                and memory_id not in matched
                and isinstance(supports, bool)
            ):
                matched.add(memory_id)
                matches.append(Match(fresh[memory_id].id, uuid.UUID(trait_id), supports))
        patterns = []
        for item in _items(answer, "patterns"):
            ids = [
                i
                for i in dict.fromkeys(map(str, item.get("memory_ids") or ()))
                if i in usable and i not in matched
            ]
            statement = str(item.get("statement") or "").strip()
            if statement and any(i in fresh for i in ids):
                matched.update(ids)
                ordered = sorted((usable[i] for i in ids), key=lambda o: o.created_at)
                patterns.append(Pattern(tuple(o.id for o in ordered), statement))
        return Detection(matches, patterns)

    def group(
        self, *, children: Sequence[TraitView], parents: Sequence[TraitView]
    ) -> list[Grouping]:
        if not children:
            return []
        child_ids = {str(c.id) for c in children}
        parent_ids = {str(p.id) for p in parents}
        answer = self._ask(
            LLM_GROUP_PROMPT,
            {
                "children": [{"id": str(c.id), "statement": c.content} for c in children],
                "parents": [{"id": str(p.id), "statement": p.content} for p in parents],
            },
        )
        groupings, used = [], set()
        for item in _items(answer, "groups"):
            ids = [i for i in map(str, item.get("child_ids") or ()) if i in child_ids - used]
            parent = item.get("parent_id")
            parent = str(parent) if parent and str(parent) in parent_ids else None
            statement = str(item.get("statement") or "").strip()
            if (parent and ids) or (len(ids) >= 2 and statement):
                used.update(ids)
                groupings.append(
                    Grouping(
                        tuple(uuid.UUID(i) for i in ids),
                        statement,
                        uuid.UUID(parent) if parent else None,
                    )
                )
        return groupings

    def review(self, *, trait: TraitView, evidence: Sequence[EvidenceSeen]) -> Review:
        answer = self._ask(
            LLM_REVIEW_PROMPT,
            {
                "trait": trait.content,
                "evidence": [{"text": e.text, "supports": e.supports} for e in evidence],
            },
        )
        decision = answer.get("decision")
        if decision not in ("revise", "split", "dissolve"):
            raise DetectionError(f"LLM detector gave no decision: {decision!r}")
        contexts = answer.get("contexts") if decision == "split" else None
        if decision == "split" and not (
            isinstance(contexts, dict) and set(contexts) <= set(TraitContext.values)
        ):
            raise DetectionError("LLM detector split a trait without valid contexts")
        statement = str(answer.get("statement") or "").strip() or None
        return Review(
            decision, content=statement if decision == "revise" else None, contexts=contexts
        )


class DetectionError(Exception):
    """The detector could not answer; the cycle fails and changes nothing."""


def _items(answer: dict[str, Any], key: str) -> list[dict[str, Any]]:
    items = answer.get(key) or []
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []


@cache
def detector() -> PatternDetector:
    if settings.REFLECTION_DETECTOR == "llm":
        return LLMDetector(**openai_settings("LLM"))
    return OfflineDetector(
        cluster=settings.REFLECTION_CLUSTER_SIMILARITY,
        match=settings.REFLECTION_MATCH_SIMILARITY,
        parent=settings.REFLECTION_PARENT_SIMILARITY,
    )
