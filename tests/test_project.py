"""Project-wide guarantees: migrations match the models, the OpenAPI schema is valid and true."""

import io
from pathlib import Path

import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_models_and_migrations_agree():
    call_command("makemigrations", "--check", "--dry-run", stdout=io.StringIO())


def test_runs_on_postgresql_with_pgvector(django_db_blocker):
    from django.db import connection

    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute("SELECT default_version FROM pg_available_extensions WHERE name = 'vector'")
        (version,) = cursor.fetchone()
    assert connection.vendor == "postgresql"
    assert tuple(int(part) for part in version.split(".")[:2]) >= (0, 7)


def test_openapi_schema_validates_and_docs_copy_is_current(tmp_path):
    generated = tmp_path / "openapi.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(generated))
    committed = Path(__file__).resolve().parent.parent / "docs" / "openapi.yaml"
    assert generated.read_text() == committed.read_text(), "run `make schema` and commit"


@pytest.mark.django_db
def test_schema_and_docs_are_served(anon):
    schema = anon.get("/api/schema/?format=json")
    assert schema.status_code == 200
    spec = schema.json()
    health = spec["paths"]["/api/v1/health/"]["get"]["responses"]["200"]
    body = health["content"]["application/json"]["schema"]
    assert set(body["properties"]) == {"ok", "data"}
    assert "ErrorEnvelope" in spec["components"]["schemas"]
    docs = anon.get("/api/docs/")
    assert docs.status_code == 200
    assert b"swagger-ui" in docs.content
    assert b"cdn.jsdelivr" not in docs.content


@pytest.mark.django_db
def test_admin_login_page_is_reachable(anon):
    response = anon.get("/admin/login/")
    assert response.status_code == 200
    assert b"NeuroMem administration" in response.content


@pytest.mark.django_db
def test_admin_names_the_api_app_and_its_clients(client, django_user_model):
    admin = django_user_model.objects.create_superuser("root", "root@example.com", "pw")
    client.force_login(admin)
    page = client.get("/admin/").content.decode()
    assert "API clients" in page
    assert "Api clients" not in page
    assert client.get("/admin/api/apiclient/").status_code == 200
