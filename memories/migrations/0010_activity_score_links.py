"""The activity score's inputs and flags on memories, weighted links between memories, and the
score job's beat schedule (docs/decay.md).

The new columns have constant defaults, so adding them rewrites no partition (PostgreSQL keeps
the default in the catalogue). The schedule is seeded into django-celery-beat's tables, as in
reflection/0003: what is missing is created, an existing (edited) entry is left alone.
"""

import django.utils.timezone
from django.db import migrations, models

import core.db.fields

SCORE_SCHEDULE = "score-memories"
SCORE_TASK = "memories.tasks.score_memories"
SCORE_INTERVAL_SECONDS = 900

COLUMNS = (
    ("traverse_count", "integer NOT NULL DEFAULT 0"),
    ("last_linked_at", "timestamptz"),
    ("eligible_for_delete", "boolean NOT NULL DEFAULT false"),
    ("merge_candidate_of", "uuid"),
)


def score_schedule_seed(apps, schema_editor) -> None:
    periodic_tasks = apps.get_model("django_celery_beat", "PeriodicTask")
    if periodic_tasks.objects.filter(name=SCORE_SCHEDULE).exists():
        return
    interval, _ = apps.get_model("django_celery_beat", "IntervalSchedule").objects.get_or_create(
        every=SCORE_INTERVAL_SECONDS, period="seconds"
    )
    periodic_tasks.objects.create(name=SCORE_SCHEDULE, task=SCORE_TASK, interval=interval)
    # The scheduler reloads when this marker changes (django-celery-beat's PeriodicTasks).
    apps.get_model("django_celery_beat", "PeriodicTasks").objects.update_or_create(
        ident=1, defaults={"last_update": django.utils.timezone.now()}
    )


def score_schedule_remove(apps, schema_editor) -> None:
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(
        name=SCORE_SCHEDULE
    ).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0009_reflection_marks_job_runs"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    "ALTER TABLE memories "
                    + ", ".join(f"ADD COLUMN IF NOT EXISTS {name} {kind}" for name, kind in COLUMNS),
                    "ALTER TABLE memories "
                    + ", ".join(f"DROP COLUMN IF EXISTS {name}" for name, _ in COLUMNS),
                )
            ],
            state_operations=[
                migrations.AddField(
                    model_name="memory",
                    name="traverse_count",
                    field=models.IntegerField(db_default=0, default=0),
                ),
                migrations.AddField(
                    model_name="memory",
                    name="last_linked_at",
                    field=models.DateTimeField(blank=True, null=True),
                ),
                migrations.AddField(
                    model_name="memory",
                    name="eligible_for_delete",
                    field=models.BooleanField(db_default=False, default=False),
                ),
                migrations.AddField(
                    model_name="memory",
                    name="merge_candidate_of",
                    field=models.UUIDField(blank=True, null=True),
                ),
            ],
        ),
        migrations.CreateModel(
            name="MemoryLink",
            fields=[
                ("id", models.BigAutoField(primary_key=True, serialize=False)),
                ("user_id", models.CharField(max_length=255)),
                ("source_id", models.UUIDField()),
                ("target_id", models.UUIDField()),
                ("weight", core.db.fields.RealField()),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
            ],
            options={
                "db_table": "memory_links",
                "ordering": ["created_at", "id"],
                "indexes": [
                    models.Index(fields=["target_id"], name="idx_memory_links_target"),
                    models.Index(fields=["user_id"], name="idx_memory_links_user"),
                ],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("source_id", "target_id"), name="uq_memory_link"
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("source_id", models.F("target_id")), _negated=True),
                        name="chk_memory_link_not_self",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("weight__gte", 0), ("weight__lte", 1)),
                        name="chk_memory_link_weight",
                    ),
                ],
            },
        ),
        migrations.RunPython(score_schedule_seed, score_schedule_remove),
    ]
