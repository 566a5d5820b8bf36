from neuromem_site.api.models import ApiClient
from neuromem_site.api.services import token_hash


def api_client_by_token(*, token: str) -> ApiClient | None:
    """The active client holding `token`, with `guards_on`: whether one of its agents has its
    runtime guard on (the guardrail's gate has nothing to look up for a client with none)."""
    # Every request asks this; raw SQL, since compiling the ORM's query costs more than
    # running it (docs/benchmarks.md, "Recall").
    clients = ApiClient.objects.raw(
        """
        SELECT c.*,
               EXISTS (SELECT 1 FROM agents a WHERE a.client_id = c.id AND a.guard_enabled)
                   AS guards_on
        FROM api_clients c WHERE c.token_hash = %s AND c.is_active
        """,
        [token_hash(token)],
    )
    return next(iter(clients), None)
