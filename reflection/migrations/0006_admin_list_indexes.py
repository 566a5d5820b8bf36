"""Indexes for the admin's evidence and cycle lists, newest first (measured by
`make bench-admin`: without them each page read the whole table).

Built CONCURRENTLY, so writes go on meanwhile. Not atomic, so an interrupted run resumes: an
invalid index left by a failed build is dropped and built again, a valid one is kept.
"""

from django.db import migrations, models

INDEXES = {
    "idx_reflection_recent": "reflection_cycles (started_at DESC, id DESC)",
    "idx_evidence_recent": "trait_evidence (created_at DESC, id DESC)",
}


def indexes_build(apps, schema_editor) -> None:
    with schema_editor.connection.cursor() as cursor:
        for name, definition in INDEXES.items():
            cursor.execute(
                "SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass(%s)", [name]
            )
            found = cursor.fetchone()
            if found and found[0]:
                continue
            if found:
                cursor.execute(f"DROP INDEX CONCURRENTLY {name}")
            cursor.execute(f"CREATE INDEX CONCURRENTLY {name} ON {definition}")


def indexes_drop(apps, schema_editor) -> None:
    for name in INDEXES:
        schema_editor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY

    dependencies = [
        ("reflection", "0005_consistency_link_checks"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(indexes_build, indexes_drop)],
            state_operations=[
                migrations.AddIndex(
                    model_name="reflectioncycle",
                    index=models.Index(
                        fields=["-started_at", "-id"], name="idx_reflection_recent"
                    ),
                ),
                migrations.AddIndex(
                    model_name="traitevidence",
                    index=models.Index(
                        fields=["-created_at", "-id"], name="idx_evidence_recent"
                    ),
                ),
            ],
        ),
    ]
