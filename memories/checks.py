from django.conf import settings
from django.core.checks import Error, register
from django.db import connections


@register("database")
def embedding_dimension_check(app_configs, databases=None, **kwargs) -> list[Error]:
    """EMBEDDING_DIM must match the column: changing it is `manage.py embeddings_rebuild`
    (docs/schema.md)."""
    errors = []
    for alias in databases or []:
        with connections[alias].cursor() as cursor:
            cursor.execute(
                "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                "WHERE attrelid = to_regclass('memories') AND attname = 'embedding'"
            )
            row = cursor.fetchone()
        expected = f"halfvec({settings.EMBEDDING_DIM})"
        if row and row[0] != expected:
            errors.append(
                Error(
                    f"memories.embedding is {row[0]} but EMBEDDING_DIM={settings.EMBEDDING_DIM}.",
                    hint="Run `manage.py embeddings_rebuild` (make manage "
                    'ARGS="embeddings_rebuild") to re-embed every memory at this dimension, '
                    "or set EMBEDDING_DIM back to the stored one (docs/schema.md, "
                    "'Changing EMBEDDING_DIM').",
                    id="memories.E001",
                )
            )
    return errors


@register()
def redaction_kinds_check(app_configs, **kwargs) -> list[Error]:
    """REDACTION_DISABLED_KINDS names kinds that exist (a typo would leave a kind on)."""
    from memories.redaction import KINDS

    unknown = sorted(set(settings.REDACTION_DISABLED_KINDS) - set(KINDS))
    if not unknown:
        return []
    return [
        Error(
            f"REDACTION_DISABLED_KINDS names unknown kind(s): {', '.join(unknown)}.",
            hint=f"Known kinds: {', '.join(KINDS)}.",
            id="memories.E002",
        )
    ]
