"""Embeddings are the worker's job: a write schedules its new memories after commit, the
worker computes and stores their vectors, confirms by meaning whether they restate a current
memory (memories/services/dedup.py), and beat hands back those no task holds.

A task holds a memory from its publish (or its start) for EMBEDDING_REQUEUE_AFTER seconds,
recorded in Redis beside the queue (`neuromem:embedding-queued:<id>`). Beat's sweep, every
EMBEDDING_REQUEUE_INTERVAL, hands the worker again the memories pending longer than
EMBEDDING_REQUEUE_GRACE that no task holds: their publish failed (the broker was down at
commit), so they are queued again soon after the broker returns; or their task was published
so long ago that it is presumed lost. A memory whose task is queued or running is not queued
twice. When the broker holds no embedding task at all (none queued, none delivered and
unacknowledged), a hold speaks for a task that was lost (a message a worker took from the queue
while Redis hung, before it could record it as delivered): the sweep then ignores the holds.
"""

import logging
import uuid
from datetime import timedelta

import redis
from django.conf import settings
from django.db.models.functions import Coalesce
from django.utils import timezone

from core.jobs import enqueue_on_commit, task_queued_or_unacknowledged
from core.metrics import EMBEDDINGS
from core.redis_client import app_redis
from memories.embeddings import embedding_provider
from memories.models import EmbeddingStatus, Memory
from memories.vectors import halfvecs, vector_cursor

log = logging.getLogger(__name__)

EMBED_TASK = "memories.tasks.embed_memories"
EMBED_TASK_SIZE = 100
QUEUED_KEY = "neuromem:embedding-queued:{}"
# Memories looked up in Redis at once by the sweep.
SWEEP_BATCH = 1000


def embeddings_hold(*, memory_ids: list[str]) -> None:
    """Record that a task holds these memories (published, or started) for
    EMBEDDING_REQUEUE_AFTER seconds. Failing here costs at most a duplicate task, which finds
    the memories ready: logged, not raised."""
    try:
        with app_redis().pipeline(transaction=False) as pipe:
            for memory_id in memory_ids:
                pipe.set(QUEUED_KEY.format(memory_id), 1, ex=settings.EMBEDDING_REQUEUE_AFTER)
            pipe.execute()
    except redis.RedisError:
        log.warning("%d queued embeddings not recorded (Redis unavailable)", len(memory_ids))


def embeddings_unheld(memory_ids: list[str]) -> list[str]:
    """Those of `memory_ids` no task holds."""
    held = app_redis().mget([QUEUED_KEY.format(memory_id) for memory_id in memory_ids])
    return [memory_id for memory_id, mark in zip(memory_ids, held, strict=True) if mark is None]


def embeddings_schedule(*, memory_ids: list[uuid.UUID] | list[str]) -> None:
    """After commit, hand the memories to the worker, EMBED_TASK_SIZE to a task, each task's
    memories held once it is published. Never fails the write, which is committed by then:
    memories whose task could not be published stay `pending`, held by no task, for beat's
    sweep (embeddings_requeue_stale)."""
    ids = [str(memory_id) for memory_id in memory_ids]
    enqueue_on_commit(
        EMBED_TASK,
        *([ids[start : start + EMBED_TASK_SIZE]] for start in range(0, len(ids), EMBED_TASK_SIZE)),
        on_published=lambda args: embeddings_hold(memory_ids=args[0]),
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
    ready = _embeddings_stored(pending) if pending else []
    if confirm_duplicates:
        # Imported here: writes imports rows, which imports this module.
        from memories.services.writes import duplicates_by_meaning_supersede

        # Every one given, not only those made ready now: a task delivered again after it died
        # between storing the vectors and this check confirms them then (twice changes nothing).
        duplicates_by_meaning_supersede(memory_ids=memory_ids)
    return len(ready)


def _embeddings_stored(pending: list[tuple[uuid.UUID, str, str]]) -> list[uuid.UUID]:
    """Embed `pending` (id, content, content hash) and store each vector where the memory still
    holds that content; answers the ids stored."""
    vectors = embedding_provider().embed([content for _, content, _ in pending])
    with vector_cursor() as cursor:
        # Only where the content is still the one embedded.
        cursor.execute(
            """
            UPDATE memories m SET embedding = u.embedding, embedding_status = 'ready'
            FROM unnest(%s::uuid[], %s::text[], %b::halfvec[]) AS u(id, content_hash, embedding)
            WHERE m.id = u.id AND m.content_hash = u.content_hash
              AND m.embedding_status <> 'ready'
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
    EMBEDDINGS.labels("ready").inc(len(ready))
    if len(ready) < len(pending):
        # Edited since (a later task embeds the new text), or embedded by another task
        # meanwhile: the one duplicate embedding there can be, counted here.
        log.info(
            "%d of %d embeddings not stored: the memory changed or was embedded meanwhile",
            len(pending) - len(ready),
            len(pending),
        )
    return ready


def memories_embedding_failed(*, memory_ids: list[uuid.UUID]) -> None:
    failed = Memory.objects.filter(
        pk__in=memory_ids, embedding_status=EmbeddingStatus.PENDING
    ).update(embedding_status=EmbeddingStatus.FAILED)
    EMBEDDINGS.labels("failed").inc(failed)


def embeddings_requeue_stale(*, older_than: timedelta, limit: int = 10_000) -> int:
    """Hand the worker again the memories `pending` for longer than `older_than` (since their
    last change) that no task holds, oldest first, at most `limit`; answers how many. With no
    embedding task in the broker, every such memory: no task can hold it. Two runs at once may
    queue a memory twice: harmless (the embed task skips ready memories), and prevented by the
    task's single-flight lock."""
    stale = [
        str(memory_id)
        for memory_id in Memory.objects.filter(embedding_status=EmbeddingStatus.PENDING)
        .annotate(changed_at=Coalesce("updated_at", "created_at"))
        .filter(changed_at__lt=timezone.now() - older_than)
        .order_by("changed_at")
        .values_list("id", flat=True)
    ]
    if stale and not task_queued_or_unacknowledged(EMBED_TASK):
        ids = stale[:limit]
    else:
        ids = []
        for start in range(0, len(stale), SWEEP_BATCH):
            ids += embeddings_unheld(stale[start : start + SWEEP_BATCH])
            if len(ids) >= limit:
                break
        ids = ids[:limit]
    embeddings_schedule(memory_ids=ids)
    return len(ids)
