"""`mv_trait_decayed`'s decay bounded, as recall's twin of it (reflection/rules.py
`decayed_sql`) is: the exponent stops at -600, and a trait reinforced after the refresh's
`now()` does not decay (it grew before). A trait whose `last_reinforced` lay far enough back
(a client's metadata, say year 1000) made exp() underflow, an error in SQL, and one such row
failed the refresh for every user; one far ahead made it overflow.

VIEW_SQL is the view's one definition from here on (reflection/services/maintenance.py creates
it again after an embeddings rebuild). Backwards: 0007's view exactly, which fails as it did on
such a trait (it is made with its data): remove or correct the trait first.
"""

import importlib

from django.db import migrations

trait_view_embedding = importlib.import_module("reflection.migrations.0007_trait_view_embedding")

DROP_SQL = trait_view_embedding.DROP_SQL

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
    (t.trait_confidence * exp(-least(
        coalesce(r.base_lambda, d.base_lambda)
          / (1 + coalesce(r.spacing, d.spacing) * coalesce(t.trait_reinforcement_count, 0))
        * greatest(0, extract(epoch FROM (now() - coalesce(t.trait_last_reinforced, t.created_at)))
                      / 86400.0),
        600)))::float8 AS decayed_confidence,
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


class Migration(migrations.Migration):
    dependencies = [("reflection", "0009_graph_contradiction_check")]

    operations = [
        migrations.RunSQL(DROP_SQL + VIEW_SQL, DROP_SQL + trait_view_embedding.VIEW_SQL),
    ]
