import pytest
from rest_framework.test import APIClient

from core.redis_client import app_redis
from memories.common_names import CACHE_PATTERN
from neuromem_site.api.models import ApiClient
from neuromem_site.api.services import api_client_create


@pytest.fixture(autouse=True)
def _plain_static_storage(settings):
    # The manifest storage needs `collectstatic`; tests render admin pages without it.
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }


@pytest.fixture(autouse=True)
def _no_cached_common_names():
    # Recall caches per user whether a name is common among their memories; tests reuse user
    # ids over a database emptied after each test.
    yield
    keys = list(app_redis().scan_iter(CACHE_PATTERN))
    if keys:
        app_redis().delete(*keys)


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
