"""Forgetting on request: the content goes, the record stays (docs/privacy.md).

`user_forget` forgets a topic or memories by id for an API client, MCP or staff; ingest calls
`conversation_forget` for what an end user asks in a message. Both plan first
(memories/forgetting/plan.py, which a dry run answers) and then apply the plan in the same
transaction, with every memory write of the user locked, so nothing on the topic is written
meanwhile:

- a memory forgotten whole keeps its row (id, type, times, version chain) with its content,
  metadata, key, hash and vectors erased, `expired_at` and `forgotten_at` set; every client read
  leaves it out (memories.selectors.memories_visible_to, memories.predicates.as_of_sql);
- a memory erased in part keeps what was not about the topic, re-hashed and re-embedded, and
  its metadata loses what names it; a memory filed under it (its key) is forgotten whole;
- a session's metadata loses what names it;
- every history row of both loses its content and metadata; the trigger logs a FORGET event
  naming the request; admin log entries quoting them are redacted as a purge does;
- messages lose the erased sentences ("[forgotten]");
- links of forgotten memories are removed, and so is the evidence they gave traits, which are
  re-weighed or dissolved (the `memories_forgotten` signal; reflection answers it);
- the memory graph forgets what they said (graph_forget): an edge that no memory left states
  is deleted, the others drop the memories that no longer state them, and an entity left with
  no edge and named by no memory left goes too (never the user's own); an entity keeps only
  the names and aliases a memory left still says;
- a ForgetRequest records who asked, when, by which path, and the ids: never the topic.
"""

import uuid
from collections.abc import Mapping
from dataclasses import dataclass

import pgtrigger
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from core.access import Caller, user_access_check
from core.db.actor import audit_actor, forgetting
from core.errors import Invalid, NotFound
from core.validation import text_problem, user_id_problem, validated
from memories.forgetting.plan import (
    Asking,
    ForgetPlan,
    TopicMeaning,
    forget_plan,
    topic_meaning,
)
from memories.forgetting.topics import Topic, topic_read
from memories.graph.models import EntityKind, GraphEdge, GraphNode
from memories.graph.services import value_mentioned
from memories.models import (
    ConversationMessage,
    ConversationSession,
    EmbeddingStatus,
    ForgetRequest,
    ForgetVia,
    HistoryEvent,
    Memory,
    MemoryHistory,
    MemoryLink,
    MemoryType,
)
from memories.sentences import mentions
from memories.services.dedup import with_lexical_vectors
from memories.services.embedding_jobs import embeddings_schedule
from memories.services.rows import content_md5
from memories.services.user_data import admin_log_redact
from memories.services.writes import SCORE_FLAGS_CLEARED, lock_memory_writes
from memories.signals import memories_forgotten

TOPIC_MAX_CHARS = 500
MEMORY_IDS_MAX = 1000


@dataclass(frozen=True)
class ForgetOutcome:
    plan: ForgetPlan
    request: ForgetRequest | None  # None for a dry run
    traits_reweighed: tuple[uuid.UUID, ...] = ()
    traits_dissolved: tuple[uuid.UUID, ...] = ()

    @property
    def dry_run(self) -> bool:
        return self.request is None


def user_forget(
    *,
    caller: Caller,
    user_id: str,
    topic: str | None = None,
    memory_ids: list[uuid.UUID] | None = None,
    dry_run: bool = False,
    via: str = ForgetVia.API,
) -> ForgetOutcome:
    """Forget what `topic` names ("my home address", "everything about Alex"), or the memories
    `memory_ids` (and their older versions), for one end user; `dry_run` answers the plan and
    changes nothing. Forgetting again what is forgotten forgets nothing more."""
    validated(user_id=user_id_problem(user_id, new=False))
    user_access_check(caller=caller, user_id=user_id, write=True)
    if (topic is None) == (memory_ids is None):
        raise Invalid("Give either `topic` or `memory_ids`.", field="topic")
    topics, meanings = [], {}
    if topic is not None:
        validated(topic=text_problem(topic) or _topic_problem(topic))
        topics = [topic_read(topic)]
        meanings = topic_meanings(topics)  # the embedding provider first, no transaction open
    else:
        _memory_ids_check(memory_ids)
    with transaction.atomic():
        # Again inside: the write is noted for the read replicas once this commits, not when
        # the check outside, before the topic's embedding, let it through.
        user_access_check(caller=caller, user_id=user_id, write=True)
        lock_memory_writes({(user_id, memory_type) for memory_type in MemoryType.values})
        if memory_ids is not None:
            _memory_ids_held(user_id, memory_ids)
        plan = forget_plan(
            user_id=user_id, topics=topics, memory_ids=memory_ids or (), meanings=meanings
        )
        if dry_run:
            return ForgetOutcome(plan=plan, request=None)
        return forget_apply(plan=plan, caller=caller, via=via)


def _topic_problem(topic: str) -> str | None:
    if not topic.strip():
        return "Must not be blank."
    if len(topic) > TOPIC_MAX_CHARS:
        return f"Ensure this field has no more than {TOPIC_MAX_CHARS} characters."
    return None


def _memory_ids_check(memory_ids: list[uuid.UUID]) -> None:
    if not memory_ids:
        raise Invalid("Name at least one memory.", field="memory_ids")
    if len(memory_ids) > MEMORY_IDS_MAX:
        raise Invalid(f"At most {MEMORY_IDS_MAX} memories at a time.", field="memory_ids")


def _memory_ids_held(user_id: str, memory_ids: list[uuid.UUID]) -> None:
    """Every id is a memory of the user (one already forgotten counts: forgetting again is no
    error). Another user's memory is NotFound, like one that does not exist."""
    held = set(
        Memory.objects.filter(user_id=user_id, pk__in=memory_ids).values_list("id", flat=True)
    )
    for index, memory_id in enumerate(memory_ids):
        if memory_id not in held:
            raise NotFound(f"Memory '{memory_id}' not found.", field=f"memory_ids[{index}]")


def topic_meanings(topics: list[Topic]) -> dict[str, TopicMeaning]:
    """The embeddings and floors of the topics that are found by meaning too
    (plan.topic_meaning), by `Topic.said`. Outside any transaction: the provider may be a
    network service."""
    return {topic.said: meaning for topic in topics if (meaning := topic_meaning(topic))}


def conversation_forget(
    *,
    caller: Caller,
    message: ConversationMessage,
    asking: Asking,
    topic: Topic,
    meanings: dict[str, TopicMeaning],
) -> ForgetOutcome:
    """Forget what an end user asked to forget in `message` (inside the caller's transaction,
    which holds the user's memory-write locks; `meanings` from topic_meanings, made before)."""
    plan = forget_plan(user_id=message.user_id, topics=[topic], asking=asking, meanings=meanings)
    return forget_apply(plan=plan, caller=caller, via=ForgetVia.CONVERSATION, message_id=message.id)


@transaction.atomic
def forget_apply(
    *, plan: ForgetPlan, caller: Caller, via: str, message_id: uuid.UUID | None = None
) -> ForgetOutcome:
    """Carry the plan out (see the module's docstring) and record the request."""
    whole = [e.memory.id for e in plan.memories.values() if e.whole]
    part = {e.memory.id: e.content_after for e in plan.memories.values() if not e.whole}
    request = ForgetRequest.objects.create(
        user_id=plan.user_id,
        requested_by=caller.name[:100],
        via=via,
        message_id=message_id,
        memory_ids=whole,
        erased_memory_ids=list(part),
        message_ids=list(plan.messages),
        reason=plan.reason or "",
    )
    if plan.reason:
        return ForgetOutcome(plan=plan, request=request)
    now = timezone.now()
    with audit_actor(caller.name), forgetting(str(request.id)):
        Memory.objects.filter(pk__in=whole).update(
            content="",
            content_hash=None,
            metadata={},
            key=None,
            embedding=None,
            lexical_vector=None,
            embedding_status=EmbeddingStatus.READY,  # nothing left to embed
            expired_at=Coalesce(F("expired_at"), Value(now)),
            forgotten_at=now,
            forget_request_id=request.id,
            updated_at=now,
            version=F("version") + 1,
            **SCORE_FLAGS_CLEARED,
        )
        reworded = {
            memory.id: memory
            for memory in [Memory(id=i, content=c) for i, c in part.items()]
            if memory.content != plan.memories[memory.id].memory.content
        }
        with_lexical_vectors(list(reworded.values()))
        for erasure in plan.memories.values():
            if erasure.whole:
                continue
            changes = {}
            if (memory := reworded.get(erasure.memory.id)) is not None:
                changes = {
                    "content": memory.content,
                    "content_hash": content_md5(memory.content),
                    "lexical_vector": memory.lexical_vector,
                    "embedding": None,
                    "embedding_status": EmbeddingStatus.PENDING,
                }
            if erasure.metadata_after is not None:
                changes["metadata"] = erasure.metadata_after
            Memory.objects.filter(pk=erasure.memory.id).update(
                **changes, updated_at=now, version=F("version") + 1
            )
        for session_id, metadata in plan.sessions.items():
            ConversationSession.objects.filter(pk=session_id).update(metadata=metadata)
    touched = [*whole, *part]
    MemoryHistory.objects.filter(memory_id__in=touched).exclude(event=HistoryEvent.FORGET).update(
        old_content=None, new_content=None, old_metadata=None, new_metadata=None
    )
    MemoryLink.objects.filter(Q(source_id__in=whole) | Q(target_id__in=whole)).delete()
    graph_forget(user_id=plan.user_id, whole=whole, part=part)
    ConversationMessage.objects.bulk_update(
        [
            ConversationMessage(id=erasure.message.id, content=erasure.content_after)
            for erasure in plan.messages.values()
        ],
        ["content"],
    )
    admin_log_redact(object_ids=touched, label="(forgotten)")
    reweighed, dissolved = [], []
    with audit_actor(caller.name):
        for _, effect in memories_forgotten.send(
            sender=ForgetRequest, user_id=plan.user_id, memory_ids=whole
        ):
            reweighed += effect.reweighed
            dissolved += effect.dissolved
    ForgetRequest.objects.filter(pk=request.pk).update(
        traits_reweighed=reweighed, traits_dissolved=dissolved
    )
    embeddings_schedule(memory_ids=list(reworded))
    return ForgetOutcome(
        plan=plan,
        request=request,
        traits_reweighed=tuple(reweighed),
        traits_dissolved=tuple(dissolved),
    )


def graph_forget(*, user_id: str, whole: list[uuid.UUID], part: Mapping[uuid.UUID, str]) -> None:
    """The memory graph forgets what the memories forgotten `whole` (and those erased in
    `part`: memory id → what stays of it) said: an edge none of whose memories still states
    its value is deleted (the value said is gone); the others drop the memories that no longer
    state it. An entity those deletions leave with no edge at all, as subject or object, is
    deleted too, unless a memory left is about it; the user's own entity always stays. The
    entities they spoke of lose the names and aliases no memory left says (`_names_forgotten`)."""
    erased = [*whole, *part]
    if not erased:
        return
    forgotten = set(whole)
    gone, touched = [], set()
    spoken_of = {
        entity_id
        for pair in Memory.objects.filter(id__in=erased).values_list(
            "subject_entity_id", "object_entity_id"
        )
        for entity_id in pair
        if entity_id is not None
    }
    for edge in GraphEdge.objects.filter(
        user_id=user_id, memory_ids__overlap=erased
    ).select_related("object_node"):
        spoken_of |= {edge.subject_id, edge.object_node_id} - {None}
        # An unnamed entity is said by its role ("my wife").
        value = edge.value or (edge.object_node.role if edge.object_node_id else "")
        kept = [
            memory_id
            for memory_id in edge.memory_ids
            if memory_id not in forgotten
            and (memory_id not in part or mentions(part[memory_id], value))
        ]
        if not kept:
            gone.append(edge.pk)
            touched |= {edge.subject_id, edge.object_node_id} - {None}
        elif kept != edge.memory_ids:
            edge.memory_ids = kept  # the one column of an edge besides its end that may change
            edge.save(update_fields=["memory_ids"])
    named = Memory.objects.filter(user_id=user_id, forgotten_at__isnull=True).filter(
        Q(subject_entity_id=OuterRef("pk")) | Q(object_entity_id=OuterRef("pk"))
    )
    with pgtrigger.ignore("memories.GraphEdge:graph_edges_no_delete"):
        GraphEdge.objects.filter(pk__in=gone).delete()
        linked = GraphEdge.objects.filter(Q(subject=OuterRef("pk")) | Q(object_node=OuterRef("pk")))
        GraphNode.objects.filter(pk__in=touched).exclude(kind=EntityKind.USER).exclude(
            Exists(linked)
        ).exclude(Exists(named)).delete()
        _names_forgotten(user_id=user_id, node_ids=spoken_of)


def _names_forgotten(*, user_id: str, node_ids: set[uuid.UUID]) -> None:
    """An entity's name or alias that no memory left of the user says is forgotten too ("my
    wife Ana" forgotten: the wife is "the user's wife" again). An entity whose name goes keeps
    an alias still said, else its role; one with neither, or whose role another unnamed entity
    holds already, is deleted with its edges. Runs with the edges' no-delete trigger off."""
    held = Memory.objects.filter(user_id=user_id, forgotten_at__isnull=True)

    def said(name: str) -> bool:
        return held.filter(content__iregex=value_mentioned(name)).exists()

    nodes = GraphNode.objects.filter(user_id=user_id, pk__in=node_ids).exclude(kind=EntityKind.USER)
    for node in nodes:
        aliases = [alias for alias in node.aliases if said(alias)]
        name = node.name if node.name and said(node.name) else ""
        if not name and aliases:
            name, *aliases = aliases
        if (name, aliases) == (node.name, node.aliases):
            continue
        unnamed_of_role = GraphNode.objects.filter(user_id=user_id, name="", role=node.role)
        if name:
            GraphNode.objects.filter(pk=node.pk).update(name=name, aliases=aliases)
        elif node.role and not unnamed_of_role.exclude(kind=EntityKind.USER).exists():
            GraphNode.objects.filter(pk=node.pk).update(name="", aliases=[])
        else:
            Memory.objects.filter(user_id=user_id, subject_entity_id=node.pk).update(
                subject_entity_id=None
            )
            Memory.objects.filter(user_id=user_id, object_entity_id=node.pk).update(
                object_entity_id=None
            )
            node.delete()
