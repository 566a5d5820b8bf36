"""Embeddings are the worker's job: a write schedules its new memories after commit, the
worker computes and stores their vectors, confirms by meaning whether they restate a current
memory (memories/services/dedup.py), and beat hands back those left pending too long."""

import uuid
from datetime import timedelta

from django.db.models.functions import Coalesce
from django.utils import timezone

from core.jobs import enqueue_on_commit
from memories.embeddings import embedding_provider
from memories.models import EmbeddingStatus, Memory
from memories.vectors import halfvecs, vector_cursor

EMBED_TASK_SIZE = 100


def embeddings_schedule(*, memory_ids: list[uuid.UUID] | list[str]) -> None:
    """After commit, hand the memories to the worker, EMBED_TASK_SIZE to a task. Never fails
    the write, which is committed by then: memories whose task could not be published stay
    `pending` for beat's requeue job (embeddings_requeue_stale)."""
    ids = [str(memory_id) for memory_id in memory_ids]
    enqueue_on_commit(
        "memories.tasks.embed_memories",
        *([ids[start : start + EMBED_TASK_SIZE]] for start in range(0, len(ids), EMBED_TASK_SIZE)),
    )


def memories_embed(*, memory_ids: list[uuid.UUID], confirm_duplicates: bool = True) -> int:
    """Compute and store the embeddings of pending memories (the worker's job), then, unless
    told not to (a rebuild re-embeds memories written before), confirm by meaning whether
    they restate a current memory (`duplicates_by_meaning_supersede`); returns how many became
    ready. Raises EmbeddingError when the provider fails, for the task to retry."""
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
            RETURNING m.id
            """,
            [
                [memory_id for memory_id, _, _ in pending],
                [content_hash for _, _, content_hash in pending],
                halfvecs(list(vectors)),
            ],
            binary=True,
        )
        ready = [memory_id for (memory_id,) in cursor.fetchall()]
    if confirm_duplicates:
        # Imported here: writes imports rows, which imports this module.
        from memories.services.writes import duplicates_by_meaning_supersede

        duplicates_by_meaning_supersede(memory_ids=ready)
    return len(ready)


def memories_embedding_failed(*, memory_ids: list[uuid.UUID]) -> None:
    Memory.objects.filter(pk__in=memory_ids, embedding_status=EmbeddingStatus.PENDING).update(
        embedding_status=EmbeddingStatus.FAILED
    )


def embeddings_requeue_stale(*, older_than: timedelta, limit: int = 10_000) -> int:
    """Hand memories `pending` for longer than `older_than` (since their last change) to the
    worker again, oldest first, at most `limit`; answers how many. Their task was never
    published (broker down at commit) or was lost. A duplicate task costs one query (the embed
    task skips ready memories), so two runs at once are safe."""
    ids = [
        str(memory_id)
        for memory_id in Memory.objects.filter(embedding_status=EmbeddingStatus.PENDING)
        .annotate(changed_at=Coalesce("updated_at", "created_at"))
        .filter(changed_at__lt=timezone.now() - older_than)
        .order_by("changed_at")
        .values_list("id", flat=True)[:limit]
    ]
    embeddings_schedule(memory_ids=ids)
    return len(ids)
