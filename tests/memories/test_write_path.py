"""The write path's services (seed 001 TC-W01–W10, seed 002 §5.3–§5.5) and the audit log."""

import hashlib
import json
import threading

import numpy as np
import pytest
from django.conf import settings
from django.db import connection, connections, transaction

from core.access import SYSTEM, Caller
from core.errors import Conflict, Invalid
from memories.embeddings import LEXICAL_DIMENSIONS
from memories.models import (
    ConversationSession,
    EmbeddingStatus,
    Memory,
    MemoryHistory,
    MemorySource,
)
from memories.services import (
    MemoryInput,
    Operation,
    dedup,
    memories_embed,
    memory_add,
    memory_add_many,
    memory_delete,
    memory_invalidate,
    memory_supersede,
    memory_update,
    writes,
)
from memories.traits import trait_fields

pytestmark = pytest.mark.django_db


def add(content: str, memory_type: str = "fact", user_id: str = "u1", **fields):
    return memory_add(
        item=MemoryInput(user_id=user_id, content=content, memory_type=memory_type, **fields),
        caller=Caller(name="test", is_staff=True),
    )


def history(memory: Memory) -> list[tuple[str, str]]:
    return list(
        MemoryHistory.objects.filter(memory_id=memory.id)
        .order_by("created_at", "event")
        .values_list("event", "actor")
    )


def test_write_computes_content_hash():  # TC-W01
    result = add("Hello World")
    assert result.operation == Operation.ADD
    assert result.memory.content_hash == "b10a8db164e0754105b7a99be72e3fe5"


def test_same_content_is_a_noop():  # TC-W02
    first = add("Same content")
    second = add("Same content")
    assert second.operation == Operation.NOOP and second.memory.id == first.memory.id
    assert Memory.objects.filter(user_id="u1", content="Same content").count() == 1


def test_noop_is_scoped_by_user_and_type():  # TC-W03, TC-W04
    add("Same content")
    assert add("Same content", user_id="u2").operation == Operation.ADD
    assert add("Same content", memory_type="episodic").operation == Operation.ADD
    assert Memory.objects.filter(content="Same content").count() == 3


def test_trait_metadata_fills_columns_and_stays_in_metadata():  # TC-W05, TC-W06
    metadata = {
        "trait_subtype": "preference",
        "trait_stage": "emerging",
        "confidence": 0.8,
        "context": "work",
    }
    memory = add("用户偏好 Python", memory_type="trait", metadata=metadata).memory
    memory.refresh_from_db()
    assert (memory.trait_subtype, memory.trait_stage, memory.trait_context) == (
        "preference",
        "emerging",
        "work",
    )
    assert memory.trait_confidence == pytest.approx(0.8)
    assert memory.metadata == metadata


def test_non_trait_leaves_trait_columns_null():  # TC-W07
    memory = add("a fact", metadata={"trait_stage": "core"}).memory
    memory.refresh_from_db()
    assert all(
        getattr(memory, f.name) is None for f in Memory._meta.fields if f.name.startswith("trait_")
    )


def test_valid_at_defaults_to_now():  # TC-W08
    memory = add("test").memory
    assert memory.valid_at is not None


def test_legacy_types_are_mapped():
    assert add("old general", memory_type="general").memory.memory_type == "fact"
    insight = add("an insight", memory_type="insight").memory
    insight.refresh_from_db()
    assert (insight.memory_type, insight.trait_stage) == ("trait", "trend")
    assert (insight.trait_window_end - insight.trait_window_start).days == 30


def test_invalid_trait_values_name_the_field():
    with pytest.raises(Invalid) as error:
        add("x", memory_type="trait", metadata={"trait_stage": "famous"})
    assert error.value.field == "metadata.trait_stage"
    assert Memory.objects.count() == 0


SUPERSEDER = Caller(name="test", is_staff=True)
CHAIN_FIELDS = (
    "id",
    "user_id",
    "memory_type",
    "content",
    "content_hash",
    "version",
    "superseded_by",
    "expired_at",
    "created_at",
    "importance",
    "key",
    "metadata",
)


def test_supersede_sets_expired_at_and_chain():  # TC-W09, TC-W10
    a = add("lives in Berlin", importance=0.75, key="profile:city", metadata={"src": "chat"})
    b = memory_supersede(memory=a.memory, content="lives in Austin", caller=SUPERSEDER)
    c = memory_supersede(memory=b, content="lives in Boston", caller=SUPERSEDER)
    # The rows as stored, not the objects the calls returned.
    rows = {row["id"]: row for row in Memory.objects.filter(user_id="u1").values(*CHAIN_FIELDS)}
    assert set(rows) == {a.memory.id, b.id, c.id}
    first, middle, last = rows[a.memory.id], rows[b.id], rows[c.id]
    # Each version points at the next, and keeps its version number: the next carries n + 1.
    assert [(r["content"], r["version"], r["superseded_by"]) for r in (first, middle, last)] == [
        ("lives in Berlin", 1, b.id),
        ("lives in Austin", 2, c.id),
        ("lives in Boston", 3, None),
    ]
    # The middle version, field by field: its own content and hash, what it inherited from
    # the first, and expired when the last one was written.
    assert (middle["user_id"], middle["memory_type"]) == ("u1", "fact")
    assert middle["content_hash"] == "fe9c6e5dc78aba0d7c13d8e7b2aec9d9"
    assert (middle["importance"], middle["key"], middle["metadata"]) == (
        0.75,
        "profile:city",
        {"src": "chat"},
    )
    assert first["expired_at"] is not None and middle["expired_at"] is not None
    assert last["expired_at"] is None
    assert middle["created_at"] <= first["expired_at"] <= middle["expired_at"]
    assert last["created_at"] <= middle["expired_at"]
    assert (last["importance"], last["key"], last["metadata"]) == (
        0.75,
        "profile:city",
        {"src": "chat"},
    )
    assert history(a.memory) == [("ADD", "test"), ("SUPERSEDE", "test")]
    assert history(b) == [("ADD", "test"), ("SUPERSEDE", "test")]
    assert history(c) == [("ADD", "test")]


def test_near_duplicate_supersedes_the_current_memory():
    first = add("The user's favourite programming language is Python 3").memory
    result = add("The user's favourite programming language is Python 3!")
    assert result.operation == Operation.UPDATE
    assert result.superseded.id == first.id
    first.refresh_from_db()
    assert first.superseded_by == result.memory.id
    # The successor carries the next version; the replaced row keeps its own (they were both
    # 2 once, and /versions/ showed two "version 2"s).
    assert (first.version, result.memory.version) == (1, 2)


def test_near_duplicate_is_found_whether_the_older_memory_is_embedded_or_waiting():
    waiting = add("The user's favourite editor is Vim, version 9").memory
    embedded = add("The user's favourite editor is Vim, version 9", user_id="u2").memory
    assert memories_embed(memory_ids=[embedded.id]) == 1
    for older in (waiting, embedded):
        result = add("The user's favourite editor is Vim, version 9!", user_id=older.user_id)
        assert (result.operation, result.superseded.id) == (Operation.UPDATE, older.id)


def test_near_duplicates_are_looked_for_among_the_most_recent_memories(monkeypatch):
    monkeypatch.setattr(dedup, "DEDUP_WINDOW", 1)
    old = add("The user's favourite editor is Vim, version 9").memory
    add("The user has two cats called Miso and Tofu")
    assert add("The user's favourite editor is Vim, version 9!").operation == Operation.ADD
    old.refresh_from_db()
    assert old.expired_at is None


def test_near_duplicates_inside_one_batch_are_handled_as_separate_writes():
    results = memory_add_many(
        items=[
            MemoryInput(
                user_id="u1",
                content="The user's favourite editor is Vim, version 9",
                memory_type="fact",
            ),
            MemoryInput(
                user_id="u1",
                content="The user has two cats called Miso and Tofu",
                memory_type="fact",
            ),
            MemoryInput(
                user_id="u1",
                content="The user's favourite editor is Vim, version 9!",
                memory_type="fact",
            ),
            MemoryInput(
                user_id="u2",
                content="The user's favourite editor is Vim, version 9!",
                memory_type="fact",
            ),
        ],
        caller=SYSTEM,
    )
    first, cats, restated, other_user = results
    assert [r.operation for r in results] == [
        Operation.ADD,
        Operation.ADD,
        Operation.UPDATE,
        Operation.ADD,
    ]
    assert restated.superseded.id == first.memory.id
    assert restated.memory.version == 2
    current = Memory.objects.current().filter(user_id="u1").values_list("content", flat=True)
    assert sorted(current) == sorted([cats.memory.content, restated.memory.content])
    assert other_user.memory.version == 1


def test_unrelated_memory_is_an_add():
    add("The user's favourite programming language is Python")
    assert add("The user has two cats called Miso and Tofu").operation == Operation.ADD


def test_embedding_follows_the_write(settings):
    memory = add("用户喜欢在北京喝咖啡").memory
    # The lexical vector is stored at once (for near-duplicate checks); the memory gets its
    # embedding, and joins the vector side of recall, when the worker makes it ready.
    assert memory.embedding_status == EmbeddingStatus.PENDING
    assert memory.embedding is None
    assert len(memory.lexical_vector) == LEXICAL_DIMENSIONS
    assert memories_embed(memory_ids=[memory.id]) == 1  # what the worker's task does
    assert memories_embed(memory_ids=[memory.id]) == 0  # and running it again changes nothing
    memory.refresh_from_db()
    assert memory.embedding_status == EmbeddingStatus.READY
    assert len(memory.embedding) == settings.EMBEDDING_DIM
    assert sum(v * v for v in memory.embedding) == pytest.approx(1, abs=1e-2)


def test_client_embedding_of_the_wrong_length_is_rejected():
    with pytest.raises(Invalid) as error:
        add("x", embedding=[0.1, 0.2])
    assert error.value.field == "embedding"


def test_optimistic_lock_never_loses_an_update():
    memory = add("x", importance=0.2).memory
    updated = memory_update(
        memory=memory,
        version=1,
        changes={"importance": 0.9},
        caller=Caller(name="a", is_staff=True),
    )
    assert updated.version == 2
    with pytest.raises(Conflict) as conflict:
        memory_update(
            memory=memory,
            version=1,
            changes={"importance": 0.1},
            caller=Caller(name="b", is_staff=True),
        )
    assert conflict.value.extra["current_version"] == 2
    memory.refresh_from_db()
    assert memory.importance == pytest.approx(0.9)


def test_patching_content_makes_a_new_version():
    memory = add("deadline is March 1").memory
    successor = memory_update(
        memory=memory, version=1, changes={"content": "deadline is April 1"}, caller=SUPERSEDER
    )
    rows = (
        Memory.objects.filter(user_id="u1")
        .order_by("created_at")
        .values_list("id", "content", "version", "superseded_by", "expired_at")
    )
    (old_id, old_content, old_version, link, expired), new_row = rows
    assert (old_id, old_content, old_version, link) == (
        memory.id,
        "deadline is March 1",
        1,
        successor.id,
    )
    assert expired is not None
    assert new_row == (successor.id, "deadline is April 1", 2, None, None)


def test_changing_type_moves_the_row_and_logs_one_update():
    memory = add("prefers tea").memory
    memory_update(
        memory=memory,
        version=1,
        changes={"memory_type": "episodic"},
        caller=Caller(name="editor", is_staff=True),
    )
    assert history(memory) == [("ADD", "test"), ("UPDATE", "editor")]
    with connection.cursor() as cursor:
        cursor.execute("SELECT tableoid::regclass::text FROM memories WHERE id = %s", [memory.id])
        assert cursor.fetchone() == ("memories_episodic",)


def test_delete_and_invalidate_are_soft_and_logged():
    deleted = memory_delete(
        memory=add("to delete").memory, caller=Caller(name="user", is_staff=True)
    )
    invalid = memory_invalidate(
        memory=add("no longer true").memory, caller=Caller(name="user", is_staff=True)
    )
    assert deleted.expired_at is not None and invalid.invalid_at is not None
    assert Memory.objects.filter(pk__in=[deleted.pk, invalid.pk]).count() == 2
    assert history(deleted)[-1] == ("DELETE", "user")
    assert history(invalid)[-1] == ("DELETE", "user")


def test_history_is_written_whatever_changes_the_row():
    memory = add("raw").memory
    with connection.cursor() as cursor:
        # The test runs in one transaction; a raw-SQL session would start with no actor.
        cursor.execute("SELECT set_config('neuromem.actor', '', true)")
        cursor.execute("UPDATE memories SET content = 'raw sql' WHERE id = %s", [memory.id])
        cursor.execute("UPDATE memories SET access_count = 3 WHERE id = %s", [memory.id])
    assert history(memory) == [("ADD", "test"), ("UPDATE", "system")]


def test_history_is_append_only():
    memory = add("x").memory
    rows = MemoryHistory.objects.filter(memory_id=memory.id)
    with transaction.atomic(), pytest.raises(Exception, match="Cannot delete rows"):
        rows.delete()
    with transaction.atomic(), pytest.raises(Exception, match="Cannot update rows"):
        rows.update(new_content="rewritten")
    with transaction.atomic(), pytest.raises(Exception, match="Cannot update rows"):
        rows.update(actor="someone else", new_content=None)
    assert list(rows.values_list("event", "new_content", "actor")) == [("ADD", "x", "test")]


def test_a_forget_may_erase_history_content_and_nothing_else():
    memory = add("x", metadata={"note": "y"}).memory
    rows = MemoryHistory.objects.filter(memory_id=memory.id)
    rows.update(old_content=None, new_content=None, old_metadata=None, new_metadata=None)
    assert list(rows.values_list("event", "new_content", "new_metadata", "actor")) == [
        ("ADD", None, None, "test")
    ]


def test_session_provenance():
    session_id = ConversationSession.objects.create(user_id="u1").id
    memory = add("from a chat", session_id=session_id).memory
    assert memory.source_episode_ids == [session_id]
    assert MemorySource.objects.filter(memory_id=memory.id, session_id=session_id).exists()


def test_batch_reports_a_bad_item_and_keeps_the_rest():
    results = memory_add_many(
        items=[
            MemoryInput(user_id="u1", content="one", memory_type="fact"),
            MemoryInput(user_id="u1", content="bad", memory_type="note"),
            MemoryInput(user_id="u1", content="one", memory_type="fact"),
            MemoryInput(user_id="u1", content="three", memory_type="episodic"),
        ],
        caller=Caller(name="batch", is_staff=True),
    )
    assert [getattr(r, "operation", "error") for r in results] == ["ADD", "error", "NOOP", "ADD"]
    assert results[1].field == "memory_type"
    assert Memory.objects.count() == 2


def test_trait_fields_parse_types():
    fields = trait_fields(
        memory_type="trait",
        metadata={"reinforcement_count": 4, "first_observed": "2025-01-01T00:00:00Z"},
    )
    assert fields["trait_reinforcement_count"] == 4
    assert fields["trait_first_observed"].year == 2025
    whole = trait_fields(memory_type="trait", metadata={"contradiction_count": 3.0})
    assert whole["trait_contradiction_count"] == 3  # a whole number, as JSON clients send it


@pytest.mark.django_db(transaction=True)
def test_concurrent_identical_writes_make_one_row():
    barrier = threading.Barrier(8)
    operations: list[str] = []

    def write() -> None:
        try:
            barrier.wait()
            operations.append(add("exactly once, please", user_id="race").operation)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=write) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(operations) == ["ADD"] + ["NOOP"] * 7
    assert Memory.objects.filter(user_id="race").count() == 1
    assert (
        hashlib.md5(b"exactly once, please").hexdigest()
        == Memory.objects.get(user_id="race").content_hash
    )


def test_the_services_refuse_text_postgresql_cannot_store_whoever_calls():
    """Not only the API's fields: a caller of the services (a job, the admin) gets Invalid."""
    memory = add("plain").memory
    with pytest.raises(Invalid) as error:
        memory_update(
            memory=memory,
            version=1,
            changes={"metadata": {"a": "\0"}},
            caller=Caller(name="test", is_staff=True),
        )
    assert error.value.field == "metadata"
    with pytest.raises(Invalid) as error:
        add("with a key", key="k\ud800")
    assert error.value.field == "key"
    memory.refresh_from_db()
    assert (memory.version, memory.metadata) == (1, {})


# --- Near duplicates by meaning (seed 002 §5.4; memories/services/dedup.py) -----------------

DRINK = "The user's favourite drink is green tea"
DRINK_AGAIN = "Green tea is what the user likes to drink best"
PET = "The user has two cats called Miso and Tofu"


def direction(*weights: float) -> list[float]:
    """A unit vector of EMBEDDING_DIM dimensions with these first components."""
    vector = np.zeros(settings.EMBEDDING_DIM)
    vector[: len(weights)] = weights
    return list(vector / np.linalg.norm(vector))


# Cosine 0.99 with DRINK's; orthogonal to both.
MEANINGS = {DRINK: direction(1.0), DRINK_AGAIN: direction(0.99, 0.141), PET: direction(0, 0, 1)}


class MeaningProvider:
    """Stands in for the model: the embeddings above, so the test says which texts mean the
    same (their words differ: lexically they are far below DEDUP_SIMILARITY)."""

    model_id = "meanings"

    def __init__(self, dimensions: int) -> None:
        self.dimensions = dimensions
        self.embedded: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.embedded += texts
        return np.asarray([MEANINGS[text] for text in texts], dtype=np.float32)


@pytest.fixture
def meanings(monkeypatch, settings) -> MeaningProvider:
    provider = MeaningProvider(settings.EMBEDDING_DIM)
    monkeypatch.setattr("memories.services.embedding_jobs.embedding_provider", lambda: provider)
    return provider


def test_the_words_alone_do_not_make_these_near_duplicates():
    vectors = dedup.lexical_provider().embed([DRINK, DRINK_AGAIN])
    assert float(vectors[0] @ vectors[1]) < settings.DEDUP_SIMILARITY  # 0.82


def test_a_client_embedding_is_compared_by_meaning_inside_the_write():
    first = add(DRINK, embedding=MEANINGS[DRINK]).memory
    other = add(PET, embedding=MEANINGS[PET]).memory
    result = add(DRINK_AGAIN, embedding=MEANINGS[DRINK_AGAIN])
    assert (result.operation, result.superseded.id) == (Operation.UPDATE, first.id)
    assert result.memory.version == 2
    other.refresh_from_db()
    assert other.expired_at is None
    # Without an embedding, the write compares words only: an ADD (the worker will look).
    assert add(DRINK, user_id="u2").operation == Operation.ADD
    assert add(DRINK_AGAIN, user_id="u2").operation == Operation.ADD


def test_client_embeddings_in_one_batch_are_compared_by_meaning():
    results = memory_add_many(
        items=[
            MemoryInput(user_id="u1", content=text, memory_type="fact", embedding=MEANINGS[text])
            for text in (DRINK, PET, DRINK_AGAIN)
        ],
        caller=SYSTEM,
    )
    assert [r.operation for r in results] == [Operation.ADD, Operation.ADD, Operation.UPDATE]
    assert results[2].superseded.id == results[0].memory.id


def test_the_worker_confirms_by_meaning_the_later_superseding_the_earlier(meanings):
    first = add(DRINK, key="drink").memory
    pet = add(PET).memory
    second = add(DRINK_AGAIN)
    assert second.operation == Operation.ADD  # the write cannot know the meaning yet
    # Embedded in the order the tasks happen to run: the later first, finding nothing ready.
    assert memories_embed(memory_ids=[second.memory.id]) == 1
    assert Memory.objects.current().filter(user_id="u1").count() == 3
    assert memories_embed(memory_ids=[first.id, pet.id]) == 2

    rows = {row.id: row for row in Memory.objects.filter(user_id="u1")}
    earlier, later = rows[first.id], rows[second.memory.id]
    assert (earlier.superseded_by, earlier.expired_at is not None) == (later.id, True)
    # The later is the next version and keeps the key the earlier held.
    assert (later.expired_at, later.version, later.key) == (None, 2, "drink")
    assert rows[pet.id].expired_at is None
    assert history(earlier) == [("ADD", "test"), ("SUPERSEDE", "system")]
    assert history(later) == [("ADD", "test"), ("UPDATE", "system")]  # the key moved
    # Running the task again changes nothing.
    assert memories_embed(memory_ids=[first.id, second.memory.id, pet.id]) == 0


def test_a_task_delivered_again_after_dying_before_the_check_confirms_then(meanings, monkeypatch):
    first, second = add(DRINK).memory, add(DRINK_AGAIN).memory
    confirm = writes.duplicates_by_meaning_supersede

    def worker_lost(*, memory_ids):
        raise ConnectionError("the worker died after storing the vectors")

    monkeypatch.setattr(writes, "duplicates_by_meaning_supersede", worker_lost)
    with pytest.raises(ConnectionError):
        memories_embed(memory_ids=[first.id, second.id])
    assert Memory.objects.filter(embedding_status="ready").count() == 2
    monkeypatch.setattr(writes, "duplicates_by_meaning_supersede", confirm)
    # The broker delivers the unacknowledged task again: nothing left to embed, still checked.
    assert memories_embed(memory_ids=[first.id, second.id]) == 0
    first.refresh_from_db()
    assert first.superseded_by == second.id


def test_the_worker_leaves_a_restatement_under_another_key_and_traits_alone(meanings):
    keyed = add(DRINK, key="drink").memory
    other_key = add(DRINK_AGAIN, key="beverage").memory
    trait = add(DRINK, memory_type="trait").memory
    trait_again = add(DRINK_AGAIN, memory_type="trait").memory
    ids = [keyed.id, other_key.id, trait.id, trait_again.id]
    assert memories_embed(memory_ids=ids) == 4
    assert Memory.objects.current().filter(pk__in=ids).count() == 4


def test_a_rebuild_and_the_hashing_provider_confirm_nothing(meanings, settings):
    first, second = add(DRINK).memory, add(DRINK_AGAIN).memory
    # A rebuild re-embeds memories written before: not confirmed.
    memories_embed(memory_ids=[first.id, second.id], confirm_duplicates=False)
    assert Memory.objects.current().filter(user_id="u1").count() == 2
    # ... nor while one is unfinished (its reset left them pending), however they reach the
    # worker (beat's requeue).
    third = add(DRINK_AGAIN + ".").memory
    with connection.cursor() as cursor:
        cursor.execute(
            "COMMENT ON COLUMN memories.embedding IS %s",
            [json.dumps({"model_id": "meanings", "dimensions": 1, "complete": False})],
        )
    MEANINGS[third.content] = MEANINGS[DRINK_AGAIN]
    try:
        assert memories_embed(memory_ids=[third.id]) == 1
        assert Memory.objects.current().filter(user_id="u1").count() == 2  # third: lexical UPDATE
        # The hashing provider's vectors are lexical, as the write compared already.
        with connection.cursor() as cursor:
            cursor.execute("COMMENT ON COLUMN memories.embedding IS NULL")
        settings.EMBEDDING_PROVIDER = "hashing"
        fourth = add(DRINK, user_id="u2").memory
        fifth = add(DRINK_AGAIN, user_id="u2").memory
        assert memories_embed(memory_ids=[fourth.id, fifth.id]) == 2
        assert Memory.objects.current().filter(user_id="u2").count() == 2
    finally:
        del MEANINGS[third.content]
