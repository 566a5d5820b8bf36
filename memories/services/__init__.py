"""Writes to memories, by subject:

- `writes`: the operation model (ADD / UPDATE / NOOP), supersede, versions, the write locks.
- `edits`: a stored memory edited (PATCH), its key renamed, deleted, invalidated.
- `dedup`: near duplicates, found in SQL.
- `embedding_jobs`: the worker's embeddings, scheduled after commit and re-queued by beat.
- `links`: weighted links between one end user's memories.
- `user_data`: the hard purge of one end user.

Trait types and parsing live in `memories.traits`; reads in `memories.selectors`.
"""

from memories.services.edits import (
    memory_delete,
    memory_invalidate,
    memory_key_rename,
    memory_update,
)
from memories.services.embedding_jobs import (
    embeddings_requeue_stale,
    embeddings_schedule,
    memories_embed,
    memories_embedding_failed,
)
from memories.services.links import (
    KeyedLink,
    memory_add_with_links,
    memory_link_remove,
    memory_link_set,
    memory_update_with_links,
)
from memories.services.user_data import user_purge
from memories.services.writes import (
    MemoryInput,
    Operation,
    WriteResult,
    content_md5,
    lock_memory_writes,
    memory_add,
    memory_add_many,
    memory_supersede,
)

__all__ = [
    "KeyedLink",
    "MemoryInput",
    "Operation",
    "WriteResult",
    "content_md5",
    "embeddings_requeue_stale",
    "embeddings_schedule",
    "lock_memory_writes",
    "memories_embed",
    "memories_embedding_failed",
    "memory_add",
    "memory_add_many",
    "memory_add_with_links",
    "memory_delete",
    "memory_invalidate",
    "memory_key_rename",
    "memory_link_remove",
    "memory_link_set",
    "memory_supersede",
    "memory_update",
    "memory_update_with_links",
    "user_purge",
]
