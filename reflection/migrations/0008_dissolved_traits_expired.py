"""A dissolved trait is expired (seed 002 §5.2: `trait_stage = 'dissolved', expired_at =
NOW()`); until now dissolving set `invalid_at` only. Traits dissolved before get `expired_at`
where they have none: when they were dissolved (`invalid_at`, which dissolving set), else their
last change, never before they were recorded. Their `invalid_at` stays as it was. The audit
trigger logs each as a DELETE (actor `system`), as it does any memory that expires.

Backwards: nothing, on purpose. The rows this migration expired cannot be told from traits
expired otherwise (dissolved since by the new code, deleted or superseded by a client), so
clearing `expired_at` would bring those back into every read of current and latest memories;
and it is not needed: a trait dissolved before this migration kept its `invalid_at`, which is
what kept it out of current reads then.
"""

from django.db import migrations

EXPIRE_SQL = """
UPDATE memories t
SET expired_at = greatest(t.created_at, coalesce(t.invalid_at, t.updated_at, now()))
WHERE t.memory_type = 'trait'
  AND coalesce(t.trait_stage, t.metadata->>'trait_stage') = 'dissolved'
  AND t.expired_at IS NULL
"""


class Migration(migrations.Migration):
    dependencies = [("reflection", "0007_trait_view_embedding")]

    operations = [migrations.RunSQL(EXPIRE_SQL, migrations.RunSQL.noop)]
