"""The isolation suite: a client reaches only the end users under its prefixes, whichever part
of the request (URL path, query string, body) names the user, and whatever it cites."""

import pytest

from memories.models import ConversationSession, Memory, MemorySource

pytestmark = pytest.mark.django_db

VICTIM = "a:victim"


@pytest.fixture
def tenants(make_client):
    """Client `a` with one memory and one session for a:victim; client `b` (prefix b:)."""
    a, _ = make_client("a", ["a:"])
    b, _ = make_client("b", ["b:"])
    memory = a.post(
        "/api/v1/memories/",
        {"user_id": VICTIM, "content": "Victim likes green tea", "memory_type": "fact"},
        format="json",
    ).json()["data"]["memory"]
    session = a.post("/api/v1/sessions/", {"user_id": VICTIM}, format="json").json()["data"]
    return a, b, memory, session


def victim_rows() -> tuple[list, int]:
    return (
        list(Memory.objects.filter(user_id=VICTIM).values_list("id", "content", "version")),
        ConversationSession.objects.filter(user_id=VICTIM).count(),
    )


def assert_error(response, status: int, code: str, field: str | None = None) -> None:
    assert response.status_code == status, response.content
    error = response.json()["error"]
    assert error["code"] == code
    if field is not None:
        assert error["field"] == field


WRITES = [
    ("/api/v1/memories/", {"content": "Victim likes green tea", "memory_type": "fact"}),
    ("/api/v1/memories/", {"content": "Victim likes green tea!", "memory_type": "fact"}),
    ("/api/v1/sessions/", {}),
]


@pytest.mark.parametrize(("url", "body"), WRITES)
def test_a_write_for_another_clients_user_is_rejected_whatever_the_query_says(tenants, url, body):
    _, b, _, _ = tenants
    before = victim_rows()
    # The attack that worked: the check read the query string, the service the body.
    assert_error(
        b.post(f"{url}?user_id=b:x", {**body, "user_id": VICTIM}, format="json"),
        400,
        "VALIDATION_ERROR",
        "user_id",
    )
    assert_error(b.post(url, {**body, "user_id": VICTIM}, format="json"), 403, "FORBIDDEN")
    assert_error(
        b.post(f"{url}?user_id={VICTIM}", {**body, "user_id": "b:x"}, format="json"),
        400,
        "VALIDATION_ERROR",
        "user_id",
    )
    assert victim_rows() == before
    assert not Memory.objects.filter(user_id="b:x").exists()


@pytest.mark.parametrize(("url", "body"), WRITES)
def test_an_agreeing_query_string_is_accepted(tenants, url, body):
    _, b, _, _ = tenants
    response = b.post(f"{url}?user_id=b:x", {**body, "user_id": "b:x"}, format="json")
    assert response.status_code == 201, response.content


def test_a_batch_item_for_another_clients_user_fails_alone(tenants):
    _, b, _, _ = tenants
    before = victim_rows()
    items = [
        {"user_id": VICTIM, "content": "Victim likes green tea", "memory_type": "fact"},
        {"user_id": "b:x", "content": "b's own memory", "memory_type": "fact"},
    ]
    results = b.post("/api/v1/memories/batch/", {"items": items}, format="json").json()["data"]
    assert results["results"][0]["error"]["code"] == "FORBIDDEN"
    assert results["results"][1]["ok"] is True
    mixed = b.post("/api/v1/memories/batch/?user_id=b:x", {"items": items}, format="json")
    first, second = mixed.json()["data"]["results"]
    assert first["error"]["field"] == "user_id" and second["operation"] == "NOOP"
    assert victim_rows() == before


@pytest.mark.parametrize(
    "request_of",
    [
        lambda http: http.get(f"/api/v1/memories/?user_id={VICTIM}"),
        lambda http: http.get(f"/api/v1/users/{VICTIM}/export/"),
        lambda http: http.post(
            "/api/v1/recall/", {"user_id": VICTIM, "query": "green tea"}, format="json"
        ),
        lambda http: http.get(f"/api/v1/search/?user_id={VICTIM}&q=tea"),
        lambda http: http.get(f"/api/v1/search/scored/?user_id={VICTIM}&q=tea"),
    ],
)
def test_reads_of_another_clients_user_are_not_found(tenants, request_of):
    _, b, _, _ = tenants
    assert_error(request_of(b), 404, "NOT_FOUND")


@pytest.mark.parametrize(
    "request_of",
    [
        lambda http: http.get(f"/api/v1/users/b:x/export/?user_id={VICTIM}"),
        lambda http: http.get(f"/api/v1/users/{VICTIM}/export/?user_id=b:x"),
        lambda http: http.delete(f"/api/v1/users/b:x/?user_id={VICTIM}"),
        lambda http: http.delete(f"/api/v1/users/{VICTIM}/?user_id=b:x"),
        lambda http: http.post(
            "/api/v1/recall/?user_id=b:x", {"user_id": VICTIM, "query": "tea"}, format="json"
        ),
        lambda http: http.post(
            f"/api/v1/recall/?user_id={VICTIM}", {"user_id": "b:x", "query": "tea"}, format="json"
        ),
    ],
)
def test_two_different_user_ids_in_one_request_are_a_validation_error(tenants, request_of):
    _, b, _, _ = tenants
    before = victim_rows()
    assert_error(request_of(b), 400, "VALIDATION_ERROR", "user_id")
    assert victim_rows() == before


def test_purging_another_clients_user_is_forbidden(tenants):
    _, b, _, _ = tenants
    before = victim_rows()
    assert_error(b.delete(f"/api/v1/users/{VICTIM}/"), 403, "FORBIDDEN")
    assert victim_rows() == before


@pytest.mark.parametrize("field", ["session_id", "source_episode_ids"])
def test_a_memory_cannot_cite_another_users_session(tenants, field):
    _, b, _, session = tenants
    value = session["id"] if field == "session_id" else [session["id"]]
    response = b.post(
        "/api/v1/memories/",
        {"user_id": "b:x", "content": "b cites a", "memory_type": "fact", field: value},
        format="json",
    )
    assert_error(response, 400, "VALIDATION_ERROR", field)
    assert not Memory.objects.filter(user_id="b:x").exists()
    assert not MemorySource.objects.filter(session_id=session["id"]).exists()


def test_a_memory_cannot_cite_another_users_memory_as_an_episode(tenants):
    _, b, memory, _ = tenants
    response = b.post(
        "/api/v1/memories/",
        {
            "user_id": "b:x",
            "content": "b cites a's memory",
            "memory_type": "fact",
            "source_episode_ids": [memory["id"]],
        },
        format="json",
    )
    assert_error(response, 400, "VALIDATION_ERROR", "source_episode_ids")


def test_a_memory_may_cite_its_own_users_session_and_episodes(tenants):
    a, _, memory, session = tenants
    response = a.post(
        "/api/v1/memories/",
        {
            "user_id": VICTIM,
            "content": "Victim visited Lisbon",
            "memory_type": "episodic",
            "session_id": session["id"],
            "source_episode_ids": [memory["id"]],
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    assert MemorySource.objects.filter(session_id=session["id"]).count() == 1


def test_a_user_id_must_be_a_string(tenants):
    _, b, _, _ = tenants
    response = b.post(
        "/api/v1/memories/", {"user_id": 7, "content": "x", "memory_type": "fact"}, format="json"
    )
    assert_error(response, 400, "VALIDATION_ERROR", "user_id")
