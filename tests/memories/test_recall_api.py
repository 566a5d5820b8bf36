"""/recall/, /search/ and /search/scored/ through HTTP: shapes, validation, the prefix rule."""

import pytest
from django.db import connection

from core.access import Caller
from memories.models import Memory
from memories.services import MemoryInput, memories_embed, memory_add_many
from reflection.services.maintenance import (
    trait_view_create,
    trait_view_drop,
    trait_view_refresh,
)
from tests.connections import on_a_connection_of_its_own, prepared_statements

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent(make_client):
    return make_client("agent", ["agent:"])[0]


def remember(user_id: str, *contents: str, **fields) -> None:
    results = memory_add_many(
        items=[
            MemoryInput(user_id=user_id, content=c, memory_type="fact", **fields) for c in contents
        ],
        caller=Caller(name="test", is_staff=True),
    )
    memories_embed(memory_ids=[result.memory.id for result in results])


def remember_trait(user_id: str, content: str) -> None:
    """An established preference, believed (confidence 0.9) once the decay view is refreshed."""
    metadata = {"trait_stage": "established", "trait_subtype": "preference", "confidence": 0.9}
    memory_add_many(
        items=[
            MemoryInput(user_id=user_id, content=content, memory_type="trait", metadata=metadata)
        ],
        caller=Caller(name="test", is_staff=True),
    )


def recall(http, **body):
    return http.post("/api/v1/recall/", {"user_id": "agent:1", **body}, format="json")


def test_recall_answers_merged_with_the_score_parts(agent):  # TC-C04
    remember("agent:1", "I like green tea", "My brother lives in Oslo", importance=0.6)
    Memory.objects.filter(user_id="agent:1").update(score=80)
    response = recall(agent, query="green tea")
    assert response.status_code == 200, response.json()
    data = response.json()["data"]
    assert set(data) == {"fields", "merged", "traits"} and data["fields"] == "full"
    [hit] = data["merged"]
    assert hit["content"] == "I like green tea"
    assert (hit["vector_rank"], hit["text_rank"]) == (1, 1)
    assert hit["rrf_score"] == pytest.approx(2 / 61)
    assert set(hit["boosts"]) == {"recency", "importance", "trait_stage"}
    assert hit["boosts"]["importance"] == pytest.approx(0.09)
    assert hit["score"] == pytest.approx(
        hit["rrf_score"] * (1 + sum(hit["boosts"].values())), rel=1e-6
    )
    assert hit["activity_score"] == 80 and hit["state"] == "active"


def test_recall_answers_compactly_for_prompts(agent):
    remember("agent:1", "I like green tea", "My brother lives in Oslo")
    data = recall(agent, query="green tea", fields="compact").json()["data"]
    assert data["fields"] == "compact"
    [hit] = data["merged"]
    assert set(hit) == {"id", "content", "memory_type", "valid_at", "score"}
    assert (hit["content"], hit["memory_type"]) == ("I like green tea", "fact")
    assert hit["score"] > 0 and hit["valid_at"]
    full = recall(agent, query="green tea").json()["data"]["merged"]
    assert [h["id"] for h in full] == [hit["id"]]
    assert full[0]["score"] == pytest.approx(hit["score"])  # recency moves between the two


def test_recall_lists_the_users_believed_traits(agent):
    remember_trait("agent:1", "Prefers green tea in the afternoon")
    # Believed traits come from the decay view: a trait appears once it is refreshed.
    assert recall(agent, query="anything at all").json()["data"]["traits"] == []
    trait_view_refresh()
    data = recall(agent, query="anything at all").json()["data"]
    assert [trait["content"] for trait in data["traits"]] == ["Prefers green tea in the afternoon"]
    assert data["traits"][0]["trait"]["stage"] == "established"
    assert data["traits"][0]["trait"]["decayed_confidence"] == pytest.approx(0.9, abs=1e-4)
    assert recall(agent, query="x", include_traits=False).json()["data"]["traits"] == []


def believed_traits_prepared() -> tuple[int, int]:
    """How many times this connection ran the believed traits' statement prepared: with a
    generic plan, and with a plan made for the run."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(sum(generic_plans), 0), coalesce(sum(custom_plans), 0)"
            " FROM pg_prepared_statements WHERE statement LIKE '%%FROM mv_trait_decayed d%%'"
        )
        return cursor.fetchone()


@pytest.mark.django_db(transaction=True)  # the view is made again by another connection
def test_the_believed_traits_statement_is_planned_once_and_outlives_the_views_rebuild(
    agent, settings
):
    """Every recall reads the believed traits: prepared (DATABASE_PREPARED_STATEMENTS), a
    connection plans the statement once, and the same statement answers once the view is
    dropped and made again elsewhere (as an embedding rebuild does)."""
    remember_trait("agent:1", "Prefers green tea in the afternoon")
    trait_view_refresh()
    believed = ["Prefers green tea in the afternoon"]

    def traits() -> list[str]:
        return [trait["content"] for trait in recall(agent, query="tea").json()["data"]["traits"]]

    settings.DATABASE_PREPARED_STATEMENTS = False
    assert traits() == believed
    assert believed_traits_prepared() == (0, 0)
    settings.DATABASE_PREPARED_STATEMENTS = True
    assert [traits() for _ in range(7)] == [believed] * 7
    generic, custom = believed_traits_prepared()
    assert generic + custom == 7 and generic >= 1

    def rebuilt() -> None:
        trait_view_drop()
        trait_view_create()

    on_a_connection_of_its_own(rebuilt)
    assert traits() == believed
    assert sum(believed_traits_prepared()) == 8  # the same statement, planned again


@pytest.mark.django_db(transaction=True)  # each recall on a connection of its own
def test_a_recall_prepares_its_statements_only_when_allowed(agent, settings):
    """The token's lookup, the user's entities and the believed traits (the search's own
    conditions: tests/memories/test_user_indexes.py); none behind a pooler that keeps no
    prepared statements (DATABASE_PREPARED_STATEMENTS off)."""
    remember("agent:1", "My sister Aoife teaches in Galway")

    def recalled_then_prepared() -> tuple[list[str], list[str]]:
        response = recall(agent, query="What does Aoife teach?")
        assert response.status_code == 200, response.json()
        hits = [hit["content"] for hit in response.json()["data"]["merged"]]
        return hits, prepared_statements()

    settings.DATABASE_PREPARED_STATEMENTS = False
    hits, prepared = on_a_connection_of_its_own(recalled_then_prepared)
    assert (hits, prepared) == (["My sister Aoife teaches in Galway"], [])
    settings.DATABASE_PREPARED_STATEMENTS = True
    hits, prepared = on_a_connection_of_its_own(recalled_then_prepared)
    assert hits == ["My sister Aoife teaches in Galway"]
    for read in ("FROM api_clients c", "FROM graph_nodes", "mv_trait_decayed"):
        assert sum(read in statement for statement in prepared) == 1, (read, prepared)


def test_search_result_format(agent):  # TC-R04, TC-C02
    remember("agent:1", "test memory one", "test memory two")
    response = agent.get("/api/v1/search/", {"user_id": "agent:1", "q": "test", "limit": 5})
    assert response.status_code == 200
    hits = response.json()["data"]
    assert len(hits) == 2
    assert all(set(hit) == {"id", "content", "memory_type", "metadata", "score"} for hit in hits)


def test_scored_search_result_format(agent):  # TC-R05, TC-C03
    remember("agent:1", "test memory one", "test memory two")
    hits = agent.get("/api/v1/search/scored/", {"user_id": "agent:1", "q": "test"}).json()["data"]
    assert len(hits) == 2
    for hit in hits:
        assert {"relevance", "recency", "importance", "score"} <= set(hit)
        assert hit["score"] == pytest.approx(
            hit["relevance"] * (1 + hit["recency"] + hit["importance"]), rel=1e-6
        )


def test_search_filters_by_memory_type(agent):
    remember("agent:1", "jazz music")
    hits = agent.get(
        "/api/v1/search/", {"user_id": "agent:1", "q": "jazz", "memory_type": "episodic"}
    ).json()["data"]
    assert hits == []


def test_a_client_never_recalls_another_clients_users(make_client):
    alpha, _ = make_client("alpha", ["alpha:"])
    beta, _ = make_client("beta", ["beta:"])
    remember("alpha:1", "My locker is by the east door")
    remember("beta:1", "My locker is by the pool")
    outside = beta.post("/api/v1/recall/", {"user_id": "alpha:1", "query": "locker"}, format="json")
    assert outside.status_code == 404 and outside.json()["error"]["code"] == "NOT_FOUND"
    assert beta.get("/api/v1/search/", {"user_id": "alpha:1", "q": "locker"}).status_code == 404
    own = beta.post("/api/v1/recall/", {"user_id": "beta:1", "query": "locker"}, format="json")
    assert [hit["content"] for hit in own.json()["data"]["merged"]] == ["My locker is by the pool"]
    mine = alpha.post("/api/v1/recall/", {"user_id": "alpha:1", "query": "locker"}, format="json")
    assert [hit["content"] for hit in mine.json()["data"]["merged"]] == [
        "My locker is by the east door"
    ]


@pytest.mark.parametrize(
    ("body", "field", "extra"),
    [
        ({"limit": 0}, "limit", {"minAllowed": 1, "maxAllowed": 100, "provided": 0}),
        ({"limit": 101}, "limit", {"minAllowed": 1, "maxAllowed": 100, "provided": 101}),
        ({"memory_types": ["bogus"]}, "memory_types[0]", {}),
        ({"memory_types": []}, "memory_types", {}),
        ({"as_of": "yesterday"}, "as_of", {}),
        ({"domain": "x"}, "domain", {}),
        ({"query": ""}, "query", {}),
        ({"query": "x" * 2001}, "query", {}),
        ({"fields": "tiny"}, "fields", {}),
    ],
)
def test_recall_validation(agent, body, field, extra):
    response = recall(agent, **{"query": "tea", **body})
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["field"]) == ("VALIDATION_ERROR", field)
    assert {key: error[key] for key in extra} == extra


def test_search_needs_q_and_user_id(agent):
    missing_q = agent.get("/api/v1/search/", {"user_id": "agent:1"}).json()["error"]
    assert missing_q["field"] == "q"
    missing_user = agent.get("/api/v1/search/scored/", {"q": "x"}).json()["error"]
    assert missing_user["field"] == "user_id"
