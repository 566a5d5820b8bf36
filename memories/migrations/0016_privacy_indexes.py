"""Partial indexes for what privacy adds to `memories` and `conversations`, so the statistics and
the admin read a handful of index entries instead of a table:

- `idx_memories_redacted` (created_at) WHERE redactions IS NOT NULL: the redaction counts of the
  statistics and the admin dashboard, over a window of creation times;
- `idx_memories_forgotten` (created_at DESC, id DESC) WHERE forgotten_at IS NOT NULL: the admin's
  "forgotten" filter, newest first;
- `idx_conversations_redacted` (created_at) WHERE redactions IS NOT NULL: the messages' counts.

Built like 0012's: on `memories` the parent's index ON ONLY, each partition's CONCURRENTLY, then
attached; not atomic, so an interrupted run resumes. The columns are new and NULL everywhere,
so each build reads its partition once and writes an empty index.
"""

import importlib

from django.db import migrations

marks = importlib.import_module("memories.migrations.0009_reflection_marks_job_runs")
index_build_concurrently = marks.index_build_concurrently
partitioned_index_build = marks.partitioned_index_build

PARTITIONS = marks.PARTITIONS
# parent index → (columns and predicate, the partitions' index name with {p})
PARTITIONED = {
    "idx_memories_redacted": ("(created_at) WHERE redactions IS NOT NULL", "idx_memories_{p}_redacted"),
    "idx_memories_forgotten": (
        "(created_at DESC, id DESC) WHERE forgotten_at IS NOT NULL",
        "idx_memories_{p}_forgotten",
    ),
}
PLAIN = {"idx_conversations_redacted": "conversations (created_at) WHERE redactions IS NOT NULL"}


def privacy_indexes_build(apps, schema_editor) -> None:
    with schema_editor.connection.cursor() as cursor:
        for parent, (definition, child) in PARTITIONED.items():
            children = {partition: child.format(p=partition) for partition in PARTITIONS}
            partitioned_index_build(cursor, parent, definition, children)
        for name, definition in PLAIN.items():
            index_build_concurrently(cursor, name, definition)


def privacy_indexes_drop(apps, schema_editor) -> None:
    with schema_editor.connection.cursor() as cursor:
        for name in PLAIN:
            cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
        for parent, (_, child) in PARTITIONED.items():
            cursor.execute(f"DROP INDEX IF EXISTS {parent}")
            for partition in PARTITIONS:  # built by an interrupted run, never attached
                cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {child.format(p=partition)}")


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY

    dependencies = [("memories", "0015_privacy")]

    operations = [migrations.RunPython(privacy_indexes_build, privacy_indexes_drop)]
