"""The models against the real partitioned schema (seed 001 TC-O01–O13, adapted to Django)."""

import uuid
from datetime import UTC, datetime

import pytest
from django.db import IntegrityError, connection, transaction

from evolution.models import Agent, SoulVersion
from memories.models import (
    ConversationMessage,
    ConversationSession,
    HistoryEvent,
    Memory,
    MemoryHistory,
    MemorySource,
)
from reflection.models import ReflectionCycle, TraitEvidence

pytestmark = pytest.mark.django_db
T1 = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
T2 = datetime(2025, 2, 3, 4, 5, 6, tzinfo=UTC)


def reload(memory: Memory) -> Memory:
    return Memory.objects.get(pk=memory.pk)


def partition_of(memory: Memory) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT tableoid::regclass::text FROM memories WHERE id = %s", [memory.pk])
        return cursor.fetchone()[0]


def test_memory_table_is_memories():  # TC-O01
    assert Memory._meta.db_table == "memories"


@pytest.mark.parametrize("memory_type", ["fact", "episodic", "trait", "document"])
def test_each_type_lands_in_its_partition(memory_type):  # replaces TC-O02 (no alias here)
    memory = Memory.objects.create(user_id="u1", memory_type=memory_type, content="x")
    assert partition_of(memory) == f"memories_{memory_type}"


def test_trait_fields_roundtrip():  # TC-O03
    parent = uuid.uuid4()
    memory = Memory.objects.create(
        user_id="u1",
        memory_type="trait",
        content="likes Python",
        trait_subtype="preference",
        trait_stage="emerging",
        trait_confidence=0.75,
        trait_context="work",
        trait_parent_id=parent,
        trait_reinforcement_count=5,
        trait_contradiction_count=2,
        trait_last_reinforced=T1,
        trait_first_observed=T2,
        trait_window_start=T1,
        trait_window_end=T2,
        trait_derived_from="reflection",
    )
    row = reload(memory)
    assert (row.trait_subtype, row.trait_stage, row.trait_context) == (
        "preference",
        "emerging",
        "work",
    )
    assert row.trait_confidence == pytest.approx(0.75, abs=1e-6)
    assert row.trait_parent_id == parent
    assert (row.trait_reinforcement_count, row.trait_contradiction_count) == (5, 2)
    assert (row.trait_last_reinforced, row.trait_first_observed) == (T1, T2)
    assert (row.trait_window_start, row.trait_window_end) == (T1, T2)
    assert row.trait_derived_from == "reflection"


def test_timeline_fields_roundtrip():  # TC-O04
    memory = Memory.objects.create(
        user_id="u1", memory_type="fact", content="x", valid_at=T1, invalid_at=T2, expired_at=T2
    )
    row = reload(memory)
    assert (row.valid_at, row.invalid_at, row.expired_at) == (T1, T2, T2)


def test_content_hash_entities_and_sources_roundtrip():  # TC-O05, O06, O07
    subject, obj = uuid.uuid4(), uuid.uuid4()
    episodes = [uuid.uuid4() for _ in range(3)]
    memory = Memory.objects.create(
        user_id="u1",
        memory_type="fact",
        content="x",
        content_hash="d41d8cd98f00b204e9800998ecf8427e",
        subject_entity_id=subject,
        object_entity_id=obj,
        source_episode_ids=episodes,
    )
    row = reload(memory)
    assert row.content_hash == "d41d8cd98f00b204e9800998ecf8427e"
    assert (row.subject_entity_id, row.object_entity_id) == (subject, obj)
    assert row.source_episode_ids == episodes


def test_defaults_of_a_new_memory():
    memory = reload(Memory.objects.create(user_id="u1", memory_type="fact", content="x"))
    assert (memory.version, memory.importance, memory.score, memory.access_count) == (1, 0.5, 50, 0)
    assert memory.metadata == {}
    assert memory.embedding is None
    # TC-W07 at the model level: a non-trait written through the ORM has no trait values.
    trait_columns = [f.name for f in Memory._meta.fields if f.name.startswith("trait_")]
    assert len(trait_columns) == 12
    assert all(getattr(memory, name) is None for name in trait_columns)


def test_halfvec_embedding_roundtrip(settings):
    vector = [((n % 10) + 1) / 10 for n in range(settings.EMBEDDING_DIM)]
    memory = Memory.objects.create(user_id="u1", memory_type="fact", content="x", embedding=vector)
    assert list(reload(memory).embedding) == pytest.approx(vector, abs=1e-3)


@pytest.mark.parametrize(
    ("field", "value", "constraint"),
    [
        # A type outside the four has no partition to go to, before the CHECK is reached.
        ("memory_type", "general", 'no partition of relation "memories"'),
        ("importance", 1.5, "chk_memory_importance"),
        ("score", -1, "chk_memory_score"),
    ],
)
def test_database_rejects_invalid_memories(field, value, constraint):
    values = {"user_id": "u1", "memory_type": "fact", "content": "x", field: value}
    with pytest.raises(IntegrityError, match=constraint), transaction.atomic():
        Memory.objects.create(**values)


def test_trait_evidence_crud_and_checks():  # TC-O08
    trait_id, memory_id = uuid.uuid4(), uuid.uuid4()
    evidence = TraitEvidence.objects.create(
        trait_id=trait_id, memory_id=memory_id, evidence_type="supporting", quality="A"
    )
    row = TraitEvidence.objects.get(pk=evidence.pk)
    assert (row.trait_id, row.memory_id, row.evidence_type, row.quality) == (
        trait_id,
        memory_id,
        "supporting",
        "A",
    )
    assert row.created_at is not None
    for bad, constraint in [
        ({"evidence_type": "invalid"}, "chk_evidence_type"),
        ({"quality": "E"}, "chk_quality"),
    ]:
        values = {
            "trait_id": trait_id,
            "memory_id": memory_id,
            "evidence_type": "supporting",
            "quality": "A",
            **bad,
        }
        with pytest.raises(IntegrityError, match=constraint), transaction.atomic():
            TraitEvidence.objects.create(**values)


def test_memory_history_crud_for_every_event():  # TC-O09
    memory_id = uuid.uuid4()
    for event in HistoryEvent.values:
        MemoryHistory.objects.create(
            memory_id=memory_id, memory_type="fact", event=event, new_content="测试内容"
        )
    rows = MemoryHistory.objects.filter(memory_id=memory_id)
    assert sorted(rows.values_list("event", flat=True)) == sorted(HistoryEvent.values)
    first = rows.get(event="ADD")
    assert (first.old_content, first.new_content, first.actor) == (None, "测试内容", "system")
    assert first.created_at is not None


def test_history_rows_written_by_sql_get_database_defaults():
    # The audit trigger will insert without the ORM: id, actor and created_at come from the DB.
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO memory_history (memory_id, memory_type, event) "
            "VALUES (gen_random_uuid(), 'fact', 'ADD') RETURNING id, actor, created_at"
        )
        history_id, actor, created_at = cursor.fetchone()
    assert history_id is not None and actor == "system" and created_at is not None


def test_reflection_cycle_crud_and_completion():  # TC-O10
    cycle = ReflectionCycle.objects.create(
        user_id="u1", trigger_type="importance_accumulated", trigger_value=3.5
    )
    row = ReflectionCycle.objects.get(pk=cycle.pk)
    assert (row.trigger_type, row.trigger_value, row.status) == (
        "importance_accumulated",
        3.5,
        "running",
    )
    assert (row.memories_scanned, row.traits_created, row.traits_updated, row.traits_dissolved) == (
        0,
        0,
        0,
        0,
    )
    assert row.started_at is not None and row.completed_at is None
    ReflectionCycle.objects.filter(pk=cycle.pk).update(status="completed", completed_at=T1)
    row.refresh_from_db()
    assert (row.status, row.completed_at) == ("completed", T1)


def test_memory_source_crud_and_composite_key():  # TC-O11, TC-O12
    memory_id, session_id, message_id = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    MemorySource.objects.create(memory_id=memory_id, session_id=session_id)
    MemorySource.objects.create(
        memory_id=memory_id, session_id=uuid.uuid4(), conversation_id=message_id
    )
    row = MemorySource.objects.get(pk=(memory_id, session_id))
    assert row.conversation_id is None and row.created_at is not None
    assert MemorySource.objects.filter(memory_id=memory_id).count() == 2
    with pytest.raises(IntegrityError), transaction.atomic():
        MemorySource.objects.create(memory_id=memory_id, session_id=session_id)


def test_auxiliary_tables_exist():  # TC-O13
    tables = set(connection.introspection.table_names())
    assert {
        "trait_evidence",
        "memory_history",
        "reflection_cycles",
        "memory_sources",
        "conversation_sessions",
        "conversations",
        "soul_versions",
    } <= tables


def test_session_holds_its_messages_and_takes_them_along():
    session = ConversationSession.objects.create(user_id="u1")
    ConversationMessage.objects.create(session=session, user_id="u1", role="user", content="hi")
    assert session.messages.count() == 1
    assert session.last_reflected_at is None
    with connection.cursor() as cursor:  # the database cascades too, not only the ORM
        cursor.execute("DELETE FROM conversation_sessions WHERE id = %s", [session.id])
    assert ConversationMessage.objects.count() == 0


def test_only_one_active_soul_version_per_agent():
    agent = Agent.objects.create(name="one")
    SoulVersion.objects.create(
        agent=agent, version=0, content="v0", status="active", created_by="bootstrap"
    )
    SoulVersion.objects.create(
        agent=agent, version=1, content="v1", status="proposed", created_by="agent"
    )
    with pytest.raises(IntegrityError, match="soul_versions_one_active"), transaction.atomic():
        SoulVersion.objects.create(
            agent=agent, version=2, content="v2", status="active", created_by="agent"
        )
    with pytest.raises(IntegrityError), transaction.atomic():
        SoulVersion.objects.create(
            agent=agent, version=1, content="dup", status="proposed", created_by="agent"
        )
    other = Agent.objects.create(name="two")
    SoulVersion.objects.create(
        agent=other, version=0, content="v0", status="active", created_by="bootstrap"
    )
