"""Near duplicates are found by a lexical vector of their own (docs/write-path.md).

The recall embedding is now a semantic model's, computed by the worker; the write path keeps a
cheap lexical vector (hashing provider, 512 dimensions) for its near-duplicate check. This adds
the column, computes it for the current memories already stored (in batches, each committed,
so an interrupted run resumes where it stopped), and indexes each user's current memories by
age: the check compares a new memory with the user's most recent ones of its type. The partial
index of waiting memories (0004), which only the old check read, goes: every write paid for it.
"""

import importlib

import pgvector.django.halfvec
from django.db import migrations, transaction

hnsw_ready_only = importlib.import_module("memories.migrations.0004_hnsw_ready_only")

BACKFILL_BATCH = 2000

RECENT_INDEX_SQL = """
CREATE INDEX IF NOT EXISTS idx_memories_recent ON memories (user_id, memory_type, created_at DESC)
    WHERE expired_at IS NULL;
"""


def backfill_lexical_vectors(apps, schema_editor) -> None:
    # The write path's own hashing, so the stored vectors and new ones agree.
    from memories.embeddings import lexical_provider
    from memories.vectors import halfvecs, vector_cursor

    provider = lexical_provider()
    last_id = None
    while True:
        with transaction.atomic(), vector_cursor() as cursor:
            cursor.execute(
                "SELECT id, content FROM memories WHERE expired_at IS NULL"
                " AND lexical_vector IS NULL AND (%(after)s::uuid IS NULL OR id > %(after)s)"
                " ORDER BY id LIMIT %(limit)s",
                {"after": last_id, "limit": BACKFILL_BATCH},
            )
            rows = cursor.fetchall()
            if not rows:
                return
            vectors = provider.embed([content for _, content in rows])
            cursor.execute(
                "UPDATE memories m SET lexical_vector = u.vector"
                " FROM unnest(%s::uuid[], %b::halfvec[]) AS u(id, vector) WHERE m.id = u.id",
                [
                    [memory_id for memory_id, _ in rows],
                    halfvecs(list(vectors)),
                ],
                binary=True,
            )
            last_id = rows[-1][0]


class Migration(migrations.Migration):
    atomic = False  # the backfill commits batch by batch

    dependencies = [("memories", "0006_search_candidates")]

    operations = [
        # IF NOT EXISTS: the migration is not atomic, so a run interrupted in the backfill
        # added the column already; running it again resumes.
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    "ALTER TABLE memories ADD COLUMN IF NOT EXISTS lexical_vector halfvec(512);",
                    "ALTER TABLE memories DROP COLUMN IF EXISTS lexical_vector;",
                )
            ],
            state_operations=[
                migrations.AddField(
                    model_name="memory",
                    name="lexical_vector",
                    field=pgvector.django.halfvec.HalfVectorField(
                        blank=True, dimensions=512, null=True
                    ),
                )
            ],
        ),
        migrations.RunPython(backfill_lexical_vectors, migrations.RunPython.noop),
        migrations.RunSQL(RECENT_INDEX_SQL, "DROP INDEX IF EXISTS idx_memories_recent;"),
        migrations.RunSQL(
            "DROP INDEX IF EXISTS idx_memories_pending;", hnsw_ready_only.PENDING_INDEX_SQL
        ),
    ]
