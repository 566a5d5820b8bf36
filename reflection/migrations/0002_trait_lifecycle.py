"""The trait lifecycle: decay rates, the decay view, consistency issues, queued and skipped
cycles.

`mv_trait_decayed` is seed 002 §5.1's materialized view with two changes: the decay rates come
from `trait_decay_rates` (written from the configured lifecycle rules before every refresh, so
a changed rule needs no migration), and it leaves out `embedding`, which
`manage.py embeddings_rebuild` drops and re-adds (a view depending on it would block that);
recall searches trait vectors on `memories` itself. The unique index on `id` lets beat refresh
it CONCURRENTLY, so readers never wait.
"""

import django.db.models.functions.datetime
from django.db import migrations, models

DEFAULT_DECAY = {"behavior": 0.005, "preference": 0.002, "core": 0.001}
DEFAULT_SPACING = 0.1

VIEW_SQL = """
CREATE MATERIALIZED VIEW IF NOT EXISTS mv_trait_decayed AS
SELECT
    t.id,
    t.user_id,
    t.content,
    t.trait_subtype,
    coalesce(t.trait_stage, t.metadata->>'trait_stage')::text AS trait_stage,
    t.trait_context,
    t.trait_parent_id,
    t.trait_confidence::float8 AS raw_confidence,
    (t.trait_confidence * exp(
        -(r.base_lambda / (1 + r.spacing * coalesce(t.trait_reinforcement_count, 0)))
        * extract(epoch FROM (now() - coalesce(t.trait_last_reinforced, t.created_at)))
        / 86400.0
    ))::float8 AS decayed_confidence,
    t.trait_reinforcement_count,
    t.trait_contradiction_count,
    t.trait_first_observed,
    t.trait_last_reinforced,
    t.importance::float8 AS importance,
    t.metadata,
    t.created_at,
    now() AS computed_at
FROM memories t
LEFT JOIN trait_decay_rates r ON r.trait_subtype = coalesce(t.trait_subtype, 'behavior')
WHERE t.memory_type = 'trait'
  AND coalesce(t.trait_stage, t.metadata->>'trait_stage', '') NOT IN ('dissolved', 'trend')
  AND t.expired_at IS NULL
  AND t.invalid_at IS NULL
WITH DATA;
CREATE UNIQUE INDEX IF NOT EXISTS idx_mv_trait_id ON mv_trait_decayed (id);
CREATE INDEX IF NOT EXISTS idx_mv_trait_user ON mv_trait_decayed (user_id, decayed_confidence DESC);
CREATE INDEX IF NOT EXISTS idx_mv_trait_stage ON mv_trait_decayed (user_id, trait_stage);
"""


def cycle_statuses_back(apps, schema_editor) -> None:
    apps.get_model("reflection", "ReflectionCycle").objects.filter(
        status__in=["queued", "skipped"]
    ).update(status="failed", error_message="not run (migrated back)")


def decay_rates_seed(apps, schema_editor) -> None:
    rates = apps.get_model("reflection", "TraitDecayRate")
    for subtype, base in DEFAULT_DECAY.items():
        rates.objects.get_or_create(
            trait_subtype=subtype, defaults={"base_lambda": base, "spacing": DEFAULT_SPACING}
        )


class Migration(migrations.Migration):

    dependencies = [
        ('reflection', '0001_initial'),
        ('memories', '0009_reflection_marks_job_runs'),
    ]

    operations = [
        migrations.CreateModel(
            name='TraitDecayed',
            fields=[
                ('id', models.UUIDField(primary_key=True, serialize=False)),
                ('user_id', models.CharField(max_length=255)),
                ('content', models.TextField()),
                ('trait_subtype', models.CharField(max_length=20, null=True)),
                ('trait_stage', models.TextField(null=True)),
                ('trait_context', models.CharField(max_length=20, null=True)),
                ('trait_parent_id', models.UUIDField(null=True)),
                ('raw_confidence', models.FloatField(null=True)),
                ('decayed_confidence', models.FloatField(null=True)),
                ('trait_reinforcement_count', models.IntegerField(null=True)),
                ('trait_contradiction_count', models.IntegerField(null=True)),
                ('trait_first_observed', models.DateTimeField(null=True)),
                ('trait_last_reinforced', models.DateTimeField(null=True)),
                ('importance', models.FloatField()),
                ('metadata', models.JSONField()),
                ('created_at', models.DateTimeField()),
                ('computed_at', models.DateTimeField()),
            ],
            options={
                'verbose_name': 'trait (decayed)',
                'verbose_name_plural': 'traits (decayed)',
                'db_table': 'mv_trait_decayed',
                'ordering': ['user_id', '-decayed_confidence'],
                'managed': False,
            },
        ),
        migrations.CreateModel(
            name='ConsistencyIssue',
            fields=[
                ('id', models.BigAutoField(primary_key=True, serialize=False)),
                ('check_name', models.CharField(choices=[('evidence_trait', 'evidence → missing trait'), ('evidence_memory', 'evidence → missing memory'), ('history_memory', 'history → missing memory'), ('source_memory', 'source → missing memory'), ('source_session', 'source → missing session'), ('superseded_by', 'superseded_by → missing memory'), ('trait_parent', 'trait_parent_id → missing trait')], max_length=30)),
                ('table_name', models.CharField(max_length=63)),
                ('row_id', models.CharField(max_length=100)),
                ('missing_id', models.CharField(max_length=100)),
                ('user_id', models.CharField(blank=True, max_length=255, null=True)),
                ('first_seen_at', models.DateTimeField(db_default=django.db.models.functions.datetime.Now())),
                ('last_seen_at', models.DateTimeField(db_default=django.db.models.functions.datetime.Now())),
                ('resolved_at', models.DateTimeField(blank=True, null=True)),
            ],
            options={
                'db_table': 'consistency_issues',
                'ordering': ['-last_seen_at'],
            },
        ),
        migrations.CreateModel(
            name='TraitDecayRate',
            fields=[
                ('trait_subtype', models.CharField(max_length=20, primary_key=True, serialize=False)),
                ('base_lambda', models.FloatField()),
                ('spacing', models.FloatField()),
            ],
            options={
                'db_table': 'trait_decay_rates',
            },
        ),
        migrations.RemoveConstraint(
            model_name='reflectioncycle',
            name='chk_reflection_status',
        ),
        # Backwards, before the old constraint returns: it knows no queued or skipped cycle.
        migrations.RunPython(migrations.RunPython.noop, cycle_statuses_back),
        migrations.AddField(
            model_name='reflectioncycle',
            name='requested_by',
            field=models.CharField(db_default='system', default='system', max_length=255),
        ),
        migrations.AlterField(
            model_name='reflectioncycle',
            name='status',
            field=models.CharField(choices=[('queued', 'Queued'), ('running', 'Running'), ('completed', 'Completed'), ('failed', 'Failed'), ('skipped', 'Skipped')], db_default='running', default='running', max_length=20),
        ),
        migrations.AlterField(
            model_name='reflectioncycle',
            name='trigger_type',
            field=models.CharField(choices=[('importance_accumulated', 'Importance Accumulated'), ('scheduled', 'Scheduled'), ('session_end', 'Session End'), ('idle', 'Idle'), ('manual', 'Manual')], max_length=30),
        ),
        migrations.AddIndex(
            model_name='reflectioncycle',
            index=models.Index(fields=['status', '-started_at'], name='idx_reflection_status'),
        ),
        migrations.AddConstraint(
            model_name='reflectioncycle',
            constraint=models.CheckConstraint(condition=models.Q(('status__in', ['queued', 'running', 'completed', 'failed', 'skipped'])), name='chk_reflection_status'),
        ),
        migrations.AddConstraint(
            model_name='consistencyissue',
            constraint=models.UniqueConstraint(condition=models.Q(('resolved_at__isnull', True)), fields=('check_name', 'row_id'), name='uniq_open_consistency_issue'),
        ),
        migrations.RunPython(decay_rates_seed, migrations.RunPython.noop),
        migrations.RunSQL(VIEW_SQL, "DROP MATERIALIZED VIEW IF EXISTS mv_trait_decayed;"),
    ]
