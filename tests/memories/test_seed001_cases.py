"""Seed 001's compatibility cases TC-C01, C05–C08 (memory writes, legacy types, ingest,
purge), re-expressed for this service (C02–C04 belong to recall; C09's `Embedding` alias has
no counterpart here). Seed 004's compatible routes (memories/api/compat.py) are tested in
test_seed_routes.py."""

import pytest

from core.access import Caller
from memories.ingest import session_message_add, session_open
from memories.models import Memory
from memories.services import MemoryInput, memory_add, user_purge

pytestmark = pytest.mark.django_db

CALLER = Caller(name="t", is_staff=True)


def test_add_memory_with_metadata():  # TC-C01
    result = memory_add(
        item=MemoryInput(user_id="u1", content="test", memory_type="fact", metadata={"key": "val"}),
        caller=CALLER,
    )
    assert isinstance(result.memory, Memory) and result.memory.metadata == {"key": "val"}


def test_general_is_accepted_and_stored_as_fact():  # TC-C05
    memory_add(item=MemoryInput(user_id="u1", content="test", memory_type="general"), caller=CALLER)
    assert Memory.objects.get(user_id="u1").memory_type == "fact"


def test_ingest_i_work_at_google():  # TC-C06
    session = session_open(caller=CALLER, user_id="u1")
    results = session_message_add(
        session=session, role="user", content="I work at Google", caller=CALLER
    ).memories
    # The fact, about the user, and the turn itself as an episode.
    assert [(r.memory.memory_type, r.memory.content) for r in results] == [
        ("fact", "The user works at Google"),
        ("episodic", "User: I work at Google"),
    ]
    assert results[0].memory.key == "profile:job"


def test_delete_user_data_includes_auxiliary_tables(make_client):  # TC-C07, TC-C08
    session = session_open(caller=CALLER, user_id="u1")
    session_message_add(session=session, role="user", content="I live in Paris.", caller=CALLER)
    http, _ = make_client("ops", staff=True)
    export = http.get("/api/v1/users/u1/export/").json()["data"]
    assert {"memories", "history", "evidence", "sources", "sessions", "messages", "cycles"} <= set(
        export
    )
    # The fact and the episode, each with its source.
    assert len(export["memories"]) == 2 and len(export["sources"]) == 2
    counts = user_purge(caller=CALLER, user_id="u1")
    assert counts["memories"] == counts["memory_history"] == counts["memory_sources"] == 2
    assert not Memory.objects.filter(user_id="u1").exists()
