"""New memory rows, built and stored in one place (the write path, reflection's traits): a new
derived column is added here."""

import hashlib
import uuid
from collections.abc import Sequence
from typing import Any

from memories.models import EmbeddingStatus, Memory, MemorySource
from memories.services.dedup import with_lexical_vectors
from memories.services.embedding_jobs import embeddings_schedule
from memories.vectors import copy_memories


def content_md5(content: str) -> str:
    return hashlib.md5(content.encode("utf-8")).hexdigest()


def memory_rows_insert(memories: list[Memory], *, sources: Sequence[MemorySource] = ()) -> None:
    """Store new memory rows: what their content derives filled in where the caller has not
    (the write path hashes a row to find its NOOPs, and may have its lexical vector from the
    near-duplicate check), one COPY, their provenance, embeddings after commit."""
    for memory in memories:
        if memory.content_hash is None:
            memory.content_hash = content_md5(memory.content)
    with_lexical_vectors([memory for memory in memories if memory.lexical_vector is None])
    copy_memories(memories)
    MemorySource.objects.bulk_create(sources)
    embeddings_schedule(
        memory_ids=[
            memory.id for memory in memories if memory.embedding_status == EmbeddingStatus.PENDING
        ]
    )


def memory_content_columns(contents: dict[uuid.UUID, str]) -> dict[uuid.UUID, dict[str, Any]]:
    """The columns new content sets on a row changed in place (a trait reworded by reflection):
    the content, what it derives, and an embedding to make again (schedule it after the
    update)."""
    rows = [Memory(id=memory_id, content=content) for memory_id, content in contents.items()]
    with_lexical_vectors(rows)
    return {
        row.id: {
            "content": row.content,
            "content_hash": content_md5(row.content),
            "lexical_vector": row.lexical_vector,
            "embedding": None,
            "embedding_status": EmbeddingStatus.PENDING,
        }
        for row in rows
    }
