"""JobRun, moved here from memories (memories 0017): the job_runs table memories 0009 created
stays as it is; only Django's state and the admin's content type (with the permissions staff
were given on it) change app."""

import django.utils.timezone
from django.db import migrations, models

CONTENT_TYPE_MOVE = """
UPDATE django_content_type SET app_label = '{to}'
WHERE app_label = '{source}' AND model = 'jobrun'
  AND NOT EXISTS (SELECT 1 FROM django_content_type WHERE app_label = '{to}' AND model = 'jobrun')
"""


class Migration(migrations.Migration):
    initial = True

    dependencies = [("contenttypes", "0002_remove_content_type_name")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="JobRun",
                    fields=[
                        ("id", models.BigAutoField(primary_key=True, serialize=False)),
                        ("job", models.CharField(max_length=100)),
                        (
                            "status",
                            models.CharField(
                                choices=[
                                    ("running", "Running"),
                                    ("done", "Done"),
                                    ("skipped", "Skipped"),
                                    ("failed", "Failed"),
                                ],
                                default="running",
                                max_length=10,
                            ),
                        ),
                        ("started_at", models.DateTimeField(default=django.utils.timezone.now)),
                        ("finished_at", models.DateTimeField(blank=True, null=True)),
                        ("rows", models.IntegerField(blank=True, null=True)),
                        ("detail", models.JSONField(blank=True, default=dict)),
                        ("error", models.TextField(blank=True, default="")),
                    ],
                    options={
                        "db_table": "job_runs",
                        "ordering": ["-started_at"],
                        "indexes": [
                            models.Index(fields=["job", "-started_at"], name="idx_job_runs_job")
                        ],
                    },
                ),
            ]
        ),
        migrations.RunSQL(
            CONTENT_TYPE_MOVE.format(source="memories", to="core"),
            CONTENT_TYPE_MOVE.format(source="core", to="memories"),
        ),
    ]
