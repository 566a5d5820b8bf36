"""Providers (embeddings, the LLM extractor) are never called with a transaction open: the
shared client refuses, and conversation ingest asks the extractor before it writes."""

import json

import pytest
from django.db import transaction

from core.access import Caller
from core.openai_compat import CalledInTransaction, OpenAICompatibleClient
from memories.extraction import extractor
from memories.ingest import session_message_add, session_open
from memories.models import Memory
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
