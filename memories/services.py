"""Writes to memories. Typed, keyword-only, one transaction each; side effects on commit.

The operation model of seed 002 §5.4: a write is a NOOP when the user already has a current
memory of that type with the same content hash, an UPDATE (supersede) when a current one is
more similar than DEDUP_SIMILARITY, otherwise an ADD. Writes for one user and memory type are
serialised by a transaction-scoped advisory lock, so concurrent identical writes make one row.
"""

import hashlib
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

import pgtrigger
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from pgvector.django import CosineDistance

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
from neuromem_site.api.envelope import Conflict
from neuromem_site.db.actor import set_actor
from reflection.models import ReflectionCycle, TraitEvidence

TREND_WINDOW = timedelta(days=30)


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
        return kind(value)

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


# --- Locks and embeddings ----------------------------------------------------------------------


def lock_user_types(pairs: set[tuple[str, str]]) -> None:
    """Serialise writes per (user, memory type) until commit; sorted, so batches cannot
    deadlock each other."""
    keys = sorted({f"{user_id}\x1f{memory_type}" for user_id, memory_type in pairs})
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) FROM unnest(%s::text[]) k",
            [keys],
        )


def inline_embeddings(texts: list[str]) -> list[list[float] | None]:
    """Vectors computed inside the write when the provider is local; else None (the task)."""
    provider = embedding_provider()
    if not provider.inline or not texts:
        return [None] * len(texts)
    try:
        return provider.embed(texts)
    except EmbeddingError:
        return [None] * len(texts)


def schedule_embedding(memory: Memory) -> None:
    if memory.embedding_status == EmbeddingStatus.PENDING:
        from memories.tasks import embed_memory

        memory_id = str(memory.id)
        transaction.on_commit(lambda: embed_memory.delay(memory_id))


def near_duplicate(*, user_id: str, memory_type: str, content_hash: str, vector: list[float]):
    """The most similar current memory with other content, if above DEDUP_SIMILARITY."""
    best = (
        Memory.objects.filter(
            user_id=user_id,
            memory_type=memory_type,
            expired_at__isnull=True,
            invalid_at__isnull=True,
            embedding__isnull=False,
        )
        .exclude(content_hash=content_hash)
        .annotate(distance=CosineDistance("embedding", vector))
        .order_by("distance")
        .first()
    )
    if best is not None and 1 - best.distance > settings.DEDUP_SIMILARITY:
        return best
    return None


# --- Writes ------------------------------------------------------------------------------------


def _new_memory(
    *, item: MemoryInput, memory_type: str, metadata: dict, vector, version: int = 1
) -> Memory:
    episodes = list(item.source_episode_ids or [])
    if item.session_id and item.session_id not in episodes:
        episodes.append(item.session_id)
    if item.embedding is not None:
        vector = item.embedding
    memory = Memory.objects.create(
        user_id=item.user_id,
        memory_type=memory_type,
        content=item.content,
        content_hash=content_md5(item.content),
        metadata=metadata,
        importance=0.5 if item.importance is None else item.importance,
        valid_at=item.valid_at or timezone.now(),
        key=item.key,
        version=version,
        embedding=vector,
        embedding_status=EmbeddingStatus.READY if vector is not None else EmbeddingStatus.PENDING,
        source_episode_ids=episodes or None,
        **trait_fields(memory_type=memory_type, metadata=metadata),
    )
    if item.session_id:
        MemorySource.objects.create(
            memory_id=memory.id, session_id=item.session_id, conversation_id=item.conversation_id
        )
    schedule_embedding(memory)
    return memory


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


def _write_one(item: MemoryInput, vector: list[float] | None) -> WriteResult:
    memory_type, metadata = normalised_type(item.memory_type, dict(item.metadata or {}))
    if item.embedding is not None and len(item.embedding) != settings.EMBEDDING_DIM:
        raise ValidationError(
            {
                "embedding": [
                    f"Expected {settings.EMBEDDING_DIM} dimensions, got {len(item.embedding)}."
                ]
            }
        )
    content_hash = content_md5(item.content)
    existing = Memory.objects.filter(
        user_id=item.user_id,
        memory_type=memory_type,
        content_hash=content_hash,
        expired_at__isnull=True,
    ).first()
    if existing is not None:
        return WriteResult(Operation.NOOP, existing)
    candidate = item.embedding if item.embedding is not None else vector
    older = (
        near_duplicate(
            user_id=item.user_id,
            memory_type=memory_type,
            content_hash=content_hash,
            vector=candidate,
        )
        if candidate is not None
        else None
    )
    if older is None:
        return WriteResult(
            Operation.ADD,
            _new_memory(item=item, memory_type=memory_type, metadata=metadata, vector=vector),
        )
    successor = _new_memory(
        item=item,
        memory_type=memory_type,
        metadata=metadata,
        vector=vector,
        version=older.version + 1,
    )
    _expire(older, superseded_by=successor.id)
    older.refresh_from_db()
    return WriteResult(Operation.UPDATE, successor, superseded=older)


@transaction.atomic
def memory_add(*, item: MemoryInput, actor: str) -> WriteResult:
    set_actor(actor)
    memory_type, _ = normalised_type(item.memory_type, {})
    lock_user_types({(item.user_id, memory_type)})
    (vector,) = inline_embeddings([item.content]) if item.embedding is None else [None]
    return _write_one(item, vector)


@transaction.atomic
def memory_add_many(*, items: list[MemoryInput], actor: str) -> list[WriteResult | ValidationError]:
    """A batch: each item is written or rejected on its own (a savepoint each); a rejected
    item is returned as its ValidationError and changes nothing."""
    set_actor(actor)
    pairs = {
        (item.user_id, LEGACY_MEMORY_TYPES.get(item.memory_type, item.memory_type))
        for item in items
    }
    lock_user_types(pairs)  # an unknown type locks a key no one else uses; reported below
    vectors = inline_embeddings([item.content if item.embedding is None else "" for item in items])
    results: list[WriteResult | ValidationError] = []
    for item, vector in zip(items, vectors, strict=True):
        try:
            with transaction.atomic():
                results.append(_write_one(item, vector if item.embedding is None else None))
        except ValidationError as error:
            results.append(error)
    return results


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
    (vector,) = inline_embeddings([content])
    successor = _new_memory(
        item=MemoryInput(
            user_id=memory.user_id,
            content=content,
            memory_type=memory.memory_type,
            metadata=metadata,
            importance=memory.importance,
            key=memory.key,
            source_episode_ids=memory.source_episode_ids,
            session_id=session_id,
            conversation_id=conversation_id,
        ),
        memory_type=memory.memory_type,
        metadata=metadata,
        vector=vector,
        version=memory.version + 1,
    )
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


def memory_embed(*, memory_id: uuid.UUID) -> Memory | None:
    """Compute and store a pending memory's embedding (the Celery task's work). Raises
    EmbeddingError when the provider fails, so the task can retry."""
    memory = Memory.objects.filter(pk=memory_id).first()
    if memory is None or memory.embedding_status == EmbeddingStatus.READY:
        return memory
    (vector,) = embedding_provider().embed([memory.content])
    # Only if the content is still the one embedded (a concurrent change would re-queue).
    Memory.objects.filter(pk=memory.pk, content_hash=memory.content_hash).update(
        embedding=vector, embedding_status=EmbeddingStatus.READY
    )
    return Memory.objects.get(pk=memory.pk)


def memory_embedding_failed(*, memory_id: uuid.UUID) -> None:
    Memory.objects.filter(pk=memory_id, embedding_status=EmbeddingStatus.PENDING).update(
        embedding_status=EmbeddingStatus.FAILED
    )


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
    return counts
