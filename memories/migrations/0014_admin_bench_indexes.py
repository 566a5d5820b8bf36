"""An index for the trait list's "derived from" filter, found by bench/admin.py at 1,000,000
memories (docs/benchmarks.md, "Admin").

The admin's paginator counts a filtered list exactly when the planner expects fewer than
10,000 rows (core/admin_base.py). `trait_derived_from` had no index, so that count
read the whole trait partition (a Seq Scan of 80,000 rows, 31 ms, for the 8,000 traits
promoted from trends). `(trait_derived_from, created_at DESC, id DESC)` answers the count from
the index and the list (newest first) without a sort.

Traits live in one partition, so the index is that partition's only, like 0009's
`idx_trait_recent` and 0001's `idx_trait_*`: built CONCURRENTLY (not atomic, so an interrupted
run resumes: an invalid index left by a failed build is dropped and built again).
`trait_derived_from` is written once, when the trait is, so the index costs no HOT updates.
"""

import importlib

from django.db import migrations

marks = importlib.import_module("memories.migrations.0009_reflection_marks_job_runs")

INDEXES = {
    "idx_trait_derived_from": "memories_trait (trait_derived_from, created_at DESC, id DESC)",
}


def admin_bench_indexes_build(apps, schema_editor) -> None:
    with schema_editor.connection.cursor() as cursor:
        for name, definition in INDEXES.items():
            marks.index_build_concurrently(cursor, name, definition)


def admin_bench_indexes_drop(apps, schema_editor) -> None:
    with schema_editor.connection.cursor() as cursor:
        for name in INDEXES:
            cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY

    dependencies = [("memories", "0013_memory_verbose_name")]

    operations = [migrations.RunPython(admin_bench_indexes_build, admin_bench_indexes_drop)]
