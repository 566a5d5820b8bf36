from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.request import Request

from neuromem_site.api.models import ApiClient
from neuromem_site.api.selectors import api_client_by_token
from neuromem_site.api.services import api_client_touch


class BearerTokenAuthentication(BaseAuthentication):
    """`Authorization: Bearer <token>` → the ApiClient is both request.user and request.auth."""

    def authenticate(self, request: Request) -> tuple[ApiClient, ApiClient] | None:
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() != b"bearer":
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed(
                "Malformed Authorization header: expected 'Bearer <token>'."
            )
        try:
            token = parts[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("Invalid API token.") from None
        client = api_client_by_token(token=token)
        if client is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked API token.")
        api_client_touch(client=client)
        return client, client

    def authenticate_header(self, request: Request) -> str:
        # Having a challenge makes DRF answer 401 (not 403) to unauthenticated requests.
        return 'Bearer realm="neuromem"'
