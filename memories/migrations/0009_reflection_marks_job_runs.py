"""Reflection's scan mark on memories, and the record of scheduled job runs.

`reflected_at` is NULL on every memory stored so far: the first cycles reflect on the backlog
(REFLECTION_MAX_MEMORIES at a time). The partial index finds a user's unreflected facts and
episodes, and sums their importance for the trigger, without reading the rest.

At first that index covers every fact and episode, so it is built without blocking writes:
on the parent only (invalid until complete), then CONCURRENTLY on each partition, each
attached to it. Not atomic, so an interrupted run resumes: an invalid partition index left by
a failed build is dropped and built again, one already attached is kept. The trait partition
also gets an index by age, for the admin's trait list (newest first).
"""

import django.utils.timezone
from django.db import migrations, models

PARTITIONS = ("fact", "episodic", "trait", "document")
COLUMNS = "(user_id, created_at) INCLUDE (importance)"
PREDICATE = (
    "reflected_at IS NULL AND expired_at IS NULL AND memory_type IN ('fact', 'episodic')"
)


def index_build_concurrently(cursor, name: str, definition: str) -> None:
    """CREATE INDEX CONCURRENTLY `name` unless a valid one exists; an invalid one (a build
    that failed half-way) is dropped first."""
    cursor.execute("SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass(%s)", [name])
    found = cursor.fetchone()
    if found and found[0]:
        return
    if found:
        cursor.execute(f"DROP INDEX CONCURRENTLY {name}")
    cursor.execute(f"CREATE INDEX CONCURRENTLY {name} ON {definition}")


def partitioned_index_build(
    cursor, parent: str, definition: str, children: dict[str, str]
) -> None:
    """The index `parent` on `memories` (`definition`: columns and predicate) without blocking
    writes: on the parent only (invalid until complete), then each partition's (`children`:
    partition → its index's name) CONCURRENTLY, each attached unless it is already."""
    cursor.execute(f"CREATE INDEX IF NOT EXISTS {parent} ON ONLY memories {definition}")
    for partition, name in children.items():
        index_build_concurrently(cursor, name, f"memories_{partition} {definition}")
        cursor.execute("SELECT 1 FROM pg_inherits WHERE inhrelid = to_regclass(%s)", [name])
        if cursor.fetchone() is None:
            cursor.execute(f"ALTER INDEX {parent} ATTACH PARTITION {name}")


def unreflected_index_build(apps, schema_editor) -> None:
    with schema_editor.connection.cursor() as cursor:
        partitioned_index_build(
            cursor,
            "idx_memories_unreflected",
            f"{COLUMNS} WHERE {PREDICATE}",
            {p: f"idx_memories_{p}_unreflected" for p in PARTITIONS},
        )
        # The admin's trait list, newest first, without sorting the partition.
        index_build_concurrently(
            cursor, "idx_trait_recent", "memories_trait (created_at DESC, id DESC)"
        )


def unreflected_index_drop(apps, schema_editor) -> None:
    schema_editor.execute("DROP INDEX IF EXISTS idx_trait_recent")
    schema_editor.execute("DROP INDEX IF EXISTS idx_memories_unreflected")


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY

    dependencies = [
        ('memories', '0008_query_subject_words'),
    ]

    operations = [
        # IF NOT EXISTS: a run interrupted in the index build added the column already.
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    "ALTER TABLE memories ADD COLUMN IF NOT EXISTS reflected_at timestamptz;",
                    "ALTER TABLE memories DROP COLUMN IF EXISTS reflected_at;",
                )
            ],
            state_operations=[
                migrations.AddField(
                    model_name='memory',
                    name='reflected_at',
                    field=models.DateTimeField(blank=True, null=True),
                ),
            ],
        ),
        migrations.RunPython(unreflected_index_build, unreflected_index_drop),
        migrations.CreateModel(
            name='JobRun',
            fields=[
                ('id', models.BigAutoField(primary_key=True, serialize=False)),
                ('job', models.CharField(max_length=100)),
                ('status', models.CharField(choices=[('running', 'Running'), ('done', 'Done'), ('skipped', 'Skipped'), ('failed', 'Failed')], default='running', max_length=10)),
                ('started_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('finished_at', models.DateTimeField(blank=True, null=True)),
                ('rows', models.IntegerField(blank=True, null=True)),
                ('detail', models.JSONField(blank=True, default=dict)),
                ('error', models.TextField(blank=True, default='')),
            ],
            options={
                'db_table': 'job_runs',
                'ordering': ['-started_at'],
                'indexes': [models.Index(fields=['job', '-started_at'], name='idx_job_runs_job')],
            },
        ),
    ]
