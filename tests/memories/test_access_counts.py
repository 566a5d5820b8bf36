"""Access tracking: recall counts in Redis, beat's flush writes the counts, nothing is lost."""

import threading

import pytest
from django.conf import settings
from django.db import connection
from django.test import override_settings

from core.access import SYSTEM, Caller
from core.redis_client import app_redis
from memories.access_counts import (
    FLUSHING_PREFIX,
    PENDING_KEY,
    accesses_flush,
    accesses_record,
)
from memories.models import Memory, MemoryHistory
from memories.recall import RecallQuery, memories_recall
from memories.services import MemoryInput, memories_embed, memory_add_many

USER = "agent:alice"


@pytest.fixture(autouse=True)
def clean_counters():
    def clear() -> None:
        client = app_redis()
        client.delete(PENDING_KEY, *client.keys(f"{FLUSHING_PREFIX}*"))

    clear()
    yield
    clear()


def remember(*contents: str) -> list[Memory]:
    results = memory_add_many(
        items=[MemoryInput(user_id=USER, content=c, memory_type="fact") for c in contents],
        caller=Caller(name="test", is_staff=True),
    )
    memories_embed(memory_ids=[result.memory.id for result in results])
    return [result.memory for result in results]


def recall_over_http(http, query: str) -> list[dict]:
    response = http.post("/api/v1/recall/", {"user_id": USER, "query": query}, format="json")
    assert response.status_code == 200
    return response.json()["data"]["merged"]


@pytest.mark.django_db
def test_recall_counts_accesses_and_the_flush_writes_them(make_client):
    http, _ = make_client("agent", ["agent:"])
    tea, oslo = remember("I like green tea", "My brother lives in Oslo")
    for _ in range(3):
        assert [hit["id"] for hit in recall_over_http(http, "green tea")] == [str(tea.id)]
    Memory.objects.filter(pk=tea.pk).update(access_count=0)  # counted in Redis, not yet here
    history_before = MemoryHistory.objects.count()
    assert accesses_flush() == 1
    tea.refresh_from_db()
    oslo.refresh_from_db()
    assert (tea.access_count, oslo.access_count) == (3, 0)
    assert tea.last_accessed_at is not None and oslo.last_accessed_at is None
    assert MemoryHistory.objects.count() == history_before  # bookkeeping, not an audit event
    assert accesses_flush() == 0  # nothing new
    assert recall_over_http(http, "green tea")[0]["access_count"] == 3


@pytest.mark.django_db(transaction=True)
def test_no_increment_is_lost_when_recalls_run_during_flushes():
    remember(
        *[
            f"I like the jazz album {title}"
            for title in (
                "Kind of Blue",
                "A Love Supreme",
                "Time Out",
                "Head Hunters",
                "Mingus Ah Um",
            )
        ]
    )
    threads_count, recalls_each = 4, 15
    returned = []
    errors = []
    done = threading.Event()

    def recaller() -> None:
        try:
            for _ in range(recalls_each):
                hits = memories_recall(
                    caller=SYSTEM, request=RecallQuery(user_id=USER, query="jazz album")
                )
                accesses_record(memory_ids=[hit.memory.id for hit in hits])
                returned.append(len(hits))
        except Exception as error:  # surfaced below
            errors.append(error)
        finally:
            connection.close()

    def flusher() -> None:
        try:
            while not done.is_set():
                accesses_flush()
        except Exception as error:
            errors.append(error)
        finally:
            connection.close()

    workers = [threading.Thread(target=recaller) for _ in range(threads_count)]
    flushing = threading.Thread(target=flusher)
    flushing.start()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    done.set()
    flushing.join()
    accesses_flush()
    assert not errors
    assert len(returned) == threads_count * recalls_each and all(n == 5 for n in returned)
    total = sum(Memory.objects.filter(user_id=USER).values_list("access_count", flat=True))
    assert total == sum(returned)


@pytest.mark.django_db
def test_a_flush_interrupted_after_the_rename_is_applied_by_the_next_one():
    [memory] = remember("I like green tea")
    client = app_redis()
    client.hset(f"{FLUSHING_PREFIX}crashed", mapping={str(memory.id): 2, f"{memory.id}@": 1.7e9})
    client.hincrby(PENDING_KEY, str(memory.id), 1)
    assert accesses_flush() == 2  # one update per hash
    memory.refresh_from_db()
    assert memory.access_count == 3
    assert not client.keys(f"{FLUSHING_PREFIX}*")


@pytest.mark.django_db
def test_recall_answers_when_redis_is_down(make_client):
    http, _ = make_client("agent", ["agent:"])
    remember("I like green tea")
    app_redis.cache_clear()
    try:
        with override_settings(REDIS_URL="redis://127.0.0.1:1/0"):  # nothing listens there
            hits = recall_over_http(http, "green tea")
    finally:
        app_redis.cache_clear()
    assert [hit["content"] for hit in hits] == ["I like green tea"]


def test_beat_flushes_every_five_minutes():
    entry = settings.CELERY_BEAT_SCHEDULE["flush-memory-accesses"]
    assert (entry["task"], entry["schedule"]) == ("memories.tasks.flush_accesses", 300)
