"""Links between memories, their order, the depth-first bulk read, key addressing, and the
activity-score filters of listing and search: through HTTP, against the real database."""

import threading

import pytest
from django.db import connections, transaction

from core.access import SYSTEM
from core.errors import Invalid
from memories.access_counts import accesses_flush
from memories.models import Memory, MemoryLink
from memories.services import MemoryInput, memory_add, memory_link_set, memory_supersede

pytestmark = pytest.mark.django_db

USER = "agent:1"


@pytest.fixture
def agent(make_client):
    return make_client("agent", ["agent:"])[0]


def remember(content: str, *, key: str | None = None, score: float = 50.0, user=USER) -> Memory:
    memory = memory_add(
        item=MemoryInput(user_id=user, content=content, memory_type="fact", key=key),
        caller=SYSTEM,
    ).memory
    Memory.objects.filter(pk=memory.pk).update(score=score)
    memory.score = score
    return memory


def link(source: Memory, target: Memory, weight: float) -> None:
    memory_link_set(source=source, target_id=target.id, weight=weight, caller=SYSTEM)


def links_of(http, memory: Memory, query: str = "") -> list[str]:
    response = http.get(f"/api/v1/memories/{memory.id}/{query}")
    assert response.status_code == 200, response.json()
    return [entry["key"] for entry in response.json()["data"]["links"]]


def error(response) -> dict:
    return response.json()["error"]


# --- Links -------------------------------------------------------------------------------------


def test_a_link_is_made_then_its_weight_changed(agent):
    source, target = remember("source"), remember("target", key="t")
    path = f"/api/v1/memories/{source.id}/links/"
    made = agent.post(path, {"target_id": str(target.id), "weight": 0.5}, format="json")
    assert made.status_code == 201
    assert made.json()["data"] | {"created_at": None} == {
        "target_id": str(target.id),
        "key": "t",
        "weight": 0.5,
        "target_score": 50.0,
        "combined_score": 25.0,
        "created_at": None,
    }
    again = agent.post(path, {"target_id": str(target.id), "weight": 0.9}, format="json")
    assert again.status_code == 200 and again.json()["data"]["weight"] == 0.9
    assert MemoryLink.objects.get(source_id=source.id).weight == pytest.approx(0.9)
    stamped = Memory.objects.filter(pk__in=[source.id, target.id], last_linked_at__isnull=False)
    assert stamped.count() == 2


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"weight": 0.5}, "target_id"),
        ({"target_id": "not-a-uuid", "weight": 0.5}, "target_id"),
        ({"target_id": "SELF", "weight": 0.5}, "target_id"),
        ({"target_id": "OTHER", "weight": 1.5}, "weight"),
        ({"target_id": "OTHER", "weight": -0.1}, "weight"),
        ({"target_id": "OTHER", "weight": "0.5"}, "weight"),
        ({"target_id": "OTHER", "weight": 0.5, "type": "x"}, "type"),
    ],
)
def test_bad_links_are_refused_and_change_nothing(agent, body, field):
    source, other = remember("source"), remember("other")
    body = {
        name: {"SELF": str(source.id), "OTHER": str(other.id)}.get(value, value)
        for name, value in body.items()
    }
    response = agent.post(f"/api/v1/memories/{source.id}/links/", body, format="json")
    assert response.status_code == 400
    assert (error(response)["code"], error(response)["field"]) == ("VALIDATION_ERROR", field)
    assert not MemoryLink.objects.exists()


def test_a_link_to_another_users_memory_reads_as_missing(agent, make_client):
    source = remember("source")
    elsewhere = remember("theirs", user="agent:2")
    absent = agent.post(
        f"/api/v1/memories/{source.id}/links/",
        {"target_id": str(elsewhere.id), "weight": 0.5},
        format="json",
    )
    assert absent.status_code == 400 and error(absent)["field"] == "target_id"
    assert "agent:2" not in error(absent)["message"]
    outsider = make_client("other", ["other:"])[0]
    hidden = outsider.post(
        f"/api/v1/memories/{source.id}/links/",
        {"target_id": str(source.id), "weight": 0.5},
        format="json",
    )
    assert hidden.status_code == 404
    assert not MemoryLink.objects.exists()


def test_a_link_is_removed_once(agent):
    source, target = remember("source"), remember("target")
    link(source, target, 0.5)
    path = f"/api/v1/memories/{source.id}/links/?target_id={target.id}"
    assert agent.delete(path).status_code == 200
    assert agent.delete(path).status_code == 404
    assert not MemoryLink.objects.exists()


def test_links_are_ordered_by_weight_times_score_then_weight_then_key(agent):
    source = remember("source")
    # weight × score: 0.5 × 80 = 40 = 0.8 × 50 (tie: weight 0.8 first); b and a tie fully
    # (0.4 × 50 = 20): by key.
    for key, weight, score in [
        ("b", 0.4, 50),
        ("low", 0.1, 90),
        ("half", 0.5, 80),
        ("a", 0.4, 50),
        ("heavy", 0.8, 50),
        ("top", 0.9, 95),
    ]:
        link(source, remember(key, key=key, score=score), weight)
    assert links_of(agent, source) == ["top", "heavy", "half", "a", "b", "low"]
    assert links_of(agent, source, "?sort_links=true") == links_of(agent, source)
    assert links_of(agent, source, "?sort_links=false") == ["b", "low", "half", "a", "heavy", "top"]


@pytest.mark.parametrize("value", ["yes", "1", "TRUE", "maybe", ""])
def test_sort_links_takes_only_true_or_false(agent, value):
    source = remember("source")
    response = agent.get(f"/api/v1/memories/{source.id}/?sort_links={value}")
    assert response.status_code == 400
    assert (error(response)["code"], error(response)["field"]) == ("VALIDATION_ERROR", "sort_links")


def test_links_skip_deleted_memories_and_follow_superseded_ones(agent):
    source, target, gone = remember("source"), remember("target", key="t"), remember("gone")
    link(source, target, 0.5)
    link(source, gone, 0.9)
    link(target, source, 0.3)
    agent.delete(f"/api/v1/memories/{gone.id}/")
    newer = memory_supersede(memory=target, content="target, revised", caller=SYSTEM)
    assert newer.key == "t"
    assert links_of(agent, source) == ["t"]
    assert set(MemoryLink.objects.values_list("source_id", "target_id")) == {
        (source.id, newer.id),
        (source.id, gone.id),
        (newer.id, source.id),
    }


# --- Bulk read ---------------------------------------------------------------------------------


@pytest.fixture
def tree() -> dict[str, Memory]:
    """root → a (0.9) → a1 (0.8) → a11 (0.7) → a111 (0.6); root → b (0.5) → b1 (0.4);
    root → c (0.3); a1 → root and b1 → a (duplicates)."""
    # Contents far apart: near duplicates would supersede each other.
    contents = {
        "root": "The architecture of the system",
        "a": "Postgres stores every row",
        "a1": "Partitions split by type",
        "a11": "An index per user",
        "a111": "HNSW graphs for vectors",
        "b": "Celery runs the jobs",
        "b1": "Beat schedules maintenance",
        "c": "Redis counts accesses",
    }
    nodes = {name: remember(content, key=name) for name, content in contents.items()}
    for source, target, weight in [
        ("root", "a", 0.9),
        ("a", "a1", 0.8),
        ("a1", "a11", 0.7),
        ("a11", "a111", 0.6),
        ("root", "b", 0.5),
        ("b", "b1", 0.4),
        ("root", "c", 0.3),
        ("a1", "root", 0.2),
        ("b1", "a", 0.1),
    ]:
        link(nodes[source], nodes[target], weight)
    return nodes


def bulk(http, memory: Memory, query: str = "") -> dict:
    response = http.get(f"/api/v1/memories/{memory.id}/bulk/{query}")
    assert response.status_code == 200, response.json()
    return response.json()["data"]


def reached(data: dict) -> list[tuple[str, int]]:
    return [(m["key"], m["retrievalInfo"]["depth"]) for m in data["associatedMemories"]]


def test_bulk_read_goes_depth_first_in_link_order(agent, tree):
    data = bulk(agent, tree["root"])
    assert data["targetMemory"]["key"] == "root"
    assert [entry["key"] for entry in data["targetMemory"]["links"]] == ["a", "b", "c"]
    # Default depth 3: a111 (depth 4) is not read.
    assert reached(data) == [("a", 1), ("a1", 2), ("a11", 3), ("b", 1), ("b1", 2), ("c", 1)]
    first = data["associatedMemories"][2]
    assert first["retrievalInfo"] == {"depth": 3, "weight": 0.7, "path": ["root", "a", "a1"]}
    metadata = data["metadata"]
    assert (metadata["depthReached"], metadata["totalRetrieved"]) == (3, 6)
    assert metadata["duplicatesSkipped"] == 2  # a1 → root, b1 → a
    assert metadata["executionTimeMs"] >= 0


def test_bulk_read_stops_at_each_limit(agent, tree):
    assert reached(bulk(agent, tree["root"], "?depth=1")) == [("a", 1), ("b", 1), ("c", 1)]
    assert reached(bulk(agent, tree["root"], "?depth=6"))[3] == ("a111", 4)
    # At most `breadth` memories at each depth.
    assert reached(bulk(agent, tree["root"], "?breadth=1")) == [("a", 1), ("a1", 2), ("a11", 3)]
    assert reached(bulk(agent, tree["root"], "?total=2")) == [("a", 1), ("a1", 2)]
    assert bulk(agent, tree["root"], "?total=2")["metadata"]["totalRetrieved"] == 2


@pytest.mark.parametrize(
    ("query", "field", "limit", "provided"),
    [
        ("depth=10", "depth", {"maxAllowed": 6}, 10),
        ("depth=0", "depth", {"minAllowed": 1}, 0),
        ("breadth=21", "breadth", {"maxAllowed": 20}, 21),
        ("total=51", "total", {"maxAllowed": 50}, 51),
        ("total=-1", "total", {"minAllowed": 1}, -1),
    ],
)
def test_bulk_read_range_errors_in_the_seed_shape(agent, tree, query, field, limit, provided):
    response = agent.get(f"/api/v1/memories/{tree['root'].id}/bulk/?{query}")
    assert response.status_code == 400
    body = error(response)
    assert (body["code"], body["field"], body["provided"]) == ("VALIDATION_ERROR", field, provided)
    assert limit.items() <= body.items()


def test_bulk_read_of_a_missing_memory_is_not_found(agent, make_client, tree):
    missing = agent.get("/api/v1/memories/00000000-0000-0000-0000-000000000000/bulk/")
    assert missing.status_code == 404 and error(missing)["code"] == "NOT_FOUND"
    outsider = make_client("other", ["other:"])[0]
    assert outsider.get(f"/api/v1/memories/{tree['root'].id}/bulk/").status_code == 404


def test_bulk_read_counts_an_access_and_traversals(agent, tree):
    bulk(agent, tree["root"], "?depth=1")
    accesses_flush()
    rows = {
        m.key: (m.access_count, m.traverse_count)
        for m in Memory.objects.filter(key__in=["root", "a", "b", "c", "a1"])
    }
    assert rows == {"root": (1, 0), "a": (0, 1), "b": (0, 1), "c": (0, 1), "a1": (0, 0)}


# --- Keys --------------------------------------------------------------------------------------


def test_a_key_is_unique_among_a_users_current_memories(agent):
    held = remember("project design", key="project:design")
    taken = agent.post(
        "/api/v1/memories/",
        {"user_id": USER, "content": "other", "memory_type": "episodic", "key": "project:design"},
        format="json",
    )
    assert taken.status_code == 409
    assert (error(taken)["field"], error(taken)["memory_id"]) == ("key", str(held.id))
    # The same content again is a NOOP, not a conflict; another user may use the key.
    again = agent.post(
        "/api/v1/memories/",
        {
            "user_id": USER,
            "content": "project design",
            "memory_type": "fact",
            "key": "project:design",
        },
        format="json",
    )
    assert again.status_code == 200
    remember("theirs", key="project:design", user="agent:2")
    # Deleted, the key is free again.
    agent.delete(f"/api/v1/memories/{held.id}/")
    assert remember("new design", key="project:design").key == "project:design"


def test_renaming_to_a_taken_key_conflicts(agent):
    first, second = remember("one", key="one"), remember("two", key="two")
    response = agent.patch(
        f"/api/v1/memories/{second.id}/", {"version": 1, "key": "one"}, format="json"
    )
    assert response.status_code == 409 and error(response)["memory_id"] == str(first.id)
    assert Memory.objects.get(pk=second.id).key == "two"


# --- Activity filters ------------------------------------------------------------------------


def listed(http, query: str) -> list[str]:
    response = http.get(f"/api/v1/memories/?user_id={USER}&{query}")
    assert response.status_code == 200, response.json()
    return [m["content"] for m in response.json()["data"]]


def test_listing_filters_and_sorts_by_score_and_state(agent):
    for content, score in [("hot", 90), ("warm", 69.5), ("cool", 30), ("stale", 10)]:
        remember(content, score=score)
    assert listed(agent, "sort_by=score") == ["hot", "warm", "cool"]  # deprecated hidden
    assert listed(agent, "sort_by=score&include_all_states=true")[-1] == "stale"
    assert listed(agent, "sort_by=score&sort_order=asc&state=deprecated,active") == [
        "stale",
        "hot",
    ]
    assert listed(agent, "score_min=30&score_max=70&sort_by=score") == ["warm", "cool"]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("score_min=80&score_max=20", "score_min"),
        ("score_min=-1", "score_min"),
        ("score_max=101", "score_max"),
        ("state=active,frozen", "state"),
        ("sort_by=weight", "sort_by"),
        ("sort_order=up", "sort_order"),
    ],
)
def test_bad_filters_are_validation_errors(agent, query, field):
    for path in ("/api/v1/memories/", "/api/v1/search/"):
        response = agent.get(f"{path}?user_id={USER}&q=x&{query}")
        assert response.status_code == 400, path
        assert (error(response)["code"], error(response)["field"]) == ("VALIDATION_ERROR", field)


def test_search_filters_by_score_and_state_and_sorts_by_score(agent):
    for content, score in [
        ("coffee in the morning", 40),
        ("coffee after lunch", 85),
        ("coffee is bitter", 10),
    ]:
        remember(content, score=score)

    def searched(query: str) -> list[str]:
        response = agent.get(f"/api/v1/search/?user_id={USER}&q=coffee&{query}")
        assert response.status_code == 200, response.json()
        return [hit["content"] for hit in response.json()["data"]]

    assert set(searched("")) == {"coffee in the morning", "coffee after lunch"}
    assert len(searched("include_all_states=true")) == 3
    assert searched("state=deprecated") == ["coffee is bitter"]
    assert searched("score_min=50") == ["coffee after lunch"]
    assert searched("sort_by=score&include_all_states=true") == [
        "coffee after lunch",
        "coffee in the morning",
        "coffee is bitter",
    ]
    assert searched("sort_by=score&sort_order=asc")[0] == "coffee in the morning"


def test_a_superseded_trait_keeps_its_lifecycle(agent):
    trait = memory_add(
        item=MemoryInput(
            user_id=USER,
            content="Runs every morning",
            memory_type="trait",
            metadata={"trait_subtype": "behavior", "trait_stage": "emerging", "confidence": 0.45},
        ),
        caller=SYSTEM,
    ).memory
    Memory.objects.filter(pk=trait.pk).update(trait_reinforcement_count=3, metadata={})
    trait.refresh_from_db()
    newer = memory_supersede(memory=trait, content="Runs before work, most days", caller=SYSTEM)
    newer.refresh_from_db()
    assert (
        newer.trait_subtype,
        newer.trait_stage,
        newer.trait_confidence,
        newer.trait_reinforcement_count,
    ) == ("behavior", "emerging", pytest.approx(0.45), 3)
    restaged = memory_supersede(
        memory=newer, content="Runs daily", metadata={"trait_stage": "established"}, caller=SYSTEM
    )
    assert (restaged.trait_stage, restaged.trait_subtype) == ("established", "behavior")


# --- Review findings: keys through the operation model, races, seed routes ------------------


def test_a_restatement_keeps_the_key_and_another_key_makes_another_memory():
    first = remember("The user likes green tea with breakfast every day", key="tea")
    restated = memory_add(
        item=MemoryInput(
            user_id=USER,
            content="The user likes green tea with breakfast every day!",
            memory_type="fact",
        ),
        caller=SYSTEM,
    )
    assert (restated.operation, restated.memory.key) == ("UPDATE", "tea")
    assert restated.superseded.id == first.id
    other = memory_add(
        item=MemoryInput(
            user_id=USER,
            content="The user likes green tea with breakfast every day!!",
            memory_type="fact",
            key="drinks",
        ),
        caller=SYSTEM,
    )
    assert (other.operation, other.memory.key) == ("ADD", "drinks")
    assert set(Memory.objects.current().values_list("key", flat=True)) == {"tea", "drinks"}


def test_the_same_content_under_another_key_conflicts_instead_of_dropping_the_key(agent):
    held = remember("Works at the harbour", key="job")
    response = agent.post(
        "/api/v1/memories/",
        {"user_id": USER, "content": "Works at the harbour", "memory_type": "fact", "key": "work"},
        format="json",
    )
    assert response.status_code == 409
    assert (error(response)["field"], error(response)["memory_id"]) == ("key", str(held.id))
    assert Memory.objects.get(pk=held.pk).key == "job"


@pytest.mark.django_db(transaction=True)
def test_a_link_made_while_its_target_is_superseded_never_points_at_the_old_version():
    """The supersede holds the target's row when the link is asked for: the link waits, then
    finds the target no longer current (never a link to the old version that nobody moves)."""
    source = remember("The architecture of the system")
    # Another type than the source's: the link's lock on the source's writes does not cover it.
    target = memory_add(
        item=MemoryInput(user_id=USER, content="Postgres stores every row", memory_type="episodic"),
        caller=SYSTEM,
    ).memory
    superseding, linked = threading.Event(), []

    def link_meanwhile() -> None:
        try:
            superseding.wait()
            memory_link_set(source=source, target_id=target.id, weight=0.5, caller=SYSTEM)
            linked.append("made")
        except Invalid as refused:
            linked.append(refused.field)
        finally:
            connections.close_all()

    thread = threading.Thread(target=link_meanwhile)
    thread.start()
    with transaction.atomic():
        newer = memory_supersede(memory=target, content="Postgres keeps the rows", caller=SYSTEM)
        superseding.set()
        thread.join(timeout=2)  # blocked on the target's row until this commits
        assert thread.is_alive()
    thread.join()
    assert linked == ["target_id"]
    assert not MemoryLink.objects.exclude(target_id=newer.id).exists()


def test_seed_text_has_the_content_limits(agent, settings):
    for text in ["   ", "x" * (settings.MEMORY_MAX_CHARS + 1)]:
        response = agent.post(
            "/add_memory", {"user_id": USER, "key": "k", "value": {"text": text}}, format="json"
        )
        assert response.status_code == 400 and error(response)["field"] == "value.text"
    assert not Memory.objects.exists()


def test_a_noop_add_memory_leaves_the_links_alone(agent):
    one, two = remember("Postgres stores every row", key="db"), remember("Redis", key="cache")
    body = {"user_id": USER, "key": "arch", "value": {"text": "The architecture"}}
    agent.post("/add_memory", {**body, "links": [{"key": "db", "weight": 0.5}]}, format="json")
    again = agent.post(
        "/add_memory", {**body, "links": [{"key": "cache", "weight": 0.5}]}, format="json"
    )
    assert again.json()["data"]["operation"] == "NOOP"
    assert list(MemoryLink.objects.values_list("target_id", flat=True)) == [one.id]
    assert two.id not in MemoryLink.objects.values_list("target_id", flat=True)


def test_writing_with_links_outside_the_prefixes_is_forbidden(agent):
    response = agent.post(
        "/add_memory",
        {
            "user_id": "other:1",
            "key": "k",
            "value": {"text": "t"},
            "links": [{"key": "x", "weight": 0.5}],
        },
        format="json",
    )
    assert response.status_code == 403 and error(response)["code"] == "FORBIDDEN"


def test_deleted_is_a_listing_state_but_not_a_search_one(agent):
    gone = remember("coffee gone cold")
    agent.delete(f"/api/v1/memories/{gone.id}/")
    listed = agent.get(f"/api/v1/memories/?user_id={USER}&state=deleted")
    assert [m["id"] for m in listed.json()["data"]] == [str(gone.id)]
    searched = agent.get(f"/api/v1/search/?user_id={USER}&q=coffee&state=deleted")
    assert searched.status_code == 400 and error(searched)["field"] == "state"


def test_a_key_with_a_slash_is_bulk_read_by_the_seed_route(agent):
    remember("The architecture of the system", key="project/architecture")
    response = agent.get(f"/api/memories/project/architecture/bulk?user_id={USER}")
    assert response.status_code == 200, response.json()
    assert response.json()["data"]["targetMemory"]["key"] == "project/architecture"
