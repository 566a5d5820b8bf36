from neuromem_site.api.models import ApiClient
from neuromem_site.api.services import token_hash


def api_client_by_token(*, token: str) -> ApiClient | None:
    return ApiClient.objects.filter(token_hash=token_hash(token), is_active=True).first()
