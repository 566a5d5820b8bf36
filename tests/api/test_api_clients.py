"""`create_api_client`, token storage and lookup, and revocation."""

import io

import pytest
from django.core.management import CommandError, call_command
from django.db import IntegrityError
from rest_framework.test import APIClient

from evolution.models import Agent
from neuromem_site.api.models import ApiClient
from neuromem_site.api.selectors import api_client_by_token
from tests.connections import on_a_connection_of_its_own, prepared_statements

pytestmark = pytest.mark.django_db


def create(*args: str) -> str:
    out = io.StringIO()
    call_command("create_api_client", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue().strip()


def whoami(token: str):
    return APIClient().get("/api/v1/auth/whoami/", HTTP_AUTHORIZATION=f"Bearer {token}")


def test_command_prints_a_working_token_once_and_stores_only_its_hash():
    token = create("agent-1", "--user-prefix", "t1:", "--user-prefix", "t2:")
    client = ApiClient.objects.get(name="agent-1")
    assert token.startswith("nm_") and len(token) > 40
    assert token not in (client.token_hash, client.token_hint)
    assert client.user_prefixes == ["t1:", "t2:"]
    response = whoami(token)
    assert response.status_code == 200
    assert response.json()["data"]["user_prefixes"] == ["t1:", "t2:"]


def test_without_a_prefix_a_client_gets_its_own_name_as_prefix():
    create("agent-2")
    assert ApiClient.objects.get(name="agent-2").user_prefixes == ["agent-2:"]


def test_staff_flag():
    token = create("ops", "--staff")
    assert whoami(token).json()["data"]["is_staff"] is True


def test_duplicate_name_is_a_clear_command_error():
    create("agent-3")
    with pytest.raises(CommandError, match="Name already exists"):
        create("agent-3")
    assert ApiClient.objects.filter(name="agent-3").count() == 1


def test_revoked_client_is_unauthorized():
    token = create("agent-4")
    ApiClient.objects.filter(name="agent-4").update(is_active=False)
    response = whoami(token)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "UNAUTHORIZED"


def test_database_refuses_a_non_staff_client_without_prefixes():
    with pytest.raises(IntegrityError, match="api_client_staff_or_prefixed"):
        ApiClient.objects.create(name="nobody", token_hash="x" * 64, user_prefixes=[])


def test_last_used_at_is_recorded():
    token = create("agent-5")
    assert ApiClient.objects.get(name="agent-5").last_used_at is None
    whoami(token)
    assert ApiClient.objects.get(name="agent-5").last_used_at is not None


def token_lookup_statements() -> int:
    """How many statements this connection holds prepared for the token lookup."""
    return sum("FROM api_clients c WHERE c.token_hash" in s for s in prepared_statements())


@pytest.mark.django_db(transaction=True)  # the lookups run on connections of their own
def test_the_token_lookup_loads_the_client_as_stored_prepared_only_when_allowed(settings):
    token = create("agent-6", "--user-prefix", "t6:")
    stored = ApiClient.objects.get(name="agent-6")
    columns = [field.attname for field in ApiClient._meta.concrete_fields]

    def looked_up() -> tuple[dict, bool, int]:
        client = api_client_by_token(token=token)
        return (
            {name: getattr(client, name) for name in columns},
            client.guards_on,
            token_lookup_statements(),
        )

    settings.DATABASE_PREPARED_STATEMENTS = False
    loaded, guards_on, prepared = on_a_connection_of_its_own(looked_up)
    assert loaded == {name: getattr(stored, name) for name in columns}
    assert (guards_on, prepared) == (False, 0)
    settings.DATABASE_PREPARED_STATEMENTS = True
    Agent.objects.create(name="guarded", client=stored, guard_enabled=True)

    def guarded_then_revoked() -> tuple[bool, int, int, int]:
        guards_on = api_client_by_token(token=token).guards_on
        allowed = whoami(token).status_code
        ApiClient.objects.filter(pk=stored.pk).update(is_active=False)
        return guards_on, allowed, whoami(token).status_code, token_lookup_statements()

    assert on_a_connection_of_its_own(guarded_then_revoked) == (True, 200, 401, 1)
