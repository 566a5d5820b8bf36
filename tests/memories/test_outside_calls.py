"""Providers (embeddings, the LLM extractor) are never called with a transaction open: the
shared client refuses, and conversation ingest asks the extractor before it writes."""

import json

import numpy as np
import pytest
from django.db import transaction

from core.access import Caller
from core.openai_compat import CalledInTransaction, OpenAICompatibleClient
from memories import similarity_floors
from memories.embeddings import embedding_provider
from memories.extraction import extractor
from memories.ingest import session_message_add, session_open
from memories.models import Memory
from memories.services import MemoryInput, memory_add
from memories.services.forgetting import user_forget
from tests.fake_openai import FakeOpenAIHandler, serving

pytestmark = pytest.mark.django_db

CALLER = Caller(name="test", is_staff=True)


class FakeLLM(FakeOpenAIHandler):
    calls: list[str] = []

    def answer(self, path: str, body: dict) -> tuple[int, dict]:
        type(self).calls.append(path)
        items = [{"action": "remember", "content": "Ana plays the cello", "memory_type": "fact"}]
        return 200, {"choices": [{"message": {"content": json.dumps({"items": items})}}]}


@pytest.fixture
def llm(settings):
    FakeLLM.calls = []
    with serving(FakeLLM) as base_url:
        settings.EXTRACTOR = "llm"
        settings.LLM_API_BASE = base_url
        extractor.cache_clear()
        yield base_url
    extractor.cache_clear()


def test_the_client_refuses_to_call_inside_a_transaction(llm):
    client = OpenAICompatibleClient(base_url=llm, api_key="", timeout=5)
    with transaction.atomic(), pytest.raises(CalledInTransaction):
        client.chat_json(model="m", messages=[{"role": "user", "content": "hi"}])
    assert FakeLLM.calls == []
    assert client.chat_json(model="m", messages=[{"role": "user", "content": "hi"}])
    assert FakeLLM.calls == ["/v1/chat/completions"]


def test_ingest_asks_the_llm_before_it_opens_its_transaction(llm):
    session = session_open(caller=CALLER, user_id="u:ana")
    added = session_message_add(
        session=session, role="user", content="I play the cello.", caller=CALLER
    )
    message, results = added.message, added.memories
    assert FakeLLM.calls == ["/v1/chat/completions"]
    assert message.extraction_status == "done"
    assert [result.memory.content for result in results] == [
        "Ana plays the cello",
        "User: I play the cello.",
    ]
    assert Memory.objects.filter(user_id="u:ana", content="Ana plays the cello").exists()


class FakeEmbeddings(FakeOpenAIHandler):
    def answer(self, path: str, body: dict) -> tuple[int, dict]:
        rng = np.random.default_rng(len(body["input"]))
        vectors = rng.normal(size=(len(body["input"]), body["dimensions"]))
        data = [{"index": i, "embedding": list(map(float, v))} for i, v in enumerate(vectors)]
        return 200, {"data": data}


@pytest.fixture
def embeddings_service(settings):
    """The OpenAI-compatible embedding provider in a process that has embedded nothing yet:
    the relevance floors' background is embedded the first time a floor is needed."""

    def fresh() -> None:
        embedding_provider.cache_clear()
        similarity_floors._background.cache_clear()
        similarity_floors._pair_quantile.cache_clear()

    with serving(FakeEmbeddings) as base_url:
        settings.EMBEDDING_PROVIDER = "openai"
        settings.EMBEDDING_API_BASE = base_url
        fresh()
        yield base_url
    fresh()


def test_forgetting_a_topic_embeds_it_and_the_floors_background_before_its_transaction(
    embeddings_service,
):
    memory_add(
        item=MemoryInput(
            user_id="u:ana", content="The user's dentist is Dr. Lee", memory_type="fact"
        ),
        caller=CALLER,
    )
    outcome = user_forget(caller=CALLER, user_id="u:ana", topic="my dentist")
    assert outcome.request is not None
    assert not Memory.objects.current().filter(content__contains="Dr. Lee").exists()


def test_a_message_asking_to_forget_embeds_before_the_messages_transaction(embeddings_service):
    session = session_open(caller=CALLER, user_id="u:ana")
    session_message_add(
        session=session, role="user", content="My dentist is Dr. Lee.", caller=CALLER
    )
    added = session_message_add(
        session=session, role="user", content="Please forget my dentist.", caller=CALLER
    )
    assert added.forgets
    assert not Memory.objects.current().filter(content__contains="Dr. Lee").exists()
