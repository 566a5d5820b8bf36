"""A trait's confidence lies from 0 to 1 and its counts are never negative, now checked by the
database as by the write path (memories/traits.py). Traits written before the write path checked
them are brought into range first, in their columns and in the V1 `metadata` keys an edit
parses again: a confidence to its nearest bound, a negative count to 0. The audit trigger
records what it follows (the confidence, the metadata); the counts are bookkeeping it does not.
The repair reads the trait partition only; adding the constraints reads every partition once,
under the table's lock (a few seconds a million memories).

Backwards: the constraints go; the repaired values stay (the values they replaced broke every
read of the trait)."""

from django.db import migrations, models
from django.db.models import Q

REPAIR_SQL = """
UPDATE memories
SET trait_confidence = least(greatest(trait_confidence, 0), 1)
WHERE memory_type = 'trait' AND (trait_confidence < 0 OR trait_confidence > 1);
UPDATE memories
SET trait_reinforcement_count = greatest(trait_reinforcement_count, 0),
    trait_contradiction_count = greatest(trait_contradiction_count, 0)
WHERE memory_type = 'trait' AND (trait_reinforcement_count < 0 OR trait_contradiction_count < 0);
UPDATE memories
SET metadata = metadata || jsonb_build_object(
    'confidence', least(greatest((metadata->>'confidence')::float8, 0), 1))
WHERE memory_type = 'trait' AND jsonb_typeof(metadata->'confidence') = 'number'
  AND (metadata->>'confidence')::float8 NOT BETWEEN 0 AND 1;
UPDATE memories
SET metadata = metadata || jsonb_build_object('reinforcement_count', 0)
WHERE memory_type = 'trait' AND jsonb_typeof(metadata->'reinforcement_count') = 'number'
  AND (metadata->>'reinforcement_count')::float8 < 0;
UPDATE memories
SET metadata = metadata || jsonb_build_object('contradiction_count', 0)
WHERE memory_type = 'trait' AND jsonb_typeof(metadata->'contradiction_count') = 'number'
  AND (metadata->>'contradiction_count')::float8 < 0;
"""


class Migration(migrations.Migration):
    dependencies = [("memories", "0019_conversation_search")]

    operations = [
        migrations.RunSQL(REPAIR_SQL, migrations.RunSQL.noop),
        migrations.AddConstraint(
            model_name="memory",
            constraint=models.CheckConstraint(
                condition=Q(trait_confidence__gte=0, trait_confidence__lte=1),
                name="chk_trait_confidence",
            ),
        ),
        migrations.AddConstraint(
            model_name="memory",
            constraint=models.CheckConstraint(
                condition=Q(trait_reinforcement_count__gte=0, trait_contradiction_count__gte=0),
                name="chk_trait_counts",
            ),
        ),
    ]
