"""Recall with the default (semantic, local) embeddings: found by meaning, in either language,
nothing for what was never said, and the query's vector cached in Redis."""

import numpy as np
import pytest
from django.conf import settings

from core.access import SYSTEM
from core.redis_client import app_redis
from memories.embeddings import embedding_provider
from memories.recall import RecallQuery, memories_recall, query_cache_key
from memories.services import MemoryInput, memories_embed, memory_add_many

pytestmark = pytest.mark.django_db

USER = "agent:marcus"
MEMORIES = [
    "It's Marcus Chen",
    "My sister lives in Boston and teaches chemistry",
    "I've been writing Rust full-time, it is my main language now",
    "我喜欢吃辣的食物，尤其是川菜",
    "The user adopted a beagle called Biscuit",
]


@pytest.fixture
def memories():
    results = memory_add_many(
        items=[MemoryInput(user_id=USER, content=c, memory_type="episodic") for c in MEMORIES],
        caller=SYSTEM,
    )
    assert memories_embed(memory_ids=[r.memory.id for r in results]) == len(MEMORIES)


def recall(query: str) -> list[str]:
    hits = memories_recall(caller=SYSTEM, request=RecallQuery(user_id=USER, query=query))
    return [hit.memory.content for hit in hits]


def test_the_default_provider_is_a_local_semantic_model():
    assert settings.EMBEDDING_PROVIDER in ("e5", "use")
    assert embedding_provider().dimensions == settings.EMBEDDING_DIM


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Where does the user's sister live?", 1),  # shares only "sister" and "live"
        ("Does the user have a dog?", 4),  # no word in common (but "user")
        ("用户喜欢吃什么？", 3),
        ("用户的姐姐住在哪里？", 1),  # Chinese question, English memory
        ("Does the user like spicy food?", 3),  # and back
    ],
)
def test_a_memory_is_recalled_by_meaning(memories, question, answer):
    assert recall(question)[:1] == [MEMORIES[answer]]


@pytest.mark.parametrize(
    "question",
    ["What is the user's blood type?", "What car does the user drive?", "用户的血型是什么？"],
)
def test_a_question_about_something_never_said_recalls_nothing(memories, question):
    assert recall(question) == []


def test_a_repeated_query_is_embedded_once(memories, monkeypatch):
    query = "Where does the user's sister live?"
    key = query_cache_key(embedding_provider().model_id, query)
    app_redis().delete(key)
    first = recall(query)
    cached = np.frombuffer(app_redis().get(key), dtype=np.float16)
    assert cached.shape == (settings.EMBEDDING_DIM,)

    def no_model_call(text: str) -> np.ndarray:
        raise AssertionError(f"embedded {text!r} again")

    monkeypatch.setattr(embedding_provider(), "embed_query", no_model_call)
    assert recall(query) == first
    assert app_redis().ttl(key) > 0


def test_the_query_cache_is_per_model():
    assert query_cache_key("model-a", "hello") != query_cache_key("model-b", "hello")
