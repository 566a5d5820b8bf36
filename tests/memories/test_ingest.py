"""Sessions and messages: memories extracted from what users say, with provenance,
corrections and forget requests honoured (English and Chinese)."""

import pytest

from memories.extraction import RuleBasedExtractor
from memories.models import ConversationMessage, Memory, MemorySource

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent(make_client):
    return make_client("agent", ["agent:"])[0]


@pytest.fixture
def session(agent):
    response = agent.post("/api/v1/sessions/", {"user_id": "agent:alice"}, format="json")
    assert response.status_code == 201
    return response.json()["data"]["id"]


def say(agent, session: str, content: str, role: str = "user") -> dict:
    response = agent.post(
        f"/api/v1/sessions/{session}/messages/", {"role": role, "content": content}, format="json"
    )
    assert response.status_code == 201, response.json()
    return response.json()["data"]


def current(user_id: str = "agent:alice") -> list[str]:
    return list(
        Memory.objects.filter(user_id=user_id, expired_at__isnull=True)
        .order_by("created_at")
        .values_list("content", flat=True)
    )


def test_user_statements_become_memories_with_provenance(agent, session):
    data = say(agent, session, "My name is Alice. I love hiking in the Alps.")
    assert [m["operation"] for m in data["memories"]] == ["ADD", "ADD"]
    memory = Memory.objects.get(content="My name is Alice.")
    assert (memory.memory_type, memory.key) == ("fact", "profile:name")
    assert [str(x) for x in memory.source_episode_ids] == [session]
    source = MemorySource.objects.get(memory_id=memory.id)
    assert str(source.session_id) == session
    assert source.conversation_id == ConversationMessage.objects.get(role="user").id


def test_assistant_messages_are_stored_not_mined(agent, session):
    data = say(agent, session, "I love that you love hiking!", role="assistant")
    assert data["memories"] == []
    assert ConversationMessage.objects.get().extraction_status == "skipped"
    assert current() == []


def test_moving_supersedes_the_old_city(agent, session):
    say(agent, session, "I live in Berlin.")
    data = say(agent, session, "I moved to Austin last month.")
    assert data["memories"][0]["operation"] == "UPDATE"
    assert current() == ["I moved to Austin last month."]
    old = Memory.objects.get(content="I live in Berlin.")
    assert old.expired_at is not None and old.superseded_by is not None
    history = agent.get(f"/api/v1/memories/{old.id}/history/").json()["data"]
    assert [e["event"] for e in history] == ["ADD", "SUPERSEDE"]


def test_actually_the_deadline_corrects_the_deadline(agent, session):
    say(agent, session, "The deadline for the report is March 15.")
    say(agent, session, "Actually the deadline for the report is April 1.")
    assert current() == ["Actually the deadline for the report is April 1."]


def test_forget_my_address_removes_it_for_good(agent, session):
    say(agent, session, "My address is 12 Elm Street, Springfield.")
    say(agent, session, "I love jazz.")
    data = say(agent, session, "Please forget my address.")
    assert [m["operation"] for m in data["memories"]] == ["DELETE"]
    assert current() == ["I love jazz."]
    listed = agent.get("/api/v1/memories/?user_id=agent:alice").json()["data"]
    assert [m["content"] for m in listed] == ["I love jazz."]
    assert Memory.objects.filter(content__contains="Elm Street").get().expired_at is not None


def test_chinese_corrections_and_forgetting(agent, session):
    say(agent, session, "我住在北京。我喜欢喝龙井茶。")
    data = say(agent, session, "我搬到了上海。")
    assert data["memories"][0]["operation"] == "UPDATE"
    say(agent, session, "项目的截止日期是三月一日。")
    say(agent, session, "其实截止日期改到四月一日了。")
    say(agent, session, "我的地址是浦东新区世纪大道100号。")
    say(agent, session, "请忘记我的地址。")
    assert current() == ["我喜欢喝龙井茶。", "我搬到了上海。", "其实截止日期改到四月一日了。"]


def test_ended_session_takes_no_messages(agent, session):
    ended = agent.post(f"/api/v1/sessions/{session}/end/")
    assert ended.json()["data"]["ended_at"] is not None
    response = agent.post(
        f"/api/v1/sessions/{session}/messages/", {"role": "user", "content": "hi"}, format="json"
    )
    assert response.status_code == 409


def test_another_clients_session_is_not_found(agent, session, make_client):
    other, _ = make_client("other", ["other:"])
    response = other.post(
        f"/api/v1/sessions/{session}/messages/", {"role": "user", "content": "hi"}, format="json"
    )
    assert response.status_code == 404
    assert other.post("/api/v1/sessions/", {"user_id": "agent:x"}, format="json").status_code == 403


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I'm allergic to peanuts.", [("remember", "fact", None)]),
        ("I'm going to Tokyo next week.", [("remember", "episodic", None)]),
        ("Yesterday I met my sister.", [("remember", "episodic", None)]),
        ("What's the weather like?", []),
        ("我叫小明。", [("remember", "fact", "profile:name")]),
        ("我打算明年去日本。", [("remember", "episodic", None)]),
        ("今天天气不错。", []),
        ("Please forget my phone number.", [("forget", None, "profile:phone")]),
    ],
)
def test_rule_based_extractor(text, expected):
    found = [
        (e.action, e.memory_type if e.action == "remember" else None, e.slot)
        for e in RuleBasedExtractor().extract(text)
    ]
    assert found == expected


def test_llm_extractor_outage_keeps_the_message(agent, session, settings):
    from memories.extraction import extractor

    settings.EXTRACTOR, settings.LLM_API_BASE = "llm", "http://127.0.0.1:9/v1"  # nothing there
    extractor.cache_clear()
    try:
        data = say(agent, session, "I live in Lisbon.")
    finally:
        extractor.cache_clear()
    assert data["memories"] == []
    assert ConversationMessage.objects.get().extraction_status == "failed"
