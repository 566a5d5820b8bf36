from django.conf import settings
from django.db import connection

from core.db.cursors import psycopg_cursor, row_loader
from neuromem_site.api.models import ApiClient
from neuromem_site.api.services import token_hash

_FIELDS = ApiClient._meta.concrete_fields
_BY_TOKEN_SQL = f"""
    SELECT {", ".join(f'c."{field.column}"' for field in _FIELDS)},
           EXISTS (SELECT 1 FROM agents a WHERE a.client_id = c.id AND a.guard_enabled)
    FROM api_clients c WHERE c.token_hash = %s AND c.is_active
"""
_load_client = row_loader(ApiClient, _FIELDS)


def api_client_by_token(*, token: str) -> ApiClient | None:
    """The active client holding `token`, with `guards_on`: whether one of its agents has its
    runtime guard on (the guardrail's gate has nothing to look up for a client with none)."""
    # Every request asks this: prepared, on psycopg's cursor, since compiling and planning it
    # cost more than running it (docs/benchmarks.md, "What the HTTP layer costs").
    with psycopg_cursor(connection) as cursor:
        cursor.execute(
            _BY_TOKEN_SQL, [token_hash(token)], prepare=settings.DATABASE_PREPARED_STATEMENTS
        )
        row = cursor.fetchone()
    if row is None:
        return None
    *values, guards_on = row
    client = _load_client(values)
    client.guards_on = guards_on
    return client
