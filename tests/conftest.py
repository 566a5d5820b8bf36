import pytest
from rest_framework.test import APIClient

from neuromem_site.api.models import ApiClient
from neuromem_site.api.services import api_client_create


@pytest.fixture(autouse=True)
def _plain_static_storage(settings):
    # The manifest storage needs `collectstatic`; tests render admin pages without it.
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }


@pytest.fixture
def make_client(db):
    """An HTTP client authenticated as a new ApiClient: make_client("a", ["a:"], staff=False)."""

    def make(
        name: str = "agent", prefixes: list[str] | None = None, *, staff: bool = False
    ) -> tuple[APIClient, ApiClient]:
        client, token = api_client_create(
            name=name,
            user_prefixes=prefixes if prefixes is not None else [f"{name}:"],
            is_staff=staff,
        )
        http = APIClient(raise_request_exception=False)
        http.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        return http, client

    return make


@pytest.fixture
def anon():
    return APIClient(raise_request_exception=False)
