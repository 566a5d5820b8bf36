"""Cursor pagination: a cursor the server did not give is a 400 on `cursor`, never a 404 or 500."""

from base64 import b64encode
from urllib.parse import quote

import pytest

from neuromem_site.api.pagination import CURSOR_SIGNER

pytestmark = pytest.mark.django_db


def forged(querystring: str) -> str:
    """A cursor as DRF writes one, unsigned."""
    return b64encode(querystring.encode()).decode()


def signed(querystring: str) -> str:
    """... signed as the server signs them (a bug of our own, or a leaked key)."""
    return quote(CURSOR_SIGNER.sign(forged(querystring)))


@pytest.fixture
def agent(make_client):
    http, _ = make_client("agent", ["agent:"])
    for n in range(3):
        response = http.post(
            "/api/v1/memories/",
            {"user_id": "agent:1", "content": f"memory number {n}", "memory_type": "fact"},
            format="json",
        )
        assert response.status_code == 201
    return http


def test_the_cursor_given_pages_on(agent):
    first = agent.get("/api/v1/memories/?user_id=agent:1&limit=2&sort_by=score").json()
    cursor = quote(first["page"]["next"])
    second = agent.get(f"/api/v1/memories/?user_id=agent:1&limit=2&sort_by=score&cursor={cursor}")
    assert second.status_code == 200
    assert len(first["data"]) + len(second.json()["data"]) == 3
    # Its signature checked: changed by one character, it is refused.
    tampered = cursor[:-1] + ("A" if cursor[-1] != "A" else "B")
    response = agent.get(f"/api/v1/memories/?user_id=agent:1&sort_by=score&cursor={tampered}")
    assert response.json()["error"]["field"] == "cursor"


@pytest.mark.parametrize(
    ("sort_by", "cursor"),
    [
        ("created_at", "not-a-cursor"),  # not base64
        ("created_at", "%C3%A9t%C3%A9"),  # not ASCII
        ("created_at", ""),  # empty: not the first page
        ("created_at", "%00"),
        ("created_at", forged("p=2024")),  # well formed, but not given by the server
        ("created_at", forged("o=-1")),
        ("created_at", signed("o=-1")),  # negative offset
        ("created_at", signed("r=maybe")),
        ("created_at", signed("p=yesterday")),  # a position that is no timestamp
        ("score", signed("p=high")),  # ... no number: the filter would crash
        ("importance", signed("o=1&p=1e400x")),
    ],
)
def test_a_bogus_cursor_is_a_validation_error_on_cursor(agent, sort_by, cursor):
    response = agent.get(f"/api/v1/memories/?user_id=agent:1&sort_by={sort_by}&cursor={cursor}")
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["field"]) == ("VALIDATION_ERROR", "cursor")


@pytest.mark.urls("tests.api.urls")
def test_a_bogus_cursor_on_a_generic_list_view(make_client):
    http, _ = make_client("agent")
    response = http.get("/api/v1/test/clients/?cursor=bogus")
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "cursor"


@pytest.mark.parametrize("limit", ["1_0", " 5", "5 ", "٥", "５", "+5", "5.0", "9" * 5000])
def test_a_limit_is_ascii_digits(agent, limit):
    response = agent.get("/api/v1/memories/", {"user_id": "agent:1", "limit": limit})
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["field"], error["message"]) == ("limit", "'limit' must be an integer.")
