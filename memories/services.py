"""Writes to memories. Typed, keyword-only, one transaction each; side effects on commit.

The operation model of seed 002 §5.4: a write is a NOOP when the user already has a current
memory of that type with the same content hash, an UPDATE (supersede) when a current one is
more similar than DEDUP_SIMILARITY, otherwise an ADD. Writes for one user and memory type are
serialised by a transaction-scoped advisory lock, so concurrent identical writes make one row.
"""

import hashlib
import logging
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

import numpy as np
import pgtrigger
import psycopg
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import F
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from pgvector import HalfVector

from memories.embeddings import EmbeddingError, embedding_provider
from memories.models import (
    LEGACY_MEMORY_TYPES,
    ConversationMessage,
    ConversationSession,
    EmbeddingStatus,
    Memory,
    MemoryHistory,
    MemorySource,
    MemoryType,
    TraitContext,
    TraitDerivedFrom,
    TraitStage,
    TraitSubtype,
)
from memories.vectors import (
    copy_memories,
    halfvecs,
    iterative_hnsw_scan,
    normalised,
    vector_cursor,
)
from neuromem_site.api.envelope import Conflict
from neuromem_site.db.actor import set_actor
from neuromem_site.validation import (
    embedding_problem,
    float4,
    json_problem,
    text_problem,
    user_id_problem,
)
from reflection.models import ReflectionCycle, TraitEvidence

log = logging.getLogger("neuromem.embeddings")

TREND_WINDOW = timedelta(days=30)
EMBED_TASK_SIZE = 100


class Operation(StrEnum):
    ADD = "ADD"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    NOOP = "NOOP"


@dataclass(frozen=True)
class MemoryInput:
    user_id: str
    content: str
    memory_type: str
    metadata: dict[str, Any] = field(default_factory=dict)
    importance: float | None = None
    valid_at: datetime | None = None
    key: str | None = None
    embedding: list[float] | None = None
    session_id: uuid.UUID | None = None
    conversation_id: uuid.UUID | None = None
    source_episode_ids: list[uuid.UUID] | None = None


@dataclass(frozen=True)
class WriteResult:
    operation: Operation
    memory: Memory
    superseded: Memory | None = None


def content_md5(content: str) -> str:
    return hashlib.md5(content.encode("utf-8")).hexdigest()


# --- Trait fields: metadata key → (column, parser) -----------------------------------------


def _choice(choices: type) -> Any:
    def parse(value: Any) -> str:
        if value not in choices.values:
            raise ValueError(f"must be one of {', '.join(choices.values)}")
        return value

    return parse


def _number(kind: type) -> Any:
    def parse(value: Any) -> int | float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError("must be a number")
        if kind is int:
            if not -(2**31) <= value < 2**31:
                raise ValueError("is out of range")
            return int(value)
        return float4(value)  # a `real` column

    return parse


def _timestamp(value: Any) -> datetime:
    parsed = parse_datetime(value) if isinstance(value, str) else None
    if parsed is None:
        raise ValueError("must be an ISO 8601 timestamp")
    return parsed if parsed.tzinfo else timezone.make_aware(parsed)


TRAIT_METADATA = {
    "trait_subtype": ("trait_subtype", _choice(TraitSubtype)),
    "trait_stage": ("trait_stage", _choice(TraitStage)),
    "confidence": ("trait_confidence", _number(float)),
    "context": ("trait_context", _choice(TraitContext)),
    "parent_id": ("trait_parent_id", lambda value: uuid.UUID(str(value))),
    "reinforcement_count": ("trait_reinforcement_count", _number(int)),
    "contradiction_count": ("trait_contradiction_count", _number(int)),
    "last_reinforced": ("trait_last_reinforced", _timestamp),
    "first_observed": ("trait_first_observed", _timestamp),
    "window_start": ("trait_window_start", _timestamp),
    "window_end": ("trait_window_end", _timestamp),
    "derived_from": ("trait_derived_from", _choice(TraitDerivedFrom)),
}
TRAIT_COLUMNS = [column for column, _ in TRAIT_METADATA.values()]


def trait_fields(*, memory_type: str, metadata: dict[str, Any]) -> dict[str, Any]:
    """The trait columns for a memory: from its metadata for traits (which keeps the keys, for
    readers of V1 metadata), all NULL for every other type."""
    fields: dict[str, Any] = dict.fromkeys(TRAIT_COLUMNS)
    if memory_type != MemoryType.TRAIT:
        return fields
    fields["trait_reinforcement_count"] = fields["trait_contradiction_count"] = 0
    for key, (column, parse) in TRAIT_METADATA.items():
        if metadata.get(key) is not None:
            try:
                fields[column] = parse(metadata[key])
            except (TypeError, ValueError) as error:
                raise ValidationError({f"metadata.{key}": [str(error)]}) from None
    return fields


def normalised_type(memory_type: str, metadata: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Legacy types: general → fact, insight → trait at stage trend (a 30-day window)."""
    mapped = LEGACY_MEMORY_TYPES.get(memory_type, memory_type)
    if mapped not in MemoryType.values:
        raise ValidationError({"memory_type": [f"Unknown memory type '{memory_type}'."]})
    if memory_type == "insight":
        now = timezone.now()
        metadata = {
            "trait_stage": TraitStage.TREND,
            "window_start": now.isoformat(),
            "window_end": (now + TREND_WINDOW).isoformat(),
            **metadata,
        }
    return mapped, metadata


# --- Locks, embeddings, near duplicates --------------------------------------------------------


def lock_user_types(pairs: set[tuple[str, str]]) -> None:
    """Serialise writes per (user, memory type) until commit; sorted, so batches cannot
    deadlock each other."""
    keys = sorted({f"{user_id}\x1f{memory_type}" for user_id, memory_type in pairs})
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) FROM unnest(%s::text[]) k",
            [keys],
        )


def local_vectors(texts: list[str]) -> list[np.ndarray] | None:
    """Unit vectors for the near-duplicate check when the provider is local (cheap); None
    when it is remote (then only client-supplied vectors are compared)."""
    provider = embedding_provider()
    if not provider.inline or not texts:
        return None
    try:
        return list(normalised(provider.embed(texts)))
    except EmbeddingError:
        return None


def with_local_vectors(memories: list[Memory]) -> None:
    """Give the memories without a vector the local provider's, still `pending`: the HNSW
    indexes take only `ready` rows, so storing it costs no graph maintenance, and later
    writes' near-duplicate checks can compare with it before the worker makes it `ready`."""
    waiting = [memory for memory in memories if memory.embedding is None]
    vectors = local_vectors([memory.content for memory in waiting])
    if vectors is not None:
        for memory, vector in zip(waiting, vectors, strict=True):
            memory.embedding = vector


def schedule_embeddings(memory_ids: list[uuid.UUID]) -> None:
    """After commit, hand the new memories to the worker, 100 to a task.

    Never fails the write, which is committed by then: a publish gets one short attempt
    (REDIS_SOCKET_TIMEOUT, CELERY_TASK_PUBLISH_RETRY_POLICY), and memories whose task could
    not be published stay `pending` for beat's requeue job (embeddings_requeue_stale)."""
    ids = [str(memory_id) for memory_id in memory_ids]
    if not ids:
        return
    from memories.tasks import embed_memories

    def enqueue() -> None:
        for start in range(0, len(ids), EMBED_TASK_SIZE):
            try:
                embed_memories.delay(ids[start : start + EMBED_TASK_SIZE])
            except Exception:  # kombu/redis errors alike: the broker is down or hung
                log.warning(
                    "%d memories left pending for the requeue job: broker unavailable",
                    len(ids) - start,
                    exc_info=True,
                )
                return  # the next publish would only wait out the same timeout

    transaction.on_commit(enqueue)


@dataclass(frozen=True)
class Candidate:
    """A new memory to check for near duplicates among the current ones."""

    index: int
    user_id: str
    memory_type: str
    content_hash: str
    vector: np.ndarray


# Up to this many current memories of one type, a user's near duplicates are found by exact
# distance over all of them (one query for the whole batch); above it, by the HNSW graph, one
# query per new memory. Exact costs ~6 µs a memory compared (the vector is TOASTed); the graph
# costs ~7 ms a new memory whatever the size (a batch of 100 for a user with 20,000: 0.66 s).
EXACT_DEDUP_MAX_MEMORIES = 500


def near_duplicates(candidates: list[Candidate]) -> dict[int, uuid.UUID]:
    """For each candidate, the current memory of the same user and type (other content) whose
    cosine similarity exceeds DEDUP_SIMILARITY, if any: index → memory id. Memories still
    waiting for the worker are compared too, by the vector the write stored for them (local
    provider)."""
    if not candidates:
        return {}
    large = _large_pairs({(c.user_id, c.memory_type) for c in candidates})
    found = _near_duplicates_exact(
        [c for c in candidates if (c.user_id, c.memory_type) not in large]
    )
    indexed = [c for c in candidates if (c.user_id, c.memory_type) in large]
    if indexed:
        with vector_cursor() as cursor:
            iterative_hnsw_scan(cursor)  # for the rest of the write's transaction
            for candidate in indexed:
                nearest = _near_duplicate_indexed(cursor, candidate)
                if nearest is not None:
                    found[candidate.index] = nearest
    return found


def _large_pairs(pairs: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """The (user, type) pairs with more than EXACT_DEDUP_MAX_MEMORIES current memories."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT p.user_id, p.memory_type
            FROM unnest(%s::text[], %s::text[]) AS p(user_id, memory_type)
            WHERE (SELECT count(*) FROM (
                       SELECT 1 FROM memories m
                       WHERE m.user_id = p.user_id AND m.memory_type = p.memory_type
                         AND m.expired_at IS NULL
                       LIMIT %s) counted) > %s
            """,
            [
                [user_id for user_id, _ in pairs],
                [memory_type for _, memory_type in pairs],
                EXACT_DEDUP_MAX_MEMORIES + 1,
                EXACT_DEDUP_MAX_MEMORIES,
            ],
        )
        return set(cursor.fetchall())


def _near_duplicates_exact(candidates: list[Candidate]) -> dict[int, uuid.UUID]:
    if not candidates:
        return {}
    with vector_cursor() as cursor:
        cursor.execute(
            """
            SELECT i.n, m.id
            FROM unnest(%s::int[], %s::text[], %s::text[], %s::text[], %b::halfvec[])
                 AS i(n, user_id, memory_type, content_hash, vector)
            CROSS JOIN LATERAL (
                SELECT id, embedding <=> i.vector AS distance FROM memories
                WHERE user_id = i.user_id AND memory_type = i.memory_type
                  AND expired_at IS NULL AND invalid_at IS NULL AND embedding IS NOT NULL
                  AND content_hash <> i.content_hash
                ORDER BY embedding <=> i.vector LIMIT 1
            ) m
            WHERE 1 - m.distance > %s AND m.distance <> 'NaN'
            """,
            [
                [c.index for c in candidates],
                [c.user_id for c in candidates],
                [c.memory_type for c in candidates],
                [c.content_hash for c in candidates],
                halfvecs([c.vector for c in candidates]),
                settings.DEDUP_SIMILARITY,
            ],
            binary=True,
        )
        return dict(cursor.fetchall())


def _near_duplicate_indexed(cursor: psycopg.Cursor, candidate: Candidate) -> uuid.UUID | None:
    """The nearest memory from the partition's HNSW graph (ready memories; the iterative scan
    goes on past other users' rows) or among the user's waiting ones, if near enough."""
    current = (
        "user_id = %(user_id)s AND memory_type = %(memory_type)s"
        " AND expired_at IS NULL AND invalid_at IS NULL AND content_hash <> %(content_hash)s"
    )
    cursor.execute(
        f"""
        SELECT id FROM (
            (SELECT id, embedding <=> %(vector)b AS distance FROM memories
             WHERE {current} AND embedding_status = 'ready'
             ORDER BY embedding <=> %(vector)b LIMIT 1)
            UNION ALL
            (SELECT id, embedding <=> %(vector)b AS distance FROM memories
             WHERE {current} AND embedding_status = 'pending' AND embedding IS NOT NULL
             ORDER BY 2 LIMIT 1)
        ) nearest
        WHERE 1 - distance > %(similarity)s AND distance <> 'NaN'
        ORDER BY distance LIMIT 1
        """,
        {
            "user_id": candidate.user_id,
            "memory_type": candidate.memory_type,
            "content_hash": candidate.content_hash,
            "vector": HalfVector(candidate.vector),
            "similarity": settings.DEDUP_SIMILARITY,
        },
    )
    row = cursor.fetchone()
    return row[0] if row else None


# --- Writes ------------------------------------------------------------------------------------


def foreign_references(items: dict[int, MemoryInput]) -> dict[int, ValidationError]:
    """The items citing a session, message or episode (a session or a memory) that is not
    their own end user's: index → error. Otherwise one client could attach its memories to
    another's end users, whose export would then show them and whose purge delete them."""
    sessions = {item.session_id for item in items.values() if item.session_id}
    episodes = {episode for item in items.values() for episode in item.source_episode_ids or ()}
    messages = {item.conversation_id for item in items.values() if item.conversation_id}
    if not (sessions or episodes or messages):
        return {}
    session_owners = dict(
        ConversationSession.objects.filter(pk__in=sessions | episodes).values_list("id", "user_id")
    )
    episode_owners = session_owners | dict(
        Memory.objects.filter(pk__in=episodes - session_owners.keys()).values_list("id", "user_id")
    )
    message_sessions = dict(
        ConversationMessage.objects.filter(pk__in=messages).values_list("id", "session_id")
    )
    errors = {}
    for index, item in items.items():
        if item.session_id and session_owners.get(item.session_id) != item.user_id:
            problem = ("session_id", f"No session '{item.session_id}' for this user.")
        elif any(episode_owners.get(e) != item.user_id for e in item.source_episode_ids or ()):
            problem = ("source_episode_ids", "Each must be a session or memory of this user.")
        elif item.conversation_id and message_sessions.get(item.conversation_id) != (
            item.session_id
        ):
            problem = ("conversation_id", "Must be a message of the session.")
        else:
            continue
        errors[index] = ValidationError({problem[0]: [problem[1]]})
    return errors


def _memory_row(*, item: MemoryInput, memory_type: str, metadata: dict, version: int = 1) -> Memory:
    """An unsaved memory (validated) for `item`."""
    problems = {
        "user_id": user_id_problem(item.user_id),
        "content": text_problem(item.content),
        "metadata": json_problem(metadata),
        "embedding": None
        if item.embedding is None
        else embedding_problem(item.embedding, dimensions=settings.EMBEDDING_DIM),
    }
    for name, problem in problems.items():
        if problem is not None:
            raise ValidationError({name: [problem]})
    episodes = list(item.source_episode_ids or [])
    if item.session_id and item.session_id not in episodes:
        episodes.append(item.session_id)
    return Memory(
        id=uuid.uuid4(),
        user_id=item.user_id,
        memory_type=memory_type,
        content=item.content,
        content_hash=content_md5(item.content),
        metadata=metadata,
        importance=0.5 if item.importance is None else item.importance,
        valid_at=item.valid_at or timezone.now(),
        key=item.key,
        version=version,
        embedding=item.embedding,
        embedding_status=(
            EmbeddingStatus.READY if item.embedding is not None else EmbeddingStatus.PENDING
        ),
        source_episode_ids=episodes or None,
        **trait_fields(memory_type=memory_type, metadata=metadata),
    )


def _save_new(rows: list[tuple[Memory, MemoryInput]]) -> None:
    """Insert new memories with their provenance; embeddings follow after commit."""
    with_local_vectors([memory for memory, _ in rows])
    copy_memories([memory for memory, _ in rows])
    MemorySource.objects.bulk_create(
        [
            MemorySource(
                memory_id=memory.id,
                session_id=item.session_id,
                conversation_id=item.conversation_id,
            )
            for memory, item in rows
            if item.session_id
        ]
    )
    schedule_embeddings(
        [memory.id for memory, _ in rows if memory.embedding_status == EmbeddingStatus.PENDING]
    )


def _expire(memory: Memory, *, expected_version: int | None = None, **changes: Any) -> None:
    """Stamp a current memory expired (optimistically: a stale version is a CONFLICT)."""
    current = Memory.objects.filter(pk=memory.pk, expired_at__isnull=True)
    if expected_version is not None:
        current = current.filter(version=expected_version)
    updated = current.update(
        expired_at=timezone.now(), updated_at=timezone.now(), version=F("version") + 1, **changes
    )
    if not updated:
        raise stale(memory)


def stale(memory: Memory) -> Conflict:
    row = Memory.objects.filter(pk=memory.pk).values("version", "expired_at").first()
    if row and row["expired_at"] is not None:
        return Conflict(
            "This memory is no longer current (superseded or deleted).",
            current_version=row["version"],
        )
    return Conflict(
        "The memory changed since you read it; read it again and retry.",
        field="version",
        current_version=row["version"] if row else None,
    )


@transaction.atomic
def memory_add(*, item: MemoryInput, actor: str) -> WriteResult:
    (result,) = memory_add_many(items=[item], actor=actor)
    if isinstance(result, ValidationError):
        raise result
    return result


@transaction.atomic
def memory_add_many(*, items: list[MemoryInput], actor: str) -> list[WriteResult | ValidationError]:
    """Write a batch with the operation model, set-based: one query finds the NOOPs, one the
    near duplicates, one inserts. A rejected item is returned as its ValidationError, in its
    place, and writes nothing; any other failure rolls the whole batch back."""
    set_actor(actor)
    results: dict[int, WriteResult | ValidationError] = {}
    prepared: dict[int, Memory] = {}
    for index, item in enumerate(items):
        try:
            memory_type, metadata = normalised_type(item.memory_type, dict(item.metadata or {}))
            prepared[index] = _memory_row(item=item, memory_type=memory_type, metadata=metadata)
        except ValidationError as error:
            results[index] = error
    for index, error in foreign_references({i: items[i] for i in prepared}).items():
        del prepared[index]
        results[index] = error
    lock_user_types({(memory.user_id, memory.memory_type) for memory in prepared.values()})

    # NOOP: the user already holds this content as a current memory of this type (or an
    # earlier item of this batch does).
    existing = {
        (memory.user_id, memory.memory_type, memory.content_hash): memory
        for memory in Memory.objects.filter(
            expired_at__isnull=True,
            content_hash__in={memory.content_hash for memory in prepared.values()},
            user_id__in={memory.user_id for memory in prepared.values()},
        )
    }
    new: dict[int, Memory] = {}
    for index, memory in prepared.items():
        identity = (memory.user_id, memory.memory_type, memory.content_hash)
        if identity in existing:
            results[index] = WriteResult(Operation.NOOP, existing[identity])
        else:
            existing[identity] = new[index] = memory

    # UPDATE: a current memory this similar is superseded by the new one. Compared by the
    # client's vector, else the local provider's (stored with the row, see _save_new).
    with_local_vectors(list(new.values()))
    embedded = [(index, memory) for index, memory in new.items() if memory.embedding is not None]
    units = normalised([memory.embedding for _, memory in embedded]) if embedded else []
    candidates = [
        Candidate(index, memory.user_id, memory.memory_type, memory.content_hash, unit)
        for (index, memory), unit in zip(embedded, units, strict=True)
    ]
    older_ids = near_duplicates(candidates)
    older = Memory.objects.in_bulk(set(older_ids.values()))
    replaces: dict[int, uuid.UUID] = {}  # new item's index → the memory it supersedes
    for index, older_id in older_ids.items():
        if older_id in replaces.values():  # two items of the batch resemble the same memory
            continue
        replaces[index] = older_id
        new[index].version = older[older_id].version + 1

    _save_new([(memory, items[index]) for index, memory in new.items()])
    for index, older_id in replaces.items():
        _expire(older[older_id], superseded_by=new[index].id)
    superseded = Memory.objects.in_bulk(replaces.values())
    for index, memory in new.items():
        if index in replaces:
            results[index] = WriteResult(Operation.UPDATE, memory, superseded[replaces[index]])
        else:
            results[index] = WriteResult(Operation.ADD, memory)
    return [results[index] for index in range(len(items))]


@transaction.atomic
def memory_supersede(
    *,
    memory: Memory,
    content: str,
    actor: str,
    expected_version: int | None = None,
    metadata: dict[str, Any] | None = None,
    session_id: uuid.UUID | None = None,
    conversation_id: uuid.UUID | None = None,
) -> Memory:
    """A new version with new content; the old one gets expired_at and superseded_by."""
    set_actor(actor)
    lock_user_types({(memory.user_id, memory.memory_type)})
    memory.refresh_from_db()
    metadata = memory.metadata if metadata is None else metadata
    item = MemoryInput(
        user_id=memory.user_id,
        content=content,
        memory_type=memory.memory_type,
        metadata=metadata,
        importance=memory.importance,
        key=memory.key,
        source_episode_ids=memory.source_episode_ids,
        session_id=session_id,
        conversation_id=conversation_id,
    )
    successor = _memory_row(
        item=item, memory_type=memory.memory_type, metadata=metadata, version=memory.version + 1
    )
    _save_new([(successor, item)])
    _expire(memory, expected_version=expected_version, superseded_by=successor.id)
    return successor


UPDATABLE_IN_PLACE = {"metadata", "importance", "key", "valid_at", "memory_type"}


@transaction.atomic
def memory_update(*, memory: Memory, version: int, changes: dict[str, Any], actor: str) -> Memory:
    """PATCH: new content makes a new version (supersede); other fields change in place.
    Either way `version` must be the current one (optimistic lock)."""
    set_actor(actor)
    changes = dict(changes)
    content = changes.pop("content", None)
    if content is not None and content != memory.content:
        successor = memory_supersede(
            memory=memory,
            content=content,
            actor=actor,
            expected_version=version,
            metadata=changes.pop("metadata", None),
        )
        return (
            memory_update(memory=successor, version=successor.version, changes=changes, actor=actor)
            if changes
            else successor
        )
    fields = {name: value for name, value in changes.items() if name in UPDATABLE_IN_PLACE}
    memory_type, metadata = normalised_type(
        fields.get("memory_type", memory.memory_type), fields.get("metadata", memory.metadata)
    )
    if {"memory_type", "metadata"} & fields.keys():
        fields.update(memory_type=memory_type, metadata=metadata)
        fields.update(trait_fields(memory_type=memory_type, metadata=metadata))
    updated = Memory.objects.filter(pk=memory.pk, version=version, expired_at__isnull=True).update(
        **fields, version=F("version") + 1, updated_at=timezone.now()
    )
    if not updated:
        raise stale(memory)
    return Memory.objects.get(pk=memory.pk)


@transaction.atomic
def memory_delete(*, memory: Memory, actor: str) -> Memory:
    """Soft delete: the row and its history stay; recall no longer sees it."""
    set_actor(actor)
    Memory.objects.filter(pk=memory.pk, expired_at__isnull=True).update(
        expired_at=timezone.now(), updated_at=timezone.now(), version=F("version") + 1
    )
    return Memory.objects.get(pk=memory.pk)


@transaction.atomic
def memory_invalidate(*, memory: Memory, actor: str, invalid_at: datetime | None = None) -> Memory:
    """The fact stopped being true at `invalid_at` (seed 002 §5.3)."""
    set_actor(actor)
    now = timezone.now()
    updated = Memory.objects.filter(pk=memory.pk, expired_at__isnull=True).update(
        invalid_at=invalid_at or now, expired_at=now, updated_at=now, version=F("version") + 1
    )
    if not updated:
        raise stale(memory)
    return Memory.objects.get(pk=memory.pk)


def memories_embed(*, memory_ids: list[uuid.UUID]) -> int:
    """Compute and store the embeddings of pending memories (the worker's job); returns how
    many became ready. Raises EmbeddingError when the provider fails, for the task to retry."""
    pending = list(
        Memory.objects.filter(pk__in=memory_ids)
        .exclude(embedding_status=EmbeddingStatus.READY)
        .values_list("id", "content", "content_hash")
    )
    if not pending:
        return 0
    vectors = embedding_provider().embed([content for _, content, _ in pending])
    with vector_cursor() as cursor:
        # Only where the content is still the one embedded.
        cursor.execute(
            """
            UPDATE memories m SET embedding = u.embedding, embedding_status = 'ready'
            FROM unnest(%s::uuid[], %s::text[], %b::halfvec[]) AS u(id, content_hash, embedding)
            WHERE m.id = u.id AND m.content_hash = u.content_hash
            """,
            [
                [memory_id for memory_id, _, _ in pending],
                [content_hash for _, _, content_hash in pending],
                halfvecs(list(vectors)),
            ],
            binary=True,
        )
        return cursor.rowcount


def memories_embedding_failed(*, memory_ids: list[uuid.UUID]) -> None:
    Memory.objects.filter(pk__in=memory_ids, embedding_status=EmbeddingStatus.PENDING).update(
        embedding_status=EmbeddingStatus.FAILED
    )


def embeddings_requeue_stale(*, older_than: timedelta, limit: int = 10_000) -> int:
    """Hand memories `pending` for longer than `older_than` (since their last change) to the
    worker again, oldest first, at most `limit`; answers how many. Their task was never
    published (broker down at commit) or was lost. A duplicate task costs one query (the embed
    task skips ready memories), so two runs at once are safe."""
    from memories.tasks import embed_memories

    ids = [
        str(memory_id)
        for memory_id in Memory.objects.filter(embedding_status=EmbeddingStatus.PENDING)
        .annotate(changed_at=Coalesce("updated_at", "created_at"))
        .filter(changed_at__lt=timezone.now() - older_than)
        .order_by("changed_at")
        .values_list("id", flat=True)[:limit]
    ]
    for start in range(0, len(ids), EMBED_TASK_SIZE):
        embed_memories.delay(ids[start : start + EMBED_TASK_SIZE])
    return len(ids)


# --- User data rights --------------------------------------------------------------------------


@transaction.atomic
def user_purge(*, user_id: str) -> dict[str, int]:
    """Hard-delete everything held about one user, in every table, in one transaction.

    Auxiliary rows are matched through the user's memory and session ids, so another user's
    rows are never touched even where contents look alike. The one official way past the
    append-only history (and the audit trigger, which would log the deletions it is erasing).
    """
    memory_ids = list(Memory.objects.filter(user_id=user_id).values_list("id", flat=True))
    session_ids = list(
        ConversationSession.objects.filter(user_id=user_id).values_list("id", flat=True)
    )
    with pgtrigger.ignore(
        "memories.MemoryHistory:history_append_only", "memories.Memory:memories_audit_delete"
    ):
        counts = {
            "trait_evidence": TraitEvidence.objects.filter(trait_id__in=memory_ids).delete()[0]
            + TraitEvidence.objects.filter(memory_id__in=memory_ids).delete()[0],
            "memory_sources": MemorySource.objects.filter(memory_id__in=memory_ids).delete()[0]
            + MemorySource.objects.filter(session_id__in=session_ids).delete()[0],
            "memory_history": MemoryHistory.objects.filter(memory_id__in=memory_ids).delete()[0],
            "memories": Memory.objects.filter(user_id=user_id).delete()[0],
            "conversations": ConversationMessage.objects.filter(
                session_id__in=session_ids
            ).delete()[0],
            "conversation_sessions": ConversationSession.objects.filter(
                id__in=session_ids
            ).delete()[0],
            "reflection_cycles": ReflectionCycle.objects.filter(user_id=user_id).delete()[0],
        }
    if counts["memories"] >= settings.USER_INDEX_MIN_MEMORIES // 2:
        # The user's own indexes name them in their predicate: beat's refresh drops them
        # (CONCURRENTLY, so not in this transaction), now rather than within the hour.
        from memories.tasks import refresh_user_indexes

        transaction.on_commit(refresh_user_indexes.delay)
    return counts
