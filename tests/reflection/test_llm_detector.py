"""The LLM pattern detector against a fake OpenAI-compatible endpoint: its answers are checked
against the ids it was given, and a failed call is an error (the cycle then changes nothing)."""

import json
import uuid
from datetime import UTC, datetime

import pytest

from reflection.detection import DetectionError, LLMDetector, Observation, TraitView
from tests.fake_openai import FakeOpenAIHandler, serving

MEMORIES = [uuid.uuid4() for _ in range(3)]
TRAIT = uuid.uuid4()


class FakeChat(FakeOpenAIHandler):
    reply: dict | None = None
    batches: list[int] = []

    def answer(self, path: str, body: dict) -> tuple[int, dict | None]:
        asked = json.loads(body["messages"][-1]["content"])
        type(self).batches.append(len(asked.get("memories", ())))
        if self.reply is None:
            return 503, None
        content = json.dumps(self.reply)
        return 200, {"choices": [{"message": {"content": content}}]}


def observations() -> list[Observation]:
    at = datetime(2026, 11, 1, tzinfo=UTC)
    texts = ["I ran 5k", "Morning run again", "I hate meetings"]
    return [
        Observation(id=i, content=f"User: {t}", created_at=at, session_id=None, new=True)
        for i, t in zip(MEMORIES, texts, strict=True)
    ]


def test_llm_answers_become_matches_and_patterns_and_unknown_ids_are_dropped():
    FakeChat.reply = {
        "matches": [
            {"memory_id": str(MEMORIES[2]), "trait_id": str(TRAIT), "supports": False},
            {"memory_id": str(uuid.uuid4()), "trait_id": str(TRAIT), "supports": True},
        ],
        "patterns": [
            {
                "memory_ids": [str(MEMORIES[0]), str(MEMORIES[1])],
                "statement": "Runs in the morning",
            },
            {"memory_ids": [str(MEMORIES[2])], "statement": "already matched"},
        ],
    }
    with serving(FakeChat) as base_url:
        detector = LLMDetector(base_url=base_url, api_key="", model="m", timeout=5)
        detection = detector.detect(
            observations=observations(),
            traits=[TraitView(TRAIT, "Likes meetings", "behavior", "emerging", None)],
        )
    assert [(m.memory_id, m.trait_id, m.supports) for m in detection.matches] == [
        (MEMORIES[2], TRAIT, False)
    ]
    assert [(p.memory_ids, p.content) for p in detection.patterns] == [
        ((MEMORIES[0], MEMORIES[1]), "Runs in the morning")
    ]


def test_llm_failure_is_a_detection_error():
    FakeChat.reply = None
    with serving(FakeChat) as base_url, pytest.raises(DetectionError):
        LLMDetector(base_url=base_url, api_key="", model="m", timeout=5).detect(
            observations=observations(), traits=[]
        )


def test_llm_review_must_name_valid_contexts_to_split():
    FakeChat.reply = {"decision": "split", "contexts": {"space": {"tendency": "holds"}}}
    trait = TraitView(TRAIT, "Likes meetings", "behavior", "emerging", None)
    with serving(FakeChat) as base_url, pytest.raises(DetectionError):
        LLMDetector(base_url=base_url, api_key="", model="m", timeout=5).review(
            trait=trait, evidence=[]
        )


def test_many_memories_are_asked_in_batches_and_a_non_boolean_support_is_dropped():
    at = datetime(2026, 11, 1, tzinfo=UTC)
    many = [
        Observation(
            id=uuid.uuid4(), content=f"User: note {n}", created_at=at, session_id=None, new=True
        )
        for n in range(250)
    ]
    FakeChat.reply = {
        "matches": [{"memory_id": str(many[0].id), "trait_id": str(TRAIT), "supports": "false"}]
    }
    FakeChat.batches = []
    trait = TraitView(TRAIT, "Takes notes", "behavior", "emerging", None)
    with serving(FakeChat) as base_url:
        detection = LLMDetector(base_url=base_url, api_key="", model="m", timeout=5).detect(
            observations=many, traits=[trait]
        )
    assert FakeChat.batches == [100, 100, 50]
    assert detection.matches == []  # "false" is not a boolean: no guess either way
