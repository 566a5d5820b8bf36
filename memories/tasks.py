import logging
import time
from datetime import timedelta
from typing import Any

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from core.db.locks import LockNamespace, single_flight
from core.job_runs import job_run
from memories.access_counts import accesses_flush
from memories.embeddings import EmbeddingError
from memories.scoring import memories_score, score_resume_point
from memories.services import embeddings_requeue_stale, memories_embed, memories_embedding_failed
from memories.services.embedding_jobs import embeddings_hold
from memories.user_indexes import user_indexes_refresh

log = logging.getLogger(__name__)

# What a beat job answers when another run of it is still in flight (core/db/locks.py).
SKIPPED = "skipped: another run is in flight"

# Acknowledged after the work (CELERY_TASK_ACKS_LATE), so a task must end well inside the
# broker's visibility timeout, which is sized from TASK_TIME_LIMIT.
LATE_ACK_LIMITS = {
    "soft_time_limit": settings.TASK_TIME_LIMIT * 4 // 5,
    "time_limit": settings.TASK_TIME_LIMIT,
}


@shared_task(bind=True, acks_late=True, **LATE_ACK_LIMITS)
def embed_memories(self, memory_ids: list[str]) -> int:
    """Embed pending memories (up to 100 a task). A failing provider is retried with
    exponential backoff; after EMBEDDING_MAX_RETRIES the memories are marked `failed`
    (never lost, and a later run can still embed them). Running twice changes nothing."""
    embeddings_hold(memory_ids=memory_ids)  # running: beat's sweep leaves them to this task
    try:
        return memories_embed(memory_ids=memory_ids)
    except EmbeddingError as error:
        if self.request.retries >= settings.EMBEDDING_MAX_RETRIES:
            log.error("giving up embedding %d memories: %s", len(memory_ids), error)
            memories_embedding_failed(memory_ids=memory_ids)
            return 0
        raise self.retry(
            exc=error, countdown=settings.EMBEDDING_RETRY_BACKOFF * 2**self.request.retries
        ) from error


@shared_task(acks_late=True, **LATE_ACK_LIMITS)
def flush_accesses() -> int | str:
    """Beat, every ACCESS_FLUSH_INTERVAL: write the access counts collected in Redis."""
    with single_flight(LockNamespace.ACCESS_FLUSH) as running:
        return accesses_flush() if running else SKIPPED


@shared_task(acks_late=True, **LATE_ACK_LIMITS)
def requeue_stale_embeddings() -> int | str:
    """Beat, every EMBEDDING_REQUEUE_INTERVAL: hand memories pending longer than
    EMBEDDING_REQUEUE_GRACE that no task holds to the worker again (one run at a time: two
    would queue the same memories twice)."""
    older_than = timedelta(seconds=settings.EMBEDDING_REQUEUE_GRACE)
    with single_flight(LockNamespace.EMBEDDING_REQUEUE) as running:
        return embeddings_requeue_stale(older_than=older_than) if running else SKIPPED


# Acknowledged on delivery: its hour-long limit would otherwise set the visibility timeout
# (how long a killed worker's tasks wait), and a lost run is redone by beat within the hour.
@shared_task(acks_late=False, soft_time_limit=3300, time_limit=3500)
def refresh_user_indexes() -> dict[str, list[str]] | str:
    """Beat, every USER_INDEX_REFRESH_INTERVAL, and after a big user's purge: per-user HNSW
    graphs and text indexes for big users (one run at a time: two would build the same index
    CONCURRENTLY, and one fails)."""
    with single_flight(LockNamespace.USER_INDEXES) as running:
        if not running:
            return SKIPPED
        changes = user_indexes_refresh()
        return {"built": changes.built, "dropped": changes.dropped}


SCORE_JOB = "score-memories"  # its beat entry (migration 0010) and its runs in job_runs
# A score run stops between batches this long before its soft time limit (a batch takes about a
# second: docs/benchmarks.md); the next run continues after the last id it reached.
SCORE_STOP_MARGIN = 30


@shared_task(acks_late=True, **LATE_ACK_LIMITS)
def score_memories() -> dict[str, Any] | str:
    """Beat, every 15 minutes: the activity scores and flags of the current memories
    (docs/decay.md). Running it again at the same moment changes nothing."""
    with job_run(SCORE_JOB, LockNamespace.SCORE) as run:
        if run is None:
            return SKIPPED
        scoring = memories_score(
            now=timezone.now(),
            after=score_resume_point(job=SCORE_JOB),
            deadline=time.monotonic() + LATE_ACK_LIMITS["soft_time_limit"] - SCORE_STOP_MARGIN,
        )
        run.rows, run.detail = scoring.changed, scoring.detail()
        return run.detail
