import logging

from celery import shared_task
from django.conf import settings

from memories.embeddings import EmbeddingError
from memories.services import memory_embed, memory_embedding_failed

log = logging.getLogger(__name__)


@shared_task(bind=True, acks_late=True, soft_time_limit=120, time_limit=150)
def embed_memory(self, memory_id: str) -> str | None:
    """Embed one pending memory; a failing provider is retried with exponential backoff and,
    after EMBEDDING_MAX_RETRIES, the memory is marked `failed` (it is never lost)."""
    try:
        memory = memory_embed(memory_id=memory_id)
    except EmbeddingError as error:
        if self.request.retries >= settings.EMBEDDING_MAX_RETRIES:
            log.error("giving up embedding memory %s: %s", memory_id, error)
            memory_embedding_failed(memory_id=memory_id)
            return None
        raise self.retry(
            exc=error, countdown=settings.EMBEDDING_RETRY_BACKOFF * 2**self.request.retries
        ) from error
    return memory.embedding_status if memory else None
