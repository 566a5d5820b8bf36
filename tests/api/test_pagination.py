"""Cursor pagination: a cursor the server did not give is a 400 on `cursor`, never a 404 or 500."""

from base64 import b64encode

import pytest

pytestmark = pytest.mark.django_db


def forged(querystring: str) -> str:
    return b64encode(querystring.encode()).decode()


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
    cursor = first["page"]["next"]
    second = agent.get(f"/api/v1/memories/?user_id=agent:1&limit=2&sort_by=score&cursor={cursor}")
    assert second.status_code == 200
    assert len(first["data"]) + len(second.json()["data"]) == 3


@pytest.mark.parametrize(
    ("sort_by", "cursor"),
    [
        ("created_at", "not-a-cursor"),  # not base64
        ("created_at", "%C3%A9t%C3%A9"),  # not ASCII
        ("created_at", forged("o=-1")),  # negative offset
        ("created_at", forged("r=maybe")),
        ("created_at", forged("p=yesterday")),  # a position that is no timestamp
        ("score", forged("p=high")),  # ... no number: the filter would crash
        ("importance", forged("o=1&p=1e400x")),
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
