"""Indexes for the admin's lists, so a page at a million memories reads ~50 index entries
instead of sorting a table.

On `memories` (partitioned), each built like 0009's: the parent's index ON ONLY (invalid
until every partition has its own), each partition's CONCURRENTLY, then attached. Not atomic,
so an interrupted run resumes (an invalid partition index is dropped and built again, an
attached one kept).

- `idx_memories_created` (created_at DESC, id DESC): the memory list, newest first, merged
  across partitions. The trait partition's is 0009's `idx_trait_recent` (same definition),
  attached rather than built twice.
- `idx_memories_not_current`, the same WHERE expired_at or invalid_at is set: the "expired",
  "invalidated" and "deleted" filters, a minority of rows the list would otherwise hunt for.
- `idx_memories_embedding_todo`, the same WHERE embedding_status <> 'ready': the "pending"
  and "failed" filters (few rows once the worker keeps up).

Both predicate columns are indexed already (0007, 0009, the HNSW indexes), so the partial
indexes cost no HOT updates; a score index would (the score job rewrites scores in place),
which is why the state filter has none (docs/admin.md).

On the plain tables, CONCURRENTLY: `conversation_sessions` (started_at, id) and
`conversations` (created_at, id), the session and message lists, newest first; the messages'
again WHERE extraction_status is pending or failed (set once, at the insert), for that filter.
"""

import importlib

from django.db import migrations

marks = importlib.import_module("memories.migrations.0009_reflection_marks_job_runs")
index_build_concurrently = marks.index_build_concurrently
partitioned_index_build = marks.partitioned_index_build

PARTITIONS = marks.PARTITIONS
ORDER = "(created_at DESC, id DESC)"
# parent index → (predicate, {partition: the partition's index name})
PARTITIONED = {
    "idx_memories_created": (
        "",
        {
            "fact": "idx_memories_fact_created",
            "episodic": "idx_memories_episodic_created",
            "trait": "idx_trait_recent",  # 0009's
            "document": "idx_memories_document_created",
        },
    ),
    "idx_memories_not_current": (
        " WHERE expired_at IS NOT NULL OR invalid_at IS NOT NULL",
        {p: f"idx_memories_{p}_not_current" for p in PARTITIONS},
    ),
    "idx_memories_embedding_todo": (
        " WHERE embedding_status <> 'ready'",
        {p: f"idx_memories_{p}_embedding_todo" for p in PARTITIONS},
    ),
}
PLAIN = {
    "idx_sessions_started": "conversation_sessions (started_at, id)",
    "idx_conversations_created": "conversations (created_at, id)",
    "idx_conversations_unextracted": (
        "conversations (created_at, id) WHERE extraction_status IN ('pending', 'failed')"
    ),
}


def admin_indexes_build(apps, schema_editor) -> None:
    with schema_editor.connection.cursor() as cursor:
        for parent, (predicate, children) in PARTITIONED.items():
            partitioned_index_build(cursor, parent, f"{ORDER}{predicate}", children)
        for name, definition in PLAIN.items():
            index_build_concurrently(cursor, name, definition)


def admin_indexes_drop(apps, schema_editor) -> None:
    with schema_editor.connection.cursor() as cursor:
        for name in PLAIN:
            cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
        # Dropping a parent drops its partitions' indexes, 0009's idx_trait_recent with it:
        # built again on its own, as 0009 left it.
        # A partition's index an interrupted run built but never attached stays: dropped too.
        for parent, (_, children) in PARTITIONED.items():
            cursor.execute(f"DROP INDEX IF EXISTS {parent}")
            for name in set(children.values()) - {"idx_trait_recent"}:
                cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
        index_build_concurrently(cursor, "idx_trait_recent", f"memories_trait {ORDER}")


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY

    dependencies = [("memories", "0011_end_user_purge_permission")]

    operations = [migrations.RunPython(admin_indexes_build, admin_indexes_drop)]
