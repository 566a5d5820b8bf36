"""Writes that run at the same time as others: a purge waits for none of the user's writes to
be half done and none starts while it runs; a message is dated when it holds its locks; a
memory moving to another type is alike only to that type's memories, and the embedding
worker's supersede by meaning never pairs two types."""

import threading

import numpy as np
import pytest
from django.conf import settings
from django.db import connections, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from core.access import SYSTEM
from core.errors import Conflict
from memories.ingest import session_message_add, session_open
from memories.models import Memory, MemoryHistory, MemoryType
from memories.services import MemoryInput, lock_memory_writes, memory_add, memory_update, writes
from memories.services.dedup import near_duplicates_by_meaning
from memories.services.user_data import user_purge
from memories.services.writes import duplicates_by_meaning_supersede
from memories.signals import user_data_purged

pytestmark = pytest.mark.django_db(transaction=True)
USER = "race:ana"


def fact(content: str, memory_type: str = MemoryType.FACT) -> Memory:
    return memory_add(
        item=MemoryInput(user_id=USER, content=content, memory_type=memory_type), caller=SYSTEM
    ).memory


def in_thread(work) -> threading.Thread:
    def run() -> None:
        try:
            work()
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_a_write_asked_for_while_the_user_is_purged_waits_and_comes_whole_after_it():
    fact("An old fact")
    written: list[Memory] = []
    writer: list[threading.Thread] = []

    def while_purging(sender, user_id, memory_ids, **kwargs) -> dict:
        writer.append(in_thread(lambda: written.append(fact("The PIN hint is the cat"))))
        writer[0].join(timeout=2)  # waits for the purge's locks
        assert writer[0].is_alive()
        return {}

    user_data_purged.connect(while_purging, dispatch_uid="test-write-races")
    try:
        counts = user_purge(caller=SYSTEM, user_id=USER)
    finally:
        user_data_purged.disconnect(dispatch_uid="test-write-races")
    writer[0].join()
    assert counts["memories"] == 1
    # What came after the purge is there whole, with its history: no row of it was purged
    # half-way, and nothing the purge removed left its history behind.
    assert list(Memory.objects.filter(user_id=USER).values_list("content", flat=True)) == [
        "The PIN hint is the cat"
    ]
    orphans = MemoryHistory.objects.exclude(Exists(Memory.objects.filter(pk=OuterRef("memory_id"))))
    assert not orphans.exists()
    assert MemoryHistory.objects.filter(memory_id=written[0].id).exists()


def test_a_message_waiting_for_the_user_s_locks_is_dated_when_it_gets_them():
    session = session_open(caller=SYSTEM, user_id=USER)
    with transaction.atomic():
        lock_memory_writes({(USER, MemoryType.FACT)})  # as a forget holds them
        thread = in_thread(
            lambda: session_message_add(
                session=session, role="user", content="I live in Hangzhou.", caller=SYSTEM
            )
        )
        thread.join(timeout=2)
        assert thread.is_alive()
        released = timezone.now()
    thread.join()
    (message,) = session.messages.all()
    assert message.created_at >= released  # said after what held the locks, not before


def test_a_memory_moving_to_a_type_that_holds_its_content_is_a_conflict():
    moving = fact("Same words")
    held = fact("Same words", MemoryType.EPISODIC)
    with pytest.raises(Conflict) as refused:
        memory_update(
            memory=moving, version=1, changes={"memory_type": MemoryType.EPISODIC}, caller=SYSTEM
        )
    assert (refused.value.field, refused.value.extra["memory_id"]) == ("content", str(held.id))
    current = Memory.objects.current().filter(user_id=USER)
    assert sorted(current.values_list("memory_type", flat=True)) == ["episodic", "fact"]


def unit_vector(seed: int) -> list[float]:
    vector = np.random.default_rng(seed).normal(size=settings.EMBEDDING_DIM)
    return (vector / np.linalg.norm(vector)).tolist()


def test_the_worker_never_supersedes_a_memory_that_moved_to_another_type_meanwhile(monkeypatch):
    vector = unit_vector(1)
    earlier, later = fact("The user walks the dog every evening"), fact("Each evening: dog walk")
    Memory.objects.filter(pk__in=[earlier.pk, later.pk]).update(
        embedding=vector, embedding_status="ready"
    )
    superseded: list[int] = []
    found = threading.Event()

    def pairs_found(memory_ids):
        pairs = near_duplicates_by_meaning(memory_ids)
        found.set()
        return pairs

    monkeypatch.setattr(writes, "near_duplicates_by_meaning", pairs_found)
    with transaction.atomic():
        memory_update(
            memory=earlier, version=1, changes={"memory_type": MemoryType.EPISODIC}, caller=SYSTEM
        )
        worker = in_thread(
            lambda: superseded.append(duplicates_by_meaning_supersede(memory_ids=[later.id]))
        )
        assert found.wait(timeout=30)  # the pair, as committed: two facts; then this write's locks
    worker.join()
    assert superseded == [0]
    moved = Memory.objects.get(pk=earlier.pk)
    assert (moved.memory_type, moved.superseded_by, moved.expired_at) == ("episodic", None, None)
