"""Reflection's scan mark on memories, and the record of scheduled job runs.

`reflected_at` is NULL on every memory stored so far: the first cycles reflect on the backlog
(REFLECTION_MAX_MEMORIES at a time). The partial index finds a user's unreflected facts and
episodes, and sums their importance for the trigger, without reading the rest.
"""

import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memories', '0008_query_subject_words'),
    ]

    operations = [
        migrations.AddField(
            model_name='memory',
            name='reflected_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunSQL(
            "CREATE INDEX IF NOT EXISTS idx_memories_unreflected ON memories"
            " (user_id, created_at) INCLUDE (importance)"
            " WHERE reflected_at IS NULL AND expired_at IS NULL"
            " AND memory_type IN ('fact', 'episodic');",
            "DROP INDEX IF EXISTS idx_memories_unreflected;",
        ),
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
