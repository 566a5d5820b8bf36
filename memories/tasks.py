import logging

from celery import shared_task
from django.conf import settings

from memories.access import accesses_flush
from memories.embeddings import EmbeddingError
from memories.services import memories_embed, memories_embedding_failed
from memories.user_indexes import user_indexes_refresh

log = logging.getLogger(__name__)


@shared_task(bind=True, acks_late=True, soft_time_limit=240, time_limit=300)
def embed_memories(self, memory_ids: list[str]) -> int:
    """Embed pending memories (up to 100 a task). A failing provider is retried with
    exponential backoff; after EMBEDDING_MAX_RETRIES the memories are marked `failed`
    (never lost, and a later run can still embed them). Running twice changes nothing."""
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


@shared_task(acks_late=True, soft_time_limit=240, time_limit=300)
def flush_accesses() -> int:
    """Beat, every ACCESS_FLUSH_INTERVAL: write the access counts collected in Redis."""
    return accesses_flush()


@shared_task(acks_late=True, soft_time_limit=3300, time_limit=3500)
def refresh_user_indexes() -> dict[str, list[str]]:
    """Beat, every USER_INDEX_REFRESH_INTERVAL: per-user HNSW graphs and text indexes for big
    users."""
    changes = user_indexes_refresh()
    return {"built": changes.built, "dropped": changes.dropped}
