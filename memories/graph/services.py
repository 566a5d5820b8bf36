"""Writes to the memory graph: what a message states, recorded as entities and bi-temporal edges
(docs/graph.md). Runs inside the message's write transaction, under its memory-write locks.

A new value of a single-valued attribute closes the current edge at the time it was said
(seed 002 §5.3: `invalid_at` = the new value's `valid_at`, `expired_at` = when it was
recorded) and the memories that stated the closed value leave current recall: those it came
from, and those of the user that name the closed value and were written while it held (the
episode "Austin is great! How are you settling in?"). Time travel still finds them.
"""

import re
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import F, Q
from django.db.models.functions import Lower
from django.utils import timezone

from memories.forgetting.erasing import words_of
from memories.graph.models import EntityKind, GraphEdge, GraphNode
from memories.models import Memory, MemoryType
from memories.predicates import current_q
from memories.sentences import HAN, latin_bounded
from memories.services.writes import SCORE_FLAGS_CLEARED
from memories.statements import Statement, Subject
from memories.statements.ends import names_value, things_given_up
from memories.statements.places import still_holds
from memories.statements.words import BASE_ROLES, PERSON_ROLES, alternation, kin_of

# A closed value this short ("3", "NY") names too much to find memories by: only the memories it
# came from leave recall.
MENTION_MIN_CHARS = 3


@dataclass
class GraphChange:
    """What recording a message's statements did."""

    entities: dict[Subject, GraphNode] = field(default_factory=dict)  # each found once
    opened: list[GraphEdge] = field(default_factory=list)
    closed: list[GraphEdge] = field(default_factory=list)
    reinforced: list[GraphEdge] = field(default_factory=list)
    stale_memory_ids: set[uuid.UUID] = field(default_factory=set)


GIVEN_NAME = re.compile(r"[A-Z][a-z]+")
# The columns' lengths: a longer "name" or relation read from a message (a 3,000-letter word
# after "I live in") names nothing, and would fail the message's write.
NAME_MAX = GraphNode._meta.get_field("name").max_length
ROLE_MAX = GraphNode._meta.get_field("role").max_length
RELATION_MAX = GraphEdge._meta.get_field("relation").max_length


def _recordable(said: Subject) -> bool:
    return len(said.name) <= NAME_MAX and len(said.role) <= ROLE_MAX


def user_node(*, user_id: str, at: datetime | None = None) -> GraphNode:
    made = {"created_at": at} if at is not None else {}
    node, _ = GraphNode.objects.get_or_create(user_id=user_id, kind=EntityKind.USER, defaults=made)
    return node


def _named_node(*, user_id: str, name: str) -> GraphNode | None:
    """The user's entity of that name (any case) or alias, if the graph holds one."""
    return (
        GraphNode.objects.filter(user_id=user_id)
        .exclude(kind=EntityKind.USER)
        .annotate(lowered=Lower("name"))
        .filter(Q(lowered=name.lower()) | Q(aliases__contains=[name]))
        .first()
    )


def _role_refined(*, said: str, held: str) -> str:
    """The role a node keeps when a message names it by `said`: the one said when it holds none
    or says it more precisely ("my big brother Sam" after "my brother Sam"), else its own."""
    return said if not held or BASE_ROLES.get(said) == held else held


def entity_node(*, user_id: str, subject: Subject, at: datetime | None = None) -> GraphNode:
    """The node for `subject`: the user's own; a named entity by its name or an alias (any
    case), else the unnamed one of its role, which the name now names ("my wife", then "my
    wife Ana"); a role alone finds the unnamed node of that role, else the one named entity of
    that role. Made when none is found, as known from `at` (an imported message's time)."""
    made = {"created_at": at} if at is not None else {}
    if subject.is_user:
        return user_node(user_id=user_id, at=at)
    nodes = GraphNode.objects.filter(user_id=user_id).exclude(kind=EntityKind.USER)
    if subject.name:
        named = _named_node(user_id=user_id, name=subject.name)
        if named is not None:
            role = _role_refined(said=subject.role, held=named.role) if subject.role else ""
            if role and role != named.role:
                GraphNode.objects.filter(pk=named.pk).update(role=role)
            return named
        if subject.role:
            # "my brother Sam" after "my older brother": him, when he is the one unnamed of
            # his kin (and the role said more precisely is kept)
            kin = {subject.role, *kin_of(subject.role), BASE_ROLES.get(subject.role, subject.role)}
            unnamed_of_kin = list(nodes.filter(name="", role__in=kin)[:2])
            if len(unnamed_of_kin) == 1:
                unnamed = unnamed_of_kin[0]
                unnamed.name = subject.name
                unnamed.role = _role_refined(said=subject.role, held=unnamed.role)
                unnamed.save(update_fields=["name", "role"])
                return unnamed
        if subject.kind == EntityKind.PERSON and GIVEN_NAME.fullmatch(subject.name):
            # "Rachel" after "Rachel Lim": the one person of that first name (and of the role
            # said: "my sister Rachel" is not the manager Rachel Lim)
            full = nodes.filter(kind=EntityKind.PERSON, name__istartswith=f"{subject.name} ")
            if subject.role:
                full = full.filter(role=subject.role)
            if len(found := list(full[:2])) == 1:
                return found[0]
        return GraphNode.objects.create(
            user_id=user_id, kind=subject.kind, name=subject.name, role=subject.role, **made
        )
    unnamed = nodes.filter(name="", role=subject.role).first()
    if unnamed is not None:
        return unnamed
    # "my brother" after "my older brother", alone of his role: him
    of_role = list(nodes.filter(role__in=[subject.role, *kin_of(subject.role)])[:2])
    if len(of_role) == 1:
        return of_role[0]
    return GraphNode.objects.create(user_id=user_id, kind=subject.kind, role=subject.role, **made)


def _known_from(node: GraphNode, *, at: datetime) -> GraphNode:
    """An entity is known from the first message that spoke of it: an import of older messages
    dates it back, so that `as_of` finds it beside its edges."""
    if at < node.created_at:
        GraphNode.objects.filter(pk=node.pk).update(created_at=at)
        node.created_at = at
    return node


def _alias_added(node: GraphNode, name: str) -> None:
    """A new name of an entity ("橘子现在改名叫团长了") finds it from now on, as its first does."""
    known = {alias.casefold() for alias in (node.name, *node.aliases)}
    if name and name.casefold() not in known:
        node.aliases = [*node.aliases, name]
        node.save(update_fields=["aliases"])


def _first_name_ended(node: GraphNode, *, new_name: str, at: datetime, actor: str) -> None:
    """A pet or person known by one name and now given another ("橘子现在改名叫团长了"): the
    first name, held by the entity alone, becomes the name edge it was, ended now, so that a
    question about the name answers the new one and `as_of` before the change the first. The
    memories that spoke of the entity by it state it; none of them leaves recall (they may
    say more of the entity that still holds)."""
    first, new = node.name.casefold(), new_name.casefold()
    if not first or first == new or node.created_at >= at:
        return
    if new.startswith(first + " ") or first.startswith(new + " "):
        return  # the same name said in full, or short ("Rachel", "Rachel Lim"): no rename
    if GraphEdge.objects.filter(subject=node, relation="name").exists():
        return  # its names are edges already: the new one closes the current one
    said_by = GraphEdge.objects.filter(object_node=node, created_at__lte=at).values_list(
        "memory_ids", flat=True
    )
    GraphEdge.objects.create(
        user_id=node.user_id,
        subject=node,
        relation="name",
        object_value=node.name,
        single=True,
        valid_at=node.created_at,
        invalid_at=at,
        expired_at=at,
        created_at=node.created_at,
        memory_ids=sorted({memory_id for ids in said_by for memory_id in ids}),
        actor=actor,
    )


def _same_value(edge: GraphEdge, *, node: GraphNode | None, value: str) -> bool:
    if node is not None:
        return edge.object_node_id == node.id
    return edge.object_value.casefold() == value.casefold()


def graph_statements_record(
    *,
    user_id: str,
    statements: Sequence[tuple[Statement, Sequence[uuid.UUID]]],
    at: datetime,
    actor: str,
    subjects: Sequence[Subject] = (),
) -> GraphChange:
    """Record each statement (with the memories that state it) as said at `at`: a value
    already current gains the memories; a new one opens an edge, closing the current value of
    a single-valued attribute; an ended one closes its edge. Then the memories stating closed
    values leave current recall (`invalid_at` = `at`). `subjects`: more entities to find or
    make (a fact's subject, though it states no value); `GraphChange.entities` has them all."""
    change = GraphChange()

    def entity(said: Subject) -> GraphNode | None:
        if said not in change.entities:
            if not _recordable(said):
                return None
            if said.kind == EntityKind.THING:
                # "橘子现在改名叫团长了": the cat the graph holds; a common noun said so ("公司改名
                # 了") is no entity of the user's until one is known by that name
                if (held := _named_node(user_id=user_id, name=said.name)) is None:
                    return None
                change.entities[said] = _known_from(held, at=at)
            else:
                found = entity_node(user_id=user_id, subject=said, at=at)
                change.entities[said] = _known_from(found, at=at)
        return change.entities[said]

    for said in subjects:
        entity(said)
    for statement, memory_ids in statements:
        subject = entity(statement.subject)
        if subject is None or len(statement.attribute) > RELATION_MAX:
            continue
        node = entity(statement.value_entity) if statement.value_entity is not None else None
        value = "" if node is not None else statement.value.strip()
        if node is None and not value and not statement.ended:
            continue  # nothing said: only an end may name no value ("I quit my job")
        current = list(
            GraphEdge.objects.filter(current_q(), subject=subject, relation=statement.attribute)
            .select_related("object_node")
            .order_by("valid_at", "id")
        )
        same = [edge for edge in current if _same_value(edge, node=node, value=value)]
        if statement.ended:
            # "No longer vegetarian": the value named; a single value's end may name none; an
            # entity's end ("Max passed away") ends it under whichever relation it was held.
            ending = same or (current if statement.single and not value and not node else [])
            if node is not None and not ending:
                ending = list(
                    GraphEdge.objects.filter(
                        current_q(), subject=subject, object_node=node
                    ).select_related("object_node")
                )
            # An end said before a value began (an import out of order) is not its end.
            change.closed += _closed([e for e in ending if e.valid_at < at], at=at)
            continue
        if statement.attribute == "name" and subject.kind != EntityKind.USER:
            if len(value) > NAME_MAX:
                continue
            _first_name_ended(subject, new_name=value, at=at, actor=actor)
            _alias_added(subject, value)
        if same:
            for edge in same:
                edge.memory_ids = sorted({*edge.memory_ids, *memory_ids})
                edge.save(update_fields=["memory_ids"])
            change.reinforced += same
            continue
        invalid_at = None
        if statement.single:
            # Resolved by time: values said before `at` end at it; one said after it (an import
            # out of order) ends the new one. The same instant cannot tell them apart: both stay
            # current for the consistency check to report.
            ended = [e for e in current if e.valid_at < at]
            # A value the new one holds ("杭州" in "杭州滨江") is made finer, not replaced: its
            # edge ends, the memories saying it still hold.
            said = node.name if node is not None else value
            refined = [e for e in ended if still_holds(statement.attribute, said, e.value)]
            _closed(refined, at=at)
            change.closed += _closed([e for e in ended if e not in refined], at=at)
            later = [e.valid_at for e in current if e.valid_at > at]
            invalid_at = min(later) if later else None
        change.opened.append(
            GraphEdge.objects.create(
                user_id=user_id,
                subject=subject,
                relation=statement.attribute,
                object_node=node,
                object_value=value,
                single=statement.single,
                valid_at=at,
                invalid_at=invalid_at,
                created_at=at,
                memory_ids=sorted(set(memory_ids)),
                actor=actor,
            )
        )
    stating = {memory_id for _, memory_ids in statements for memory_id in memory_ids}
    change.stale_memory_ids = _stale_memories_closed(
        user_id=user_id, closed=change.closed, at=at, keep=stating
    )
    return change


def graph_values_ended(
    *,
    user_id: str,
    things: Sequence[str],
    given_up: Sequence[str],
    at: datetime,
    keep: set[uuid.UUID],
) -> GraphChange:
    """Close the user's current values that a message said at `at` names as ended ("思域卖了"
    ends car = "本田思域", "The Miata is gone" ends car = "2016 Mazda Miata"), whatever their
    attribute; then the memories stating them leave current recall, as for any closed value.
    `given_up`: the proper words of what it gave up for good (`things_given_up`): of those no
    held value has, the earlier memories naming them leave too. `keep`: the message's own
    memories."""
    change = GraphChange()
    current = GraphEdge.objects.filter(
        current_q(), user_id=user_id, subject__kind=EntityKind.USER, valid_at__lt=at
    ).select_related("object_node")
    ending = [edge for edge in current if any(names_value(thing, edge.value) for thing in things)]
    unheld = [word for word in given_up if not any(names_value(word, e.value) for e in current)]
    change.closed = _closed(ending, at=at)
    change.stale_memory_ids = _stale_memories_closed(
        user_id=user_id, closed=change.closed, at=at, keep=keep
    ) | _stale_memories_naming(user_id=user_id, words=unheld, at=at, keep=keep)
    return change


# Words for a relative ("my dad was in the ICU"): a memory saying one speaks of someone else.
RELATIVE = re.compile(latin_bounded(f"(?:{alternation(PERSON_ROLES)})"), re.I)


def _stale_memories_naming(
    *, user_id: str, words: Sequence[str], at: datetime, keep: set[uuid.UUID]
) -> set[uuid.UUID]:
    """Take out of current recall the user's earlier facts and episodes naming, as written (its
    case: "Yoga is over" opening a sentence names no "yoga"), a thing given up that no rule read
    as a value ("The PureGym membership is cancelled": "I lift weights at the PureGym"). Not
    facts about someone else, nor a memory naming a relative (it may be theirs: "My dad was in
    the ICU"), nor one saying it gave the thing up itself: it says what came after ("I handed in
    my notice at Halden & Price … for Network Rail", before "The Halden phone is switched
    off")."""
    named = Q()
    for word in words:
        named |= Q(content__regex=value_mentioned(word))
    if not named:
        return set()
    users = GraphNode.objects.filter(user_id=user_id, kind=EntityKind.USER).values("id")
    found = (
        Memory.objects.filter(
            current_q(),
            named,
            user_id=user_id,
            created_at__lt=at,
            memory_type__in=[MemoryType.FACT, MemoryType.EPISODIC],
        )
        .filter(Q(subject_entity_id__isnull=True) | Q(subject_entity_id__in=users))
        .values_list("id", "content")
    )
    stale = {
        memory_id
        for memory_id, content in found
        if not RELATIVE.search(content) and not set(things_given_up(content)) & set(words)
    }
    return _invalidated(user_id=user_id, memory_ids=stale - keep, at=at)


def _closed(edges: Iterable[GraphEdge], *, at: datetime) -> list[GraphEdge]:
    closed = []
    for edge in edges:
        edge.invalid_at = max(at, edge.valid_at)
        edge.expired_at = at
        edge.save(update_fields=["invalid_at", "expired_at"])
        closed.append(edge)
    return closed


def value_mentioned(value: str) -> str:
    """A PostgreSQL regular expression finding `value` in a memory's text: bounded by Latin
    letters and digits in Latin script, anywhere in Han; in any case under `~*` (`iregex`), as
    written under `~` (`regex`)."""
    escaped = re.sub(r"([\\.^$|?*+()\[\]{}-])", r"\\\1", value)
    return escaped if HAN.search(value) else latin_bounded(escaped)


def _stale_memories_closed(
    *, user_id: str, closed: list[GraphEdge], at: datetime, keep: set[uuid.UUID]
) -> set[uuid.UUID]:
    """Take out of current recall the memories stating a closed value: the edge's own, and the
    user's memories written while the value held that name it. `keep`: the memories stating
    this message's values, which may name the old one ("I moved from Austin to Denver").
    What still holds of a person or pet whose relation to the user ended stays: after "Ewan and
    I split up", "Ewan studies at Strathclyde"."""
    stale: set[uuid.UUID] = set()
    if not closed:
        return stale
    former = GraphNode.objects.filter(
        id__in={edge.object_node_id for edge in closed if edge.object_node_id},
        kind__in=[EntityKind.PERSON, EntityKind.PET],
    )
    named = Q()
    for edge in closed:
        stale.update(edge.memory_ids)
        value = edge.value
        if len(value) >= MENTION_MIN_CHARS:
            named |= Q(
                content__iregex=value_mentioned(value),
                created_at__gte=edge.valid_at,
                created_at__lt=at,
            )
    candidates = Memory.objects.filter(current_q(), user_id=user_id)
    found = set(candidates.filter(named).values_list("id", flat=True)) if named else set()
    # What the current edges of someone no longer related stand on ("Ewan studies at
    # Strathclyde"), not the relation alone ("The user's boyfriend is Ewan")
    theirs = {
        memory_id
        for memory_ids in GraphEdge.objects.filter(current_q(), subject__in=former).values_list(
            "memory_ids", flat=True
        )
        for memory_id in memory_ids
    }
    return _invalidated(user_id=user_id, memory_ids=(stale | found) - keep - theirs, at=at)


def memories_said_wrong(
    *, user_id: str, wrong: Sequence[tuple[str, str]], at: datetime, keep: set[uuid.UUID]
) -> set[uuid.UUID]:
    """Take out of current recall the user's earlier facts and episodes that state what a
    correction said at `at` calls wrong (`wrong`: each value with the sentence saying so),
    on that sentence's topic: a word in common besides the value ("Nadia's recital is on June
    21, not the 12th.": a memory naming "12" and "Nadia", "recital" or "June")."""
    stating: set[uuid.UUID] = set()
    for value, sentence in wrong:
        topic = words_of(sentence) - words_of(value)
        candidates = Memory.objects.filter(
            current_q(),
            user_id=user_id,
            content__iregex=value_mentioned(value),
            memory_type__in=[MemoryType.FACT, MemoryType.EPISODIC],
            created_at__lt=at,
        ).exclude(id__in=keep)
        stating |= {
            memory.id
            for memory in candidates.only("id", "content")
            if words_of(memory.content) & topic
        }
    return _invalidated(user_id=user_id, memory_ids=stating, at=at)


def _invalidated(*, user_id: str, memory_ids: set[uuid.UUID], at: datetime) -> set[uuid.UUID]:
    # Invalidated, not expired: each stays its memory's latest version, no longer true.
    Memory.objects.filter(current_q(), user_id=user_id, id__in=memory_ids).update(
        invalid_at=at, updated_at=timezone.now(), version=F("version") + 1, **SCORE_FLAGS_CLEARED
    )
    return memory_ids


def memories_subject_set(*, subjects: dict[uuid.UUID, uuid.UUID]) -> None:
    """Name each fact's subject entity (memory id → node id), the seed's `subject_entity_id`."""
    for memory_id, node_id in subjects.items():
        Memory.objects.filter(pk=memory_id).update(subject_entity_id=node_id)
