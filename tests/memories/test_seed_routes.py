"""Seed 004's compatibility routes: key addressing, camelCase parameters, the seed's shapes
and errors, served by the same services as /api/v1/."""

import pytest

from memories.models import Memory, MemoryLink

pytestmark = pytest.mark.django_db

USER = "agent:1"


@pytest.fixture
def agent(make_client):
    return make_client("agent", ["agent:"])[0]


def add(http, key: str, text: str, **extra):
    return http.post(
        "/add_memory",
        {"user_id": USER, "key": key, "value": {"text": text}, **extra},
        format="json",
    )


def error(response) -> dict:
    return response.json()["error"]


def test_add_then_get_a_memory_by_key(agent):
    added = add(agent, "project:design", "Design the memory API", value_summary=None)
    assert added.status_code == 400  # unknown field: nothing written
    added = agent.post(
        "/add_memory",
        {
            "user_id": USER,
            "key": "project:design",
            "value": {"text": "Design the memory API", "summary": "API design"},
            "importance": 0.8,
        },
        format="json",
    )
    assert added.status_code == 201, added.json()
    data = added.json()["data"]
    assert data["key"] == "project:design" and data["operation"] == "ADD"
    assert data["value"] == {"text": "Design the memory API", "summary": "API design", "links": []}
    assert (data["meta"]["score"], data["meta"]["state"], data["meta"]["memoryType"]) == (
        50.0,
        "cold",
        "fact",
    )
    fetched = agent.post("/get_memory", {"user_id": USER, "key": "project:design"}, format="json")
    assert fetched.status_code == 200 and fetched.json()["data"]["meta"]["id"] == data["meta"]["id"]


def test_links_are_given_by_key_and_sorted_unless_asked_not_to(agent):
    add(agent, "db", "Postgres holds the rows")
    add(agent, "queue", "Celery runs jobs")
    Memory.objects.filter(key="queue").update(score=90)
    made = add(
        agent,
        "arch",
        "The architecture",
        links=[{"key": "db", "weight": 0.6}, {"key": "queue", "weight": 0.5}],
    )
    assert [link["key"] for link in made.json()["data"]["value"]["links"]] == ["queue", "db"]

    def link_keys(sort_links) -> list[str]:
        body = {"user_id": USER, "key": "arch", "sortLinks": sort_links}
        response = agent.post("/get_memory", body, format="json")
        assert response.status_code == 200, response.json()
        return [link["key"] for link in response.json()["data"]["value"]["links"]]

    assert link_keys(True) == link_keys("true") == ["queue", "db"]
    assert link_keys(False) == link_keys("false") == ["db", "queue"]
    bad = agent.post(
        "/get_memory", {"user_id": USER, "key": "arch", "sortLinks": "x"}, format="json"
    )
    assert bad.status_code == 400 and error(bad)["field"] == "sortLinks"


@pytest.mark.parametrize(
    "route", ["/search?q=espresso", "/fulltext?keywords=espresso"], ids=["search", "fulltext"]
)
def test_search_and_fulltext_hits_carry_links_in_the_seeds_order(agent, route):
    """Seed 004's sortLinks: links by weight × target score, highest first; a tie by weight,
    highest first, then by key; sortLinks=false keeps the order they were made in."""
    scores = {"a": 50, "b": 80, "c": 40, "d": 80, "e": 100}
    for key, score in scores.items():
        add(agent, key, f"Target memory {key}")
        Memory.objects.filter(key=key).update(score=score)
    made_in = ["a", "d", "b", "c", "e"]
    weights = {"a": 0.4, "b": 0.5, "c": 1.0, "d": 0.5, "e": 0.45}
    add(
        agent,
        "hub",
        "espresso machine notes",
        links=[{"key": key, "weight": weights[key]} for key in made_in],
    )

    def hub_link_keys(sort_links: str | None) -> list[str]:
        query = f"{route}&user_id={USER}" + (f"&sortLinks={sort_links}" if sort_links else "")
        response = agent.get(query)
        assert response.status_code == 200, response.json()
        [hub] = [hit for hit in response.json()["data"] if hit["key"] == "hub"]
        return [link["key"] for link in hub["value"]["links"]]

    # Weight × score: e 45, then c, b and d 40 (c by weight, b before d by key), a 20. Neither
    # weight alone (c first), nor score alone (a before c), nor the reverse key order gives it.
    assert hub_link_keys(None) == hub_link_keys("true") == ["e", "c", "b", "d", "a"]
    assert hub_link_keys("false") == made_in


def test_a_link_to_a_missing_key_writes_nothing(agent):
    response = add(agent, "arch", "The architecture", links=[{"key": "nowhere", "weight": 0.5}])
    assert response.status_code == 400 and error(response)["field"] == "links[0].key"
    assert not Memory.objects.exists() and not MemoryLink.objects.exists()


@pytest.mark.parametrize("removed", ["domain", "type"])
def test_removed_fields_are_refused(agent, removed):
    response = add(agent, "k", "text", **{removed: "work"})
    assert response.status_code == 400
    assert (error(response)["code"], error(response)["field"]) == ("VALIDATION_ERROR", removed)
    searched = agent.get(f"/search?user_id={USER}&q=text&{removed}=work")
    assert searched.status_code == 400 and error(searched)["field"] == removed
    assert not Memory.objects.exists()


def test_a_taken_key_conflicts_on_add_and_on_rename(agent):
    add(agent, "one", "The first memory")
    add(agent, "two", "Something else entirely")
    taken = add(agent, "one", "A different text")
    assert taken.status_code == 409 and error(taken)["field"] == "key"
    renamed = agent.post(
        "/update_memory_key", {"user_id": USER, "key": "two", "newKey": "one"}, format="json"
    )
    assert renamed.status_code == 409 and error(renamed)["field"] == "newKey"
    moved = agent.post(
        "/update_memory_key", {"user_id": USER, "key": "two", "newKey": "three"}, format="json"
    )
    assert moved.status_code == 200 and moved.json()["data"]["key"] == "three"
    assert set(Memory.objects.current().values_list("key", flat=True)) == {"one", "three"}


def test_update_memory_makes_a_new_version_that_keeps_the_key_and_links(agent):
    add(agent, "db", "Postgres holds the rows")
    add(agent, "arch", "The architecture", links=[{"key": "db", "weight": 0.6}])
    updated = agent.post(
        "/update_memory",
        {"user_id": USER, "key": "arch", "value": {"text": "The architecture, revised"}},
        format="json",
    )
    assert updated.status_code == 200, updated.json()
    data = updated.json()["data"]
    assert (data["value"]["text"], data["meta"]["version"]) == ("The architecture, revised", 2)
    assert [link["key"] for link in data["value"]["links"]] == ["db"]
    relinked = agent.post(
        "/update_memory", {"user_id": USER, "key": "arch", "links": []}, format="json"
    )
    assert relinked.json()["data"]["value"]["links"] == []
    missing = agent.post(
        "/update_memory", {"user_id": USER, "key": "nope", "importance": 0.2}, format="json"
    )
    assert missing.status_code == 404
    assert error(missing)["message"] == "Memory with key 'nope' not found."


def test_update_memory_changes_the_summary_alone_in_place(agent):
    add(agent, "arch", "The architecture")
    updated = agent.post(
        "/update_memory",
        {"user_id": USER, "key": "arch", "value": {"summary": "Layers"}},
        format="json",
    )
    assert updated.status_code == 200, updated.json()
    data = updated.json()["data"]
    assert data["value"]["text"] == "The architecture"
    assert data["value"]["summary"] == "Layers"
    assert data["meta"]["version"] == 2  # in place: the same memory, its version bumped


def test_search_takes_camel_case_filters(agent):
    add(agent, "hot", "coffee after lunch")
    add(agent, "cold", "coffee is bitter")
    Memory.objects.filter(key="hot").update(score=85)
    Memory.objects.filter(key="cold").update(score=10)

    def searched(query: str) -> list[str]:
        response = agent.get(f"/search?user_id={USER}&q=coffee&{query}")
        assert response.status_code == 200, response.json()
        return [hit["key"] for hit in response.json()["data"]]

    assert searched("") == ["hot"]
    assert searched("includeAllStates=true&sortBy=score&sortOrder=asc") == ["cold", "hot"]
    assert searched("states=deprecated") == ["cold"]
    assert searched("scoreMin=40&scoreMax=95") == ["hot"]
    for query, field in [
        ("scoreMin=80&scoreMax=20", "scoreMin"),
        ("scoreMax=101", "scoreMax"),
        ("states=frozen", "states"),
        ("sortLinks=maybe", "sortLinks"),
    ]:
        response = agent.get(f"/search?user_id={USER}&q=coffee&{query}")
        assert response.status_code == 400 and error(response)["field"] == field, query


def test_fulltext_finds_any_or_all_keywords(agent):
    add(agent, "a", "Tea and coffee in the morning")
    add(agent, "b", "Coffee beans from Kenya")
    add(agent, "c", "我喜欢喝茶")

    def found(query: str) -> list[tuple[str, list[str]]]:
        response = agent.get(f"/fulltext?user_id={USER}&{query}")
        assert response.status_code == 200, response.json()
        return [(hit["key"], hit["matched"]) for hit in response.json()["data"]]

    assert {key for key, _ in found("keywords=tea,kenya")} == {"a", "b"}
    assert found("keywords=tea,coffee&match=all") == [("a", ["coffee", "tea"])]
    assert found("keywords=喝茶") == [("c", ["喝茶"])]
    empty = agent.get(f"/fulltext?user_id={USER}&keywords=,,")
    assert empty.status_code == 400 and error(empty)["field"] == "keywords"
    best_first = found("keywords=coffee,morning")
    assert len(best_first) == 2
    assert found("keywords=coffee,morning&sortOrder=asc") == best_first[::-1]
    too_many = agent.get(f"/fulltext?user_id={USER}&keywords=tea&limit=500")
    assert too_many.status_code == 400
    assert {key: error(too_many)[key] for key in ("field", "minAllowed", "maxAllowed")} == {
        "field": "limit",
        "minAllowed": 1,
        "maxAllowed": 200,
    }


def test_update_memory_to_text_another_key_holds_is_a_conflict_on_the_text(agent):
    add(agent, "k1", "The first")
    add(agent, "k2", "The second")
    response = agent.post(
        "/update_memory",
        {"user_id": USER, "key": "k1", "value": {"text": "The second"}},
        format="json",
    )
    assert response.status_code == 409, response.json()
    assert (error(response)["code"], error(response)["field"]) == ("CONFLICT", "value.text")
    assert sorted(Memory.objects.values_list("key", "content")) == [
        ("k1", "The first"),
        ("k2", "The second"),
    ]


def test_a_memory_linked_to_itself_by_its_key_is_refused_on_the_link(agent):
    add(agent, "k1", "The first")
    for body in ({}, {"value": {"text": "The first, reworded"}}):
        response = agent.post(
            "/update_memory",
            {"user_id": USER, "key": "k1", "links": [{"key": "k1", "weight": 0.5}], **body},
            format="json",
        )
        assert response.status_code == 400, response.json()
        assert error(response)["field"] == "links[0].key"
        assert error(response)["message"] == "A memory cannot link to itself."
    assert list(Memory.objects.values_list("content", "version")) == [("The first", 1)]
    assert not MemoryLink.objects.exists()


def test_bulk_read_by_key_in_the_seed_shape(agent):
    add(agent, "db", "Postgres holds the rows")
    add(agent, "arch", "The architecture", links=[{"key": "db", "weight": 0.85}])
    response = agent.get(f"/api/memories/arch/bulk?user_id={USER}")
    assert response.status_code == 200, response.json()
    data = response.json()["data"]
    assert data["targetMemory"]["key"] == "arch"
    assert data["associatedMemories"][0]["key"] == "db"
    assert data["associatedMemories"][0]["retrievalInfo"] == {
        "depth": 1,
        "weight": 0.85,
        "path": ["arch"],
    }
    assert data["metadata"]["totalRetrieved"] == 1
    too_deep = agent.get(f"/api/memories/arch/bulk?user_id={USER}&depth=10")
    assert too_deep.status_code == 400
    assert {k: error(too_deep)[k] for k in ("code", "field", "maxAllowed", "provided")} == {
        "code": "VALIDATION_ERROR",
        "field": "depth",
        "maxAllowed": 6,
        "provided": 10,
    }
    missing = agent.get(f"/api/memories/non:existent/bulk?user_id={USER}")
    assert missing.status_code == 404
    assert error(missing) == {
        "code": "NOT_FOUND",
        "message": "Memory with key 'non:existent' not found.",
    }


def test_seed_routes_answer_in_the_envelope_and_keep_the_prefix_rule(agent, make_client, anon):
    wrong_method = agent.get("/add_memory")
    assert wrong_method.status_code == 405
    assert wrong_method.json()["error"]["code"] == "METHOD_NOT_ALLOWED"
    broken = agent.post("/add_memory", "{not json", content_type="application/json")
    assert broken.status_code == 400 and broken.json()["ok"] is False
    assert anon.post("/get_memory", {}, format="json").status_code == 401
    add(agent, "mine", "My memory")
    other = make_client("other", ["other:"])[0]
    hidden = other.post("/get_memory", {"user_id": USER, "key": "mine"}, format="json")
    assert hidden.status_code == 404
    written = other.post(
        "/add_memory", {"user_id": USER, "key": "x", "value": {"text": "t"}}, format="json"
    )
    assert written.status_code == 403


@pytest.mark.parametrize("route", ["/add_memory", "/update_memory"])
def test_a_key_linked_twice_is_refused_on_the_second(agent, route):
    add(agent, "tea", "Likes green tea")
    add(agent, "run", "Runs on Sundays")
    body = {
        "user_id": USER,
        "key": "run" if route == "/update_memory" else "new",
        "links": [{"key": "tea", "weight": 0.2}, {"key": "tea", "weight": 0.9}],
    }
    if route == "/add_memory":
        body["value"] = {"text": "Swims"}
    response = agent.post(route, body, format="json")
    assert response.status_code == 400
    assert error(response)["field"] == "links[1].key"
    assert not MemoryLink.objects.exists() and not Memory.objects.filter(key="new").exists()


def test_an_update_that_changes_nothing_keeps_the_version(agent):
    add(agent, "tea", "Likes green tea", importance=0.5)
    add(agent, "run", "Runs on Sundays", links=[{"key": "tea", "weight": 0.123456789}])
    run = Memory.objects.get(key="run")
    unchanged = [
        ("/update_memory", {"key": "run", "value": {"text": "Runs on Sundays"}}),
        ("/update_memory", {"key": "tea", "importance": 0.5}),
        ("/update_memory_key", {"key": "run", "newKey": "run"}),
        # A weight with more digits than the column keeps is the link as stored.
        ("/update_memory", {"key": "run", "links": [{"key": "tea", "weight": 0.123456789}]}),
    ]
    for route, body in unchanged:
        response = agent.post(route, {"user_id": USER, **body}, format="json")
        assert response.status_code == 200, response.json()
        assert response.json()["data"]["meta"]["version"] == 1, (route, body)
    assert Memory.objects.get(key="run").last_linked_at == run.last_linked_at
    assert Memory.objects.filter(key__in=["run", "tea"], version=1).count() == 2


def test_the_summary_is_text_in_metadata_as_in_value(agent, make_client):
    refused = add(agent, "k", "Swims", metadata={"summary": {"x": 1}})
    assert (refused.status_code, error(refused)["field"]) == (400, "metadata.summary")
    assert not Memory.objects.exists()
    # Written over /api/v1/, where metadata holds anything: no `value.summary` to show.
    written = agent.post(
        "/api/v1/memories/",
        {"user_id": USER, "content": "Swims", "memory_type": "fact", "key": "k"}
        | {"metadata": {"summary": [1]}},
        format="json",
    )
    assert written.status_code == 201, written.json()
    read = agent.post("/get_memory", {"user_id": USER, "key": "k"}, format="json")
    assert "summary" not in read.json()["data"]["value"]
