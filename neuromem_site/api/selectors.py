from neuromem_site.api.models import ApiClient
from neuromem_site.api.services import token_hash


def api_client_by_token(*, token: str) -> ApiClient | None:
    # Every request asks this; raw SQL, since compiling the ORM's query costs more than
    # running it (docs/benchmarks.md, "Recall").
    clients = ApiClient.objects.raw(
        "SELECT * FROM api_clients WHERE token_hash = %s AND is_active", [token_hash(token)]
    )
    return next(iter(clients), None)
