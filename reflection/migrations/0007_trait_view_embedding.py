"""`mv_trait_decayed` as seed 002 §5.1 has it in two more points:

- it carries the trait's `embedding`, with the seed's HNSW index (`idx_mv_trait_embedding`), for
  traits found by meaning. A trait the worker has not embedded yet has none (an HNSW graph
  leaves NULLs out), and the view's vectors are as of its last refresh, like its decay.
- a subtype `trait_decay_rates` does not name, or none, decays at the seed's ELSE rate (0.003),
  read from the table's default row (`*`, written from the lifecycle rules with the others);
  0002's view took such a trait for a behavior, and left an unknown subtype without a decay.

The view now depends on `memories.embedding`, which `manage.py embeddings_rebuild` drops and
re-adds at another dimension: the rebuild takes the view down first and creates it again after,
through `memories.hooks` (reflection's part: reflection/hooks.py), with VIEW_SQL from here, the
one definition. Every refresh rewrites every row (the decay and `computed_at` move), so beat's
refresh inserts each trait into the graph again: the index's price, paid by beat, never by a
reader (the refresh is CONCURRENTLY).

Backwards: 0002's view exactly (its SQL, imported), and no default row.
"""

import importlib

import pgvector.django.halfvec
from django.conf import settings
from django.db import migrations

trait_lifecycle = importlib.import_module("reflection.migrations.0002_trait_lifecycle")

DEFAULT_KEY = "*"
DEFAULT_DECAY = 0.003
DEFAULT_SPACING = 0.1

DROP_SQL = "DROP MATERIALIZED VIEW IF EXISTS mv_trait_decayed;"

VIEW_SQL = """
CREATE MATERIALIZED VIEW IF NOT EXISTS mv_trait_decayed AS
SELECT
    t.id,
    t.user_id,
    t.content,
    t.embedding,
    t.trait_subtype,
    coalesce(t.trait_stage, t.metadata->>'trait_stage')::text AS trait_stage,
    t.trait_context,
    t.trait_parent_id,
    t.trait_confidence::float8 AS raw_confidence,
    (t.trait_confidence * exp(
        -(coalesce(r.base_lambda, d.base_lambda)
          / (1 + coalesce(r.spacing, d.spacing) * coalesce(t.trait_reinforcement_count, 0)))
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
LEFT JOIN trait_decay_rates r ON r.trait_subtype = t.trait_subtype
LEFT JOIN trait_decay_rates d ON d.trait_subtype = '*'
WHERE t.memory_type = 'trait'
  AND coalesce(t.trait_stage, t.metadata->>'trait_stage', '') NOT IN ('dissolved', 'trend')
  AND t.expired_at IS NULL
  AND t.invalid_at IS NULL
WITH DATA;
CREATE UNIQUE INDEX IF NOT EXISTS idx_mv_trait_id ON mv_trait_decayed (id);
CREATE INDEX IF NOT EXISTS idx_mv_trait_user ON mv_trait_decayed (user_id, decayed_confidence DESC);
CREATE INDEX IF NOT EXISTS idx_mv_trait_stage ON mv_trait_decayed (user_id, trait_stage);
CREATE INDEX IF NOT EXISTS idx_mv_trait_embedding ON mv_trait_decayed
    USING hnsw (embedding halfvec_cosine_ops) WITH (m = 24, ef_construction = 128);
"""


def default_rate_seed(apps, schema_editor) -> None:
    apps.get_model("reflection", "TraitDecayRate").objects.get_or_create(
        trait_subtype=DEFAULT_KEY,
        defaults={"base_lambda": DEFAULT_DECAY, "spacing": DEFAULT_SPACING},
    )


def default_rate_remove(apps, schema_editor) -> None:
    apps.get_model("reflection", "TraitDecayRate").objects.filter(
        trait_subtype=DEFAULT_KEY
    ).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("reflection", "0006_admin_list_indexes"),
        ("memories", "0017_job_runs_to_core"),
    ]

    operations = [
        migrations.RunPython(default_rate_seed, default_rate_remove),
        migrations.RunSQL(DROP_SQL + VIEW_SQL, DROP_SQL + trait_lifecycle.VIEW_SQL),
        # The view's column in Django's state (an unmanaged model: no database change).
        migrations.AddField(
            model_name="traitdecayed",
            name="embedding",
            field=pgvector.django.halfvec.HalfVectorField(
                dimensions=settings.EMBEDDING_DIM, null=True
            ),
        ),
    ]
