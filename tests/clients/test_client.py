"""NeuroMem, the synchronous client, resource by resource against the live service."""

import math
import uuid
from datetime import UTC, datetime

import pytest
from neuromem_client import (
    Conflict,
    Forbidden,
    NeuroMem,
    NeuroMemError,
    NotFound,
    ValidationFailed,
    types,
)

from tests.clients.conftest import USER, sentences, tcp_server

SOUL = """# SOUL

## Core principles
- User interest first.

## Constraints
- Never reveal the user's secrets.

## Style
- Warm and concise.
"""


def test_a_memory_written_read_changed_and_deleted(nm: NeuroMem):
    written = nm.memories.add(USER, "I like green tea", metadata={"source": "chat"}, key="tea")
    assert written["operation"] == "ADD"
    memory = written["memory"]
    assert (memory["content"], memory["memory_type"], memory["version"]) == (
        "I like green tea",
        "fact",
        1,
    )
    assert nm.memories.add(USER, "I like green tea", key="tea")["operation"] == "NOOP"

    got = nm.memories.get(memory["id"])
    assert (got["key"], got["metadata"], got["links"]) == ("tea", {"source": "chat"}, [])
    assert "embedding" not in got
    assert "embedding" in nm.memories.get(memory["id"], include_embedding=True)

    changed = nm.memories.update(memory["id"], version=1, importance=0.9, key=None)
    assert (changed["importance"], changed["key"], changed["version"]) == (
        pytest.approx(0.9),
        None,
        2,
    )
    renewed = nm.memories.update(memory["id"], version=2, content="I like oolong tea")
    assert renewed["id"] != memory["id"] and renewed["version"] == 3

    superseded = nm.memories.supersede(renewed["id"], "I love oolong tea", version=3)
    assert (superseded["content"], superseded["version"]) == ("I love oolong tea", 4)
    assert [m["content"] for m in nm.memories.versions(superseded["id"])] == [
        "I like green tea",
        "I like oolong tea",
        "I love oolong tea",
    ]
    assert [event["event"] for event in nm.memories.history(memory["id"])][:2] == [
        "ADD",
        "UPDATE",
    ]

    invalidated = nm.memories.invalidate(superseded["id"], invalid_at="2024-01-01T00:00:00Z")
    assert invalidated["invalid_at"].startswith("2024-01-01") and invalidated["expired_at"]

    other = nm.memories.add(USER, "I work as a nurse")["memory"]
    deleted = nm.memories.delete(other["id"])
    assert deleted["state"] == "deleted"
    assert nm.memories.delete(other["id"])["id"] == other["id"]  # again: nothing changes
    assert list(nm.memories.list(USER)) == []


def test_add_many_in_batches_and_list_page_by_page(nm: NeuroMem, served):
    items = [{"user_id": USER, "content": text, "memory_type": "fact"} for text in sentences(250)]
    items[120] = {"user_id": "elsewhere:bob", "content": "not mine", "memory_type": "fact"}
    results = nm.memories.add_many(items, batch_size=100)
    assert [r["index"] for r in results] == list(range(250))
    assert results[120]["ok"] is False and results[120]["error"]["code"] == "FORBIDDEN"
    assert all(r["ok"] and r["operation"] == "ADD" for i, r in enumerate(results) if i != 120)
    assert served.count(("POST", "/api/v1/memories/batch/")) == 3

    served.clear()
    listed = nm.memories.list(USER, page_size=60, sort_order="asc")
    assert served == []  # nothing is fetched before the iteration starts
    contents = [memory["content"] for memory in listed]
    assert contents == [item["content"] for i, item in enumerate(items) if i != 120]
    assert served == [("GET", "/api/v1/memories/")] * 5  # 249 memories, 60 a page

    assert [m["content"] for m in nm.memories.list(USER, key=None, state=["active", "cold"])][
        :1
    ] == [items[249]["content"]]


def test_links(nm: NeuroMem):
    source, target, other = (
        nm.memories.add(USER, text)["memory"]["id"]
        for text in ("Project Apollo design", "Apollo uses PostgreSQL", "Apollo ships in May")
    )
    link = nm.memories.link(source, target, 0.8)
    assert (link["target_id"], link["weight"]) == (target, pytest.approx(0.8))
    nm.memories.link(source, other, 0.3)
    assert nm.memories.link(source, target, 0.5)["weight"] == pytest.approx(0.5)  # same pair
    assert [link["target_id"] for link in nm.memories.links(source)] == [target, other]
    assert nm.memories.unlink(source, target) == {"source_id": source, "target_id": target}
    assert [link["target_id"] for link in nm.memories.links(source)] == [other]
    with pytest.raises(NotFound):
        nm.memories.unlink(source, target)


def test_recall_and_search(nm: NeuroMem):
    nm.memories.add(USER, "I like green tea", importance=0.6)
    nm.memories.add(USER, "My brother lives in Oslo")
    recalled = nm.recall(USER, "green tea")
    assert recalled["fields"] == "full"
    assert [hit["content"] for hit in recalled["merged"]] == ["I like green tea"]
    assert recalled["merged"][0]["score"] > 0 and "activity_score" in recalled["merged"][0]
    compact = nm.recall(USER, "green tea", compact=True, include_traits=False, limit=5)
    assert set(compact["merged"][0]) == {"id", "content", "memory_type", "valid_at", "score"}

    hits = nm.search(USER, "brother Oslo", memory_type="fact")
    assert [hit["content"] for hit in hits] == ["My brother lives in Oslo"]
    scored = nm.search(USER, "brother Oslo", scored=True, state=["active", "cold"])
    assert {"relevance", "recency", "importance"} <= set(scored[0])


def test_a_session_its_messages_and_its_end(nm: NeuroMem):
    session = nm.sessions.open(USER, metadata={"channel": "test"})
    assert (session["user_id"], session["ended_at"], session["metadata"]) == (
        USER,
        None,
        {"channel": "test"},
    )
    added = nm.sessions.add_message(session["id"], "user", "I live in Berlin")
    assert added["message"]["content"] == "I live in Berlin"
    assert any("Berlin" in written["memory"]["content"] for written in added["memories"])
    assert added["forget"] == [] and added["redactions"] == {}
    nm.sessions.add_message(session["id"], "assistant", "Noted, Berlin it is.")

    ended = nm.sessions.end(session["id"])
    assert ended["ended_at"] is not None
    assert nm.sessions.end(session["id"])["ended_at"] == ended["ended_at"]
    with pytest.raises(Conflict) as raised:
        nm.sessions.add_message(session["id"], "user", "One more thing")
    assert raised.value.field == "session_id"


def test_an_end_users_data_graph_forgetting_and_purge(nm: NeuroMem):
    session = nm.sessions.open(USER)
    nm.sessions.add_message(session["id"], "user", "My brother Mark is a lawyer in New York")
    nm.memories.add(USER, "My home address is 12 Elm Street")

    entities = list(nm.users.entities(USER))
    mark = next(entity for entity in entities if entity["name"] == "Mark")
    detail = nm.users.entity(USER, mark["id"])
    assert detail["id"] == mark["id"] and {"outgoing", "incoming"} <= set(detail)

    exported = nm.users.export(USER)
    assert exported["user_id"] == USER
    assert any("Elm Street" in memory["content"] for memory in exported["memories"])

    dry = nm.users.forget(USER, topic="my home address", dry_run=True)
    assert dry["dry_run"] is True and dry["id"] is None and dry["memories"]
    forgotten = nm.users.forget(USER, topic="my home address")
    assert forgotten["id"] and [m["id"] for m in forgotten["memories"]] == [
        m["id"] for m in dry["memories"]
    ]
    again = nm.users.forget(USER, topic="my home address")
    assert again["memories"] == [] and again["reason"]["code"] == "nothing_held"

    purged = nm.users.purge(USER)
    assert purged["user_id"] == USER and purged["deleted"]["memories"] >= 1
    assert nm.users.export(USER)["memories"] == []
    with pytest.raises(Forbidden):
        nm.users.purge("elsewhere:bob")


def test_an_end_user_id_is_one_path_segment_whatever_it_holds(nm: NeuroMem):
    """ "cl:a%62" is not "cl:ab", and "?" or "#" does not end the path."""
    names = ["cl:ab", "cl:a%62", "cl:a?b", "cl:a#b", "cl:a b"]
    for name in names:
        nm.memories.add(name, f"Memory of {name}")
    for name in names:
        exported = nm.users.export(name)
        assert exported["user_id"] == name
        assert [m["content"] for m in exported["memories"]] == [f"Memory of {name}"]
        assert nm.traits.list(name) is not None  # a 301 to a cut path before
    purged = nm.users.purge("cl:a%62")
    assert (purged["user_id"], purged["deleted"]["memories"]) == ("cl:a%62", 1)
    assert [m["content"] for m in nm.users.export("cl:ab")["memories"]] == ["Memory of cl:ab"]


def test_traits_and_the_prompt_context(nm: NeuroMem, staff: NeuroMem):
    trait = nm.memories.add(
        USER,
        "Prefers short answers",
        memory_type="trait",
        metadata={"trait_subtype": "preference", "trait_stage": "established", "confidence": 0.9},
    )["memory"]
    detail = nm.traits.get(trait["id"])
    assert detail["trait"]["stage"] == "established" and detail["evidence"] == []
    # Believed traits come from the decay view, which the beat job refreshes.
    assert set(nm.traits.list(USER)) == {"core", "preference", "behavior", "other"}
    nm.memories.add(USER, "The user lives in Denver")
    context = nm.traits.prompt_context(USER, max_tokens=200)
    assert "Denver" in context["markdown"] and context["language"] == "en"

    with pytest.raises(Forbidden):
        nm.traits.veto(trait["id"], "not true")
    vetoed = staff.traits.veto(trait["id"], "not true")
    assert vetoed["trait"]["stage"] == "dissolved"


def test_an_agents_soul(nm: NeuroMem):
    with pytest.raises(NotFound):
        nm.soul.get()
    bootstrapped = nm.soul.bootstrap(SOUL)
    assert (bootstrapped["version"], bootstrapped["status"]) == (0, "active")
    assert nm.soul.bootstrap("# Another\n")["skipped"] is True
    assert nm.soul.contract()["extracted_anchors"] == ["User interest first."]

    proposal = nm.soul.propose("Add a rule on tone", SOUL + "- Plain words.\n")
    assert proposal["status"] == "applied", proposal
    soul = nm.soul.get()
    assert soul["version"] == 1 and soul["soul_md"].endswith("- Plain words.\n")
    waiting = nm.soul.propose("Another", SOUL + "- Short lines.\n", auto_apply=False)
    assert waiting["status"] == "proposed"
    assert nm.soul.apply(waiting["version"])["status"] == "active"
    assert [v["version"] for v in nm.soul.versions()] == [2, 1, 0]
    assert nm.soul.version(2)["predecessor"] == 1

    restored = nm.soul.rollback(reason="the user asked")
    assert restored["status"] == "active" and restored["content"] == soul["content"]
    vetoed = nm.soul.veto(restored["version"], "no")
    assert vetoed["vetoed"] == restored["version"]


def test_statistics_whoami_and_health(nm: NeuroMem, staff: NeuroMem):
    nm.memories.add(USER, "I like green tea")
    nm.memories.add(USER, "I live in Oslo")
    stats = nm.stats(USER, cache_ttl_ms=0, histogram_bin_size=50)
    assert stats["counts"]["total"] == 2 and stats["user_id"] == USER
    assert [b["from"] for b in stats["histogram"]["bins"]] == [0, 50]
    with pytest.raises(Forbidden) as raised:
        nm.stats()
    assert raised.value.field == "user_id"
    assert staff.stats(cache_ttl_ms=0)["counts"]["total"] == 2

    assert nm.whoami() == {"name": "cl", "user_prefixes": ["cl:"], "is_staff": False}
    assert nm.health()["status"] in ("healthy", "degraded")  # no worker runs in tests


def test_ids_outside_the_client_are_not_found(nm: NeuroMem, make_nm, make_token):
    theirs = make_nm(make_token("other"))
    memory = theirs.memories.add("other:carol", "Carol's secret")["memory"]
    with pytest.raises(NotFound):
        nm.memories.get(memory["id"])
    with pytest.raises(NotFound):
        nm.memories.get(str(uuid.uuid4()))


def test_add_many_takes_datetimes_as_add_does(nm: NeuroMem):
    when = datetime(2024, 5, 1, 12, tzinfo=UTC)
    items = [{"user_id": USER, "content": "kalo mine ruti saka", "memory_type": "fact"}]
    [result] = nm.memories.add_many([items[0] | {"valid_at": when}])
    assert result["ok"], result
    assert nm.memories.get(result["id"])["valid_at"].startswith("2024-05-01T12:00")


@pytest.mark.parametrize(
    "bad", [{"importance": math.nan}, {"content": "kalo \ud800 mine"}], ids=["nan", "surrogate"]
)
def test_what_json_cannot_carry_is_a_validation_error_before_anything_is_sent(nm: NeuroMem, bad):
    with pytest.raises(ValidationFailed):
        nm.memories.add(USER, bad.get("content", "kalo mine"), importance=bad.get("importance"))


def test_a_lowercase_method_is_retried_as_its_capitals(make_nm):
    def hang_up(connection) -> None:
        connection.close()

    with tcp_server(hang_up) as (url, accepted):
        client = NeuroMem(url, "nm_token", max_retries=2, backoff=0.01)
        with pytest.raises(NeuroMemError):
            client.request("get", "/auth/whoami/")
        client.close()
    assert len(accepted) == 3


@pytest.mark.parametrize("user_id", ["..", "."])
def test_a_dot_segment_user_id_is_that_user(make_nm, make_token, user_id):
    staff = make_nm(make_token("ops", [], staff=True))
    staff.memories.add(user_id, "kalo mine ruti saka vomi nelo")
    assert staff.users.export(user_id)["user_id"] == user_id


def test_the_answer_types_name_the_fields_answered(nm: NeuroMem):
    def fields(typed) -> set[str]:
        return {name for cls in typed.__mro__ for name in getattr(cls, "__annotations__", {})}

    written = nm.memories.add(USER, "kalo mine ruti saka vomi nelo")
    booted = nm.soul.bootstrap("# SOUL\nBe kind.")
    assert set(written) <= fields(types.WriteResult)
    assert set(booted) <= fields(types.SoulBootstrap)
