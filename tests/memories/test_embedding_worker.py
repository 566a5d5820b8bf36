"""Embeddings computed after commit by a real Celery worker process, from an
OpenAI-compatible HTTP provider (a fake one on loopback); an outage never loses a write."""

import json
import time

import numpy as np
import pytest
from django.conf import settings
from prometheus_client.parser import text_string_to_metric_families

from core.access import Caller
from memories.embeddings import embedding_provider
from memories.models import EmbeddingStatus, Memory
from memories.services import MemoryInput, memory_add
from tests.fake_openai import FakeOpenAIHandler, serving
from tests.worker import celery_worker, worker_hostname

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


class FakeEmbeddings(FakeOpenAIHandler):
    failing = False
    malformed = False  # a vector holding a null
    calls = 0

    def answer(self, path: str, body: dict) -> tuple[int, dict | None]:
        type(self).calls += 1
        if self.failing or path != "/v1/embeddings":
            return 503, None
        dims = body["dimensions"]
        data = [
            {"index": i, "embedding": [((i + n) % 7 + 1) / 7 for n in range(dims)]}
            for i, _ in enumerate(body["input"])
        ]
        if self.malformed:
            data[0]["embedding"][0] = None
        return 200, {"data": data}


@pytest.fixture
def provider(settings):
    with serving(FakeEmbeddings) as base_url:
        settings.EMBEDDING_PROVIDER = "openai"
        settings.EMBEDDING_API_BASE = base_url
        embedding_provider.cache_clear()
        yield base_url
    FakeEmbeddings.failing = FakeEmbeddings.malformed = False
    embedding_provider.cache_clear()


@pytest.fixture
def worker(provider, settings):
    with celery_worker(
        hostname=worker_hostname("test-embedding"),
        EMBEDDING_PROVIDER="openai",
        EMBEDDING_API_BASE=settings.EMBEDDING_API_BASE,
        EMBEDDING_DIM=str(settings.EMBEDDING_DIM),
        EMBEDDING_MAX_RETRIES="2",
        EMBEDDING_RETRY_BACKOFF="0.2",
    ) as process:
        yield process


def wait_for_status(memory: Memory, status: str, timeout: float = 60) -> Memory:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        memory.refresh_from_db()
        if memory.embedding_status == status:
            return memory
        time.sleep(0.2)
    raise AssertionError(f"embedding_status stayed {memory.embedding_status}, wanted {status}")


def embeddings_counted(client, outcome: str) -> float:
    scraped = client.get("/metrics").content.decode()
    for family in text_string_to_metric_families(scraped):
        for sample in family.samples:
            if sample.name == "neuromem_embeddings_total" and sample.labels == {"outcome": outcome}:
                return sample.value
    return 0.0


def write(content: str) -> Memory:
    return memory_add(
        item=MemoryInput(user_id="u1", content=content, memory_type="fact"),
        caller=Caller(name="test", is_staff=True),
    ).memory


def test_worker_embeds_after_commit(worker, client):
    ready_before = embeddings_counted(client, "ready")
    memory = write("embedded by the worker")
    assert memory.embedding_status == EmbeddingStatus.PENDING and memory.embedding is None
    memory = wait_for_status(memory, EmbeddingStatus.READY)
    assert len(memory.embedding) == settings.EMBEDDING_DIM
    # The provider's vector, scaled to unit length (recall's floor compares dot products).
    sent = np.array([(n % 7 + 1) / 7 for n in range(settings.EMBEDDING_DIM)])
    expected = sent / np.linalg.norm(sent)
    assert list(memory.embedding[:3]) == pytest.approx(list(expected[:3]), abs=1e-3)
    # The worker's own series, summed into the web's /metrics (the multiprocess directory).
    assert embeddings_counted(client, "ready") == ready_before + 1


@pytest.mark.parametrize("answer", ["no answer", "a null in a vector"])
def test_provider_outage_keeps_the_write_and_marks_it_failed(worker, client, answer):
    failed_before = embeddings_counted(client, "failed")
    FakeEmbeddings.failing = answer == "no answer"
    FakeEmbeddings.malformed = answer == "a null in a vector"
    calls_before = FakeEmbeddings.calls
    memory = write("written while the provider is down")
    memory = wait_for_status(memory, EmbeddingStatus.FAILED)
    assert FakeEmbeddings.calls - calls_before == 3  # the first try and two retries
    assert memory.content == "written while the provider is down" and memory.embedding is None
    assert embeddings_counted(client, "failed") == failed_before + 1


def test_the_request_id_travels_into_the_tasks_log_lines(provider, settings, tmp_path, make_client):
    """API → task: the id the client sent names the worker's log lines for the task the
    request queued (LOG_FORMAT=json, one object a line)."""
    log = tmp_path / "worker.log"
    with celery_worker(
        hostname=worker_hostname("test-request-id"),
        log=log,
        LOG_FORMAT="json",
        LOG_LEVEL="INFO",
        EMBEDDING_PROVIDER="openai",
        EMBEDDING_API_BASE=settings.EMBEDDING_API_BASE,
        EMBEDDING_DIM=str(settings.EMBEDDING_DIM),
    ):
        http, _ = make_client("a", ["a:"])
        body = {"user_id": "a:1", "content": "traced to its request", "memory_type": "fact"}
        response = http.post(
            "/api/v1/memories/", body, format="json", HTTP_X_REQUEST_ID="req-e2e-7"
        )
        assert response["X-Request-ID"] == "req-e2e-7"
        memory = Memory.objects.get(pk=response.json()["data"]["memory"]["id"])
        wait_for_status(memory, EmbeddingStatus.READY)
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    traced = [line for line in lines if line.get("request_id") == "req-e2e-7"]
    assert traced, lines[-5:]
    assert {"time", "level", "logger", "message"} <= set(traced[0])
