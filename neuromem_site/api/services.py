import hashlib
import secrets
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from evolution.services import agent_default_create
from neuromem_site.api.models import ApiClient

TOKEN_PREFIX = "nm_"
# last_used_at is informational: refresh it at most this often, not on every request.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@transaction.atomic
def api_client_create(
    *, name: str, user_prefixes: list[str], is_staff: bool = False
) -> tuple[ApiClient, str]:
    """Create a client, with its default agent, and return it with its token; the token is not
    stored and not shown again."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    client = ApiClient(
        name=name,
        token_hash=token_hash(token),
        token_hint=token[:10],
        user_prefixes=user_prefixes,
        is_staff=is_staff,
    )
    client.full_clean()
    client.save()
    agent_default_create(client=client)
    return client, token


def api_client_touch(*, client: ApiClient) -> None:
    now = timezone.now()
    if client.last_used_at is None or now - client.last_used_at > LAST_USED_RESOLUTION:
        ApiClient.objects.filter(pk=client.pk).update(last_used_at=now)
        client.last_used_at = now
