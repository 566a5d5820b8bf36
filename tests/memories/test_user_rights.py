"""User data rights: export everything held about a user; purge it from every table."""

import uuid

import pytest
from django.db import connection

from core.access import SYSTEM, Caller
from memories.ingest import session_message_add, session_open
from memories.models import (
    ConversationMessage,
    ConversationSession,
    ForgetRequest,
    Memory,
    MemoryHistory,
    MemorySource,
)
from memories.services import MemoryInput, memory_add, memory_link_set, memory_supersede
from reflection.models import ConsistencyIssue, ReflectionCycle, TraitEvidence

pytestmark = pytest.mark.django_db
TABLES = [
    "memories",
    "memory_history",
    "memory_sources",
    "memory_links",
    "trait_evidence",
    "conversations",
    "conversation_sessions",
    "reflection_cycles",
    "consistency_issues",
    "forget_requests",
    "graph_edges",
    "graph_nodes",
]


def populate(user_id: str) -> None:
    """The same content for every user, so only ids tell the rows apart."""
    session = session_open(caller=SYSTEM, user_id=user_id)
    session_message_add(
        session=session,
        role="user",
        content="I live in Berlin.",
        caller=Caller(name="t", is_staff=True),
    )
    session_message_add(
        session=session,
        role="user",
        content="I moved to Austin.",
        caller=Caller(name="t", is_staff=True),
    )
    trait = memory_add(
        item=MemoryInput(user_id=user_id, content="likes hiking", memory_type="trait"),
        caller=Caller(name="t", is_staff=True),
    ).memory
    fact = memory_add(
        item=MemoryInput(user_id=user_id, content="hiked Alps", memory_type="episodic"),
        caller=Caller(name="t", is_staff=True),
    ).memory
    latest = memory_supersede(
        memory=fact, content="hiked the Alps twice", caller=Caller(name="t", is_staff=True)
    )
    memory_link_set(source=trait, target_id=latest.id, weight=0.7, caller=SYSTEM)
    TraitEvidence.objects.create(
        trait_id=trait.id, memory_id=fact.id, evidence_type="supporting", quality="B"
    )
    ReflectionCycle.objects.create(user_id=user_id, trigger_type="scheduled")
    ConsistencyIssue.objects.create(
        check_name="trait_parent",
        table_name="memories",
        row_id=str(trait.id),
        missing_id=str(fact.id),
        user_id=user_id,
    )
    ForgetRequest.objects.create(
        user_id=user_id, requested_by="t", via="api", reason="nothing_held"
    )


def counts() -> dict[str, int]:
    with connection.cursor() as cursor:
        result = {}
        for table in TABLES:
            cursor.execute(f"SELECT count(*) FROM {table}")
            result[table] = cursor.fetchone()[0]
        return result


@pytest.fixture
def agent(make_client):
    return make_client("agent", ["agent:"])[0]


def test_export_holds_everything(agent):
    populate("agent:1")
    data = agent.get("/api/v1/users/agent:1/export/").json()["data"]
    # Berlin and Austin (facts and the two turns as episodes), trait, episode + its new version
    assert len(data["memories"]) == 7
    assert {m["state"] for m in data["memories"]} == {"cold", "deleted"}
    # ... and the Berlin turn, no longer current once the user moved (docs/graph.md)
    assert len(data["history"]) == 10
    # The graph: the user, Berlin and Austin; lives in Berlin (closed), lives in Austin.
    assert len(data["entities"]) == 3 and len(data["edges"]) == 2
    assert len(data["evidence"]) == 1 and len(data["cycles"]) == 1
    assert [issue["check_name"] for issue in data["consistency_issues"]] == ["trait_parent"]
    assert len(data["sessions"]) == 1 and len(data["messages"]) == 2
    assert len(data["sources"]) == 4
    assert len(data["links"]) == 1
    assert len(data["forget_requests"]) == 1 and data["forgotten"] == []


def test_purge_removes_every_row_of_one_user_and_no_other(agent):
    populate("agent:1")
    populate("agent:10")  # a user_id that starts like the first one
    populate("agent:2")
    before = counts()
    response = agent.delete("/api/v1/users/agent:1/")
    assert response.status_code == 200
    deleted = response.json()["data"]["deleted"]
    after = counts()
    assert {table: before[table] - after[table] for table in TABLES} == {
        table: number for table, number in deleted.items() if table in TABLES
    }
    assert deleted == {
        "memories": 7,
        "memory_history": 10,
        "memory_sources": 4,
        "memory_links": 1,
        "trait_evidence": 1,
        "conversations": 2,
        "conversation_sessions": 1,
        "reflection_cycles": 1,
        "consistency_issues": 1,
        "forget_requests": 1,
        "graph_edges": 2,
        "graph_nodes": 3,
        "django_admin_log_redacted": 0,
    }
    assert not Memory.objects.filter(user_id="agent:1").exists()
    assert not ConversationSession.objects.filter(user_id="agent:1").exists()
    for survivor in ("agent:10", "agent:2"):
        assert Memory.objects.filter(user_id=survivor).count() == 7
        ids = Memory.objects.filter(user_id=survivor).values_list("id", flat=True)
        assert MemoryHistory.objects.filter(memory_id__in=ids).count() == 10
        assert MemorySource.objects.filter(memory_id__in=ids).count() == 4
        assert ConversationMessage.objects.filter(user_id=survivor).count() == 2


def test_purge_is_all_or_nothing(agent, monkeypatch):
    populate("agent:1")
    before = counts()

    def fail(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(ReflectionCycle.objects, "filter", fail)
    response = agent.delete("/api/v1/users/agent:1/")
    assert response.status_code == 500
    assert counts() == before


def test_purge_outside_the_prefix_is_forbidden(agent, make_client):
    populate("other:1")
    assert agent.delete("/api/v1/users/other:1/").status_code == 403
    assert agent.get("/api/v1/users/other:1/export/").status_code == 404
    assert Memory.objects.filter(user_id="other:1").count() == 7


def test_purging_an_unknown_user_deletes_nothing(agent):
    populate("agent:1")
    before = counts()
    response = agent.delete(f"/api/v1/users/agent:{uuid.uuid4()}/")
    assert response.status_code == 200
    assert set(response.json()["data"]["deleted"].values()) == {0}
    assert counts() == before
