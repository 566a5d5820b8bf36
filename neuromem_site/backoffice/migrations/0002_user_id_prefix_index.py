"""An index of `memories.user_id` in byte order (COLLATE "C"), for the admin's end-user search.

There is no user table: the end users are the distinct `user_id`s of `memories`. The search
walks them by prefix, one index probe per user found (a loose index scan). The user_id
indexes there are in the database's collation, where (under en_US and the like, which ignore
punctuation at first) the ids starting with a prefix need not sit together; in byte order they
do, so the walk stops at the first id past the prefix.

Built like memories 0009's: the parent's index ON ONLY (invalid until every partition has
its own), each partition's CONCURRENTLY, then attached. Not atomic, so an interrupted run
resumes.
"""

import importlib

from django.db import migrations

marks = importlib.import_module("memories.migrations.0009_reflection_marks_job_runs")

PARENT = "idx_memories_user_c"
COLUMNS = '((user_id COLLATE "C"))'


def partition_index(partition: str) -> str:
    return f"idx_memories_{partition}_user_c"


def prefix_index_build(apps, schema_editor) -> None:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"CREATE INDEX IF NOT EXISTS {PARENT} ON ONLY memories {COLUMNS}")
        for partition in marks.PARTITIONS:
            name = partition_index(partition)
            marks.index_build_concurrently(cursor, name, f"memories_{partition} {COLUMNS}")
            cursor.execute("SELECT 1 FROM pg_inherits WHERE inhrelid = to_regclass(%s)", [name])
            if cursor.fetchone() is None:
                cursor.execute(f"ALTER INDEX {PARENT} ATTACH PARTITION {name}")


def prefix_index_drop(apps, schema_editor) -> None:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX IF EXISTS {PARENT}")  # and the attached partitions' ones
        for partition in marks.PARTITIONS:
            cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {partition_index(partition)}")


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY

    dependencies = [
        ("backoffice", "0001_roles"),
        ("memories", "0011_end_user_purge_permission"),
    ]

    operations = [migrations.RunPython(prefix_index_build, prefix_index_drop)]
