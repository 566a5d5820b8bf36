"""Reads of traits and reflection cycles: what a client may see of them.

Believed traits come from `mv_trait_decayed` (seed 002 §6.2): confidence decayed as of the
view's last refresh. One trait's page computes its decay live, with the same rules.
"""

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db.models import Case, Exists, IntegerField, OuterRef, QuerySet, Value, When
from django.utils import timezone

from core.access import Caller, user_access_check
from core.errors import NotFound
from core.tokens import HAN, estimated_tokens
from memories.graph.selectors import Attribute, current_attributes
from memories.models import Memory, MemoryType, TraitStage, TraitSubtype
from memories.predicates import current_sql
from memories.recall import load_memory
from memories.recall_statement import RECALLED_FIELDS
from memories.selectors import memories_visible_to, trait_field
from memories.vectors import vector_cursor
from reflection.models import ReflectionCycle, TraitDecayed, TraitEvidence
from reflection.rules import lifecycle_rules

# core → preference → behavior (seed 002 §6.2's order).
SUBTYPE_ORDER = (TraitSubtype.CORE, TraitSubtype.PREFERENCE, TraitSubtype.BEHAVIOR)
RECALLED_STAGES = (TraitStage.EMERGING, TraitStage.ESTABLISHED, TraitStage.CORE)
# Parent chains are at most three levels (behavior → preference → core).
MAX_CHAIN = 3


def decayed_confidence(trait: Memory, *, now: datetime | None = None) -> float | None:
    """The trait's confidence decayed until `now` (default: now). Trends do not decay (their
    window decides); a dissolved trait has none left."""
    confidence = trait_field(trait, "confidence")
    stage = trait_field(trait, "trait_stage")
    if confidence is None or stage == TraitStage.TREND:
        return confidence
    if stage == TraitStage.DISSOLVED or trait.expired_at is not None:
        return 0.0
    return lifecycle_rules().decayed(
        confidence,
        subtype=trait_field(trait, "trait_subtype"),
        reinforcements=trait.trait_reinforcement_count or 0,
        since=trait.trait_last_reinforced or trait.created_at,
        now=now or timezone.now(),
    )


def traits_believed(*, caller: Caller, user_id: str) -> QuerySet[TraitDecayed]:
    """The user's traits recall and prompts use: still current, emerging, established or core,
    decayed confidence above the recall minimum; core, then preference, then behavior, most
    confident first (seed 002 §6.2)."""
    user_access_check(caller=caller, user_id=user_id, write=False)
    order = Case(
        *(When(trait_subtype=subtype, then=Value(n)) for n, subtype in enumerate(SUBTYPE_ORDER)),
        default=Value(len(SUBTYPE_ORDER)),
        output_field=IntegerField(),
    )
    # A trait vetoed or dissolved since the last refresh is gone at once, not at the next one.
    still_current = (
        Memory.objects.current()
        .filter(memory_type=MemoryType.TRAIT, pk=OuterRef("id"))
        .exclude(trait_stage=TraitStage.DISSOLVED)
    )
    return (
        TraitDecayed.objects.filter(
            Exists(still_current),
            user_id=user_id,
            trait_stage__in=RECALLED_STAGES,
            decayed_confidence__gt=lifecycle_rules().recall_min_confidence,
        )
        .annotate(subtype_order=order)
        .order_by("subtype_order", "-decayed_confidence", "id")
        .defer("embedding")  # a kilobyte a trait that no answer shows
    )


def traits_believed_memories(*, caller: Caller, user_id: str) -> list[Memory]:
    """`traits_believed` as memories (for the memory-shaped answers of /recall/), each with
    `decayed_confidence` from the view. One raw statement loaded as recall loads its hits
    (no embedding): every recall asks this, and the ORM's compiling and row building cost
    more than running it; prepared (DATABASE_PREPARED_STATEMENTS), since planning it costs more
    than running it too (docs/benchmarks.md, "Work after the answer")."""
    user_access_check(caller=caller, user_id=user_id, write=False)
    subtype_order = " ".join(f"WHEN %s THEN {n}" for n in range(len(SUBTYPE_ORDER)))
    columns = ", ".join(f'm."{field.column}"' for field in RECALLED_FIELDS)
    with vector_cursor() as cursor:
        cursor.execute(
            f"""
            SELECT {columns}, d.decayed_confidence
            FROM mv_trait_decayed d
            JOIN memories m ON m.memory_type = 'trait' AND m.id = d.id
            WHERE d.user_id = %s AND d.trait_stage = ANY(%s) AND d.decayed_confidence > %s
              AND {current_sql("m")} AND m.trait_stage IS DISTINCT FROM %s
            ORDER BY CASE d.trait_subtype {subtype_order} ELSE {len(SUBTYPE_ORDER)} END,
                     d.decayed_confidence DESC, d.id
            """,
            [
                user_id,
                [stage.value for stage in RECALLED_STAGES],
                lifecycle_rules().recall_min_confidence,
                TraitStage.DISSOLVED.value,
                *(subtype.value for subtype in SUBTYPE_ORDER),
            ],
            prepare=settings.DATABASE_PREPARED_STATEMENTS,
        )
        rows = cursor.fetchall()
    believed = []
    for *values, decayed_confidence in rows:
        memory = load_memory(values)
        memory.decayed_confidence = decayed_confidence
        believed.append(memory)
    return believed


@dataclass(frozen=True)
class EvidenceItem:
    evidence: TraitEvidence
    memory: Memory | None  # None: the memory is gone (the consistency job reports it)


@dataclass(frozen=True)
class TraitDetail:
    trait: Memory
    decayed_confidence: float | None
    evidence: list[EvidenceItem]
    parents: list[Memory]  # nearest first, at most MAX_CHAIN - 1
    children: list[Memory]


def trait_get(*, caller: Caller, trait_id: uuid.UUID | str) -> Memory:
    """The trait, or NotFound (also for one whose end user `caller` may not read)."""
    trait = memories_visible_to(caller).filter(memory_type=MemoryType.TRAIT, pk=trait_id).first()
    if trait is None:
        raise NotFound(f"Trait '{trait_id}' not found.")
    return trait


def trait_detail(*, caller: Caller, trait_id: uuid.UUID | str) -> TraitDetail:
    """The trait with its evidence (and the memories it cites), its parent chain and its
    children."""
    trait = trait_get(caller=caller, trait_id=trait_id)
    evidence = list(TraitEvidence.objects.filter(trait_id=trait.id).order_by("created_at", "id"))
    cited = Memory.objects.filter(
        user_id=trait.user_id, pk__in=[item.memory_id for item in evidence]
    ).in_bulk()
    parents: list[Memory] = []
    parent_id = trait.trait_parent_id
    while parent_id is not None and len(parents) < MAX_CHAIN - 1:
        parent = Memory.objects.filter(
            memory_type=MemoryType.TRAIT, user_id=trait.user_id, pk=parent_id
        ).first()
        if parent is None:
            break
        parents.append(parent)
        parent_id = parent.trait_parent_id
    children = list(
        Memory.objects.filter(
            memory_type=MemoryType.TRAIT, user_id=trait.user_id, trait_parent_id=trait.id
        ).order_by("-trait_confidence", "id")
    )
    return TraitDetail(
        trait=trait,
        decayed_confidence=decayed_confidence(trait),
        evidence=[EvidenceItem(item, cited.get(item.memory_id)) for item in evidence],
        parents=parents,
        children=children,
    )


def reflection_cycles(*, caller: Caller, user_id: str | None = None) -> QuerySet[ReflectionCycle]:
    """Cycles, newest first: of one user, or (staff only) of everyone."""
    cycles = ReflectionCycle.objects.all()
    if user_id is not None:
        user_access_check(caller=caller, user_id=user_id, write=False)
        return cycles.filter(user_id=user_id)
    return cycles.filter(caller.users_q())


def reflection_cycle_get(*, caller: Caller, cycle_id: uuid.UUID | str) -> ReflectionCycle:
    cycle = ReflectionCycle.objects.filter(pk=cycle_id).first()
    if cycle is None or not caller.may_access_user(cycle.user_id):
        raise NotFound(f"Reflection cycle '{cycle_id}' not found.")
    return cycle


# Languages and their headings for the prompt block.
PROMPT_HEADINGS = {
    "en": ("## About this user", "### Traits", "### Key facts"),
    "zh": ("## 关于这位用户", "### 特质", "### 关键事实"),
}
# The heading of what holds now (the user's current attributes, from the memory graph).
PROMPT_ATTRIBUTES_HEADING = {"en": "### What holds now", "zh": "### 当前情况"}
# Facts considered for the block (most important, then newest, first).
PROMPT_FACT_CANDIDATES = 50


def user_language(*, user_id: str) -> str:
    """ "zh" when most of the user's recent facts and episodes are Chinese, else "en"."""
    recent = (
        Memory.objects.current()
        .filter(user_id=user_id, memory_type__in=[MemoryType.FACT, MemoryType.EPISODIC])
        .order_by("-created_at")
        .values_list("content", flat=True)[:50]
    )
    chinese = sum(1 for content in recent if HAN.search(content))
    return "zh" if recent and chinese * 2 > len(recent) else "en"


@dataclass(frozen=True)
class PromptContext:
    markdown: str
    language: str
    tokens: int
    trait_ids: list[uuid.UUID]
    fact_ids: list[uuid.UUID]
    attributes: list[Attribute]


def prompt_context(*, caller: Caller, user_id: str, max_tokens: int) -> PromptContext:
    """A markdown block for an agent's system prompt: the user's core and established traits,
    then what holds now about them and the people around them (the memory graph's current
    attributes, most recently said first), then their most important current facts, as many
    as fit in `max_tokens` (estimated), with headings in the user's language."""
    user_access_check(caller=caller, user_id=user_id, write=False)
    language = user_language(user_id=user_id)
    title, traits_heading, facts_heading = PROMPT_HEADINGS[language]
    traits = [
        (trait.id, f"- {trait.content}")
        for trait in traits_believed(caller=caller, user_id=user_id).filter(
            trait_stage__in=[TraitStage.ESTABLISHED, TraitStage.CORE]
        )
    ]
    facts = [
        (fact_id, f"- {content}")
        for fact_id, content in Memory.objects.current()
        .filter(user_id=user_id, memory_type=MemoryType.FACT)
        .order_by("-importance", "-created_at", "id")
        .values_list("id", "content")[:PROMPT_FACT_CANDIDATES]
    ]
    attributes = [
        (
            attribute,
            f"- {attribute.entity}, {attribute.relation.replace('_', ' ')}: {attribute.value}",
        )
        for attribute in current_attributes(user_id=user_id)
    ]
    lines = [title]
    used: dict[str, list] = {"traits": [], "attributes": [], "facts": []}
    budget = max_tokens - estimated_tokens(title)
    for section, heading, items in (
        ("traits", traits_heading, traits),
        ("attributes", PROMPT_ATTRIBUTES_HEADING[language], attributes),
        ("facts", facts_heading, facts),
    ):
        cost = estimated_tokens(heading) + 1
        fitting = []
        for item_id, line in items:
            if cost + estimated_tokens(line) + 1 > budget:
                break
            cost += estimated_tokens(line) + 1
            fitting.append(line)
            used[section].append(item_id)
        if fitting:
            lines += ["", heading, *fitting]
            budget -= cost
    markdown = "\n".join(lines) if any(used.values()) else ""
    return PromptContext(
        markdown=markdown,
        language=language,
        tokens=estimated_tokens(markdown),
        trait_ids=used["traits"],
        fact_ids=used["facts"],
        attributes=used["attributes"],
    )
