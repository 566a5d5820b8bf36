"""A client sees and writes only end users under its prefixes (API.md, Auth)."""

import pytest

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.api.urls")]


def test_write_inside_the_prefix_is_allowed(make_client):
    http, _ = make_client("a", ["tenant-a:"])
    response = http.post(
        "/api/v1/test/scoped/", {"user_id": "tenant-a:42", "content": "hi"}, format="json"
    )
    assert response.status_code == 201


def test_write_outside_the_prefix_is_forbidden(make_client):
    http, _ = make_client("a", ["tenant-a:"])
    response = http.post(
        "/api/v1/test/scoped/", {"user_id": "tenant-b:42", "content": "hi"}, format="json"
    )
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "FORBIDDEN"


@pytest.mark.parametrize(
    "url", ["/api/v1/test/users/tenant-b:42/", "/api/v1/test/scoped/?user_id=tenant-b:42"]
)
def test_read_outside_the_prefix_is_not_found(make_client, url):
    http, _ = make_client("a", ["tenant-a:"])
    response = http.get(url)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"


def test_any_of_several_prefixes_matches(make_client):
    http, _ = make_client("a", ["tenant-a:", "shared:"])
    assert http.get("/api/v1/test/users/shared:7/").status_code == 200
    assert http.get("/api/v1/test/users/tenant-a:7/").status_code == 200
    assert http.get("/api/v1/test/users/tenant-c:7/").status_code == 404


def test_prefix_is_a_prefix_not_a_substring(make_client):
    http, _ = make_client("a", ["tenant-a:"])
    assert http.get("/api/v1/test/users/x-tenant-a:7/").status_code == 404


def test_staff_clients_see_every_user(make_client):
    http, _ = make_client("ops", staff=True)
    assert http.get("/api/v1/test/users/anyone/").status_code == 200
    response = http.post(
        "/api/v1/test/scoped/", {"user_id": "tenant-z:1", "content": "hi"}, format="json"
    )
    assert response.status_code == 201
