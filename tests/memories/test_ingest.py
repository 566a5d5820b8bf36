"""Sessions and messages: the facts users state, with provenance, corrections and forget
requests honoured (English and Chinese), and each user turn kept as an episode."""

import json

import pytest

from memories.extraction import RuleBasedExtractor, extractor
from memories.graph.models import GraphEdge
from memories.models import ConversationMessage, Memory, MemorySource
from tests.fake_openai import FakeOpenAIHandler, serving

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


def current(memory_type: str) -> list[str]:
    return list(
        Memory.objects.current()
        .filter(user_id="agent:alice", memory_type=memory_type)
        .order_by("created_at", "content")  # one message's memories share its time
        .values_list("content", flat=True)
    )


def facts() -> list[str]:
    return current("fact")


def episodes() -> list[str]:
    return current("episodic")


def written(data: dict) -> list[tuple[str, str, str]]:
    return [(m["operation"], m["memory"]["memory_type"], m["memory"]["content"]) for m in data]


# --- Episodes --------------------------------------------------------------------------------


def test_a_statement_gives_third_person_facts_and_an_episode_in_the_users_words(agent, session):
    data = say(agent, session, "My name is Alice. I love hiking in the Alps.")
    assert written(data["memories"]) == [
        ("ADD", "fact", "The user's name is Alice"),
        ("ADD", "fact", "The user loves hiking in the Alps"),
        ("ADD", "episodic", "User: My name is Alice. I love hiking in the Alps."),
    ]
    assert Memory.objects.get(content="The user's name is Alice").key == "profile:name"


def test_every_memory_of_a_turn_has_the_turns_provenance_and_date(agent, session):
    say(agent, session, "My name is Alice. I love hiking in the Alps.")
    message = ConversationMessage.objects.get(role="user")
    memories = Memory.objects.filter(user_id="agent:alice")
    assert memories.count() == 3
    for memory in memories:
        assert [str(x) for x in memory.source_episode_ids] == [session]
        source = MemorySource.objects.get(memory_id=memory.id)
        assert (str(source.session_id), source.conversation_id) == (session, message.id)
    episode = memories.get(memory_type="episodic")
    assert episode.valid_at == message.created_at


def test_the_episode_keeps_the_assistant_turn_it_answers(agent, session):
    say(agent, session, "Nice to meet you! What's your name?", role="assistant")
    data = say(agent, session, "It's Marcus Chen")
    assert written(data["memories"]) == [
        (
            "ADD",
            "episodic",
            "Assistant: Nice to meet you! What's your name? → User: It's Marcus Chen",
        )
    ]
    say(agent, session, "你好！请问你住在哪里？", role="assistant")
    say(agent, session, "我住在北京。")
    assert episodes()[-1] == "助手：你好！请问你住在哪里？ → 用户：我住在北京。"


def test_only_the_message_just_before_counts_as_context(agent, session):
    say(agent, session, "What's your name?", role="assistant")
    say(agent, session, "It's Marcus Chen")
    say(agent, session, "I'm going to Tokyo next week.")
    assert episodes() == [
        "Assistant: What's your name? → User: It's Marcus Chen",
        "User: I'm going to Tokyo next week.",
    ]


@pytest.mark.parametrize(
    "content", ["thanks", "ok", "好的", "谢谢", "👍", "lol", "Thanks a lot! 😊"]
)
def test_content_free_turns_are_not_episodes(agent, session, content):
    say(agent, session, "I booked the table for eight.", role="assistant")
    data = say(agent, session, content)
    assert data["memories"] == []
    assert episodes() == []
    assert ConversationMessage.objects.filter(role="user", content=content).exists()


def test_a_short_answer_is_an_episode_with_its_question(agent, session):
    say(agent, session, "Do you have any pets?", role="assistant")
    say(agent, session, "No.")
    assert episodes() == ["Assistant: Do you have any pets? → User: No."]


def test_assistant_messages_are_stored_not_mined(agent, session):
    data = say(agent, session, "I love that you love hiking!", role="assistant")
    assert data["memories"] == []
    assert ConversationMessage.objects.get().extraction_status == "skipped"
    assert facts() == episodes() == []


# --- Corrections and changes -----------------------------------------------------------------


def test_moving_supersedes_the_old_city(agent, session):
    say(agent, session, "I live in Berlin.")
    data = say(agent, session, "I moved to Austin last month.")
    assert written(data["memories"])[0] == ("UPDATE", "fact", "The user lives in Austin")
    assert facts() == ["The user lives in Austin"]
    old = Memory.objects.get(content="The user lives in Berlin")
    assert old.expired_at is not None and old.superseded_by is not None
    history = agent.get(f"/api/v1/memories/{old.id}/history/").json()["data"]
    assert [e["event"] for e in history] == ["ADD", "SUPERSEDE"]
    # It stopped being true when the user said they moved; time travel still finds it.
    new = Memory.objects.get(content="The user lives in Austin")
    assert (
        old.invalid_at
        == new.valid_at
        == ConversationMessage.objects.latest("created_at").created_at
    )
    assert list(Memory.objects.as_of(old.created_at).filter(key="profile:home_city")) == [old]
    assert list(Memory.objects.as_of(new.created_at).filter(key="profile:home_city")) == [new]


@pytest.mark.parametrize("key", [None, "custom:home"])
def test_a_fact_the_api_wrote_said_again_in_a_message_is_that_memory(agent, session, key):
    api_written = {"user_id": "agent:alice", "content": "The user lives in Berlin", "key": key}
    response = agent.post(
        "/api/v1/memories/", {**api_written, "memory_type": "fact"}, format="json"
    )
    assert response.status_code == 201
    data = say(agent, session, "I live in Berlin.")
    assert written(data["memories"])[0] == ("NOOP", "fact", "The user lives in Berlin")
    assert facts() == ["The user lives in Berlin"]
    assert Memory.objects.get(content="The user lives in Berlin").key == key
    # The graph holds it as the city's statement: a move ends it.
    say(agent, session, "I moved to Austin last month.")
    assert facts() == ["The user lives in Austin"]


@pytest.mark.parametrize(
    ("first", "correction", "expected"),
    [
        (
            "I live in Shanghai.",
            "Oh wait, sorry, I got that wrong: I actually live in Hangzhou now",
            "The user lives in Hangzhou",
        ),
        (
            "I work at Google.",
            "Correction: I'm a product manager now",
            "The user is a product manager",
        ),
        ("我是一名工程师。", "我在阿里巴巴做产品经理", "用户在阿里巴巴做产品经理"),
        ("我住在北京。", "其实我现在住在杭州", "用户住在杭州"),
        ("我在腾讯工作。", "不对，我是产品经理", "用户是产品经理"),
    ],
)
def test_corrections_supersede_the_slots_value(agent, session, first, correction, expected):
    say(agent, session, first)
    [old] = facts()
    data = say(agent, session, correction)
    assert written(data["memories"])[0] == ("UPDATE", "fact", expected)
    assert facts() == [expected]
    assert Memory.objects.get(content=old).superseded_by == Memory.objects.get(content=expected).id
    # The user's own words stay, as episodes; one that stated the replaced value is no longer
    # current (docs/graph.md), yet kept for time travel.
    assert Memory.objects.filter(user_id="agent:alice", memory_type="episodic").count() == 2
    assert episodes()[-1] in (f"User: {correction}", f"用户：{correction}")


def test_a_change_of_one_detail_keeps_the_others(agent, session):
    say(agent, session, "I live in Shanghai with my wife and daughter")
    assert facts() == ["The user lives in Shanghai", "The user lives with their wife and daughter"]
    data = say(agent, session, "I moved to Hangzhou")
    assert [m["operation"] for m in data["memories"]] == ["UPDATE", "ADD"]
    assert facts() == ["The user lives with their wife and daughter", "The user lives in Hangzhou"]


def test_actually_the_deadline_corrects_the_deadline(agent, session):
    say(agent, session, "The deadline for the report is March 15.")
    say(agent, session, "Actually the deadline for the report is April 1.")
    assert facts() == ["The deadline for the report is April 1"]


def test_chinese_statements_corrections_and_forgetting(agent, session):
    say(agent, session, "我住在北京。我喜欢喝龙井茶。")
    data = say(agent, session, "我搬到了上海。")
    assert written(data["memories"])[0] == ("UPDATE", "fact", "用户住在上海")
    say(agent, session, "项目的截止日期是三月一日。")
    say(agent, session, "其实截止日期改到四月一日了。")
    say(agent, session, "我的地址是浦东新区世纪大道100号。")
    say(agent, session, "请忘记我的地址。")
    assert facts() == ["用户喜欢喝龙井茶", "用户住在上海", "截止日期改到四月一日了"]
    assert not any("世纪大道" in episode for episode in episodes())


# --- Forgetting ------------------------------------------------------------------------------


def test_forget_my_address_removes_the_fact_and_the_turns_that_said_it(agent, session):
    say(agent, session, "My address is 12 Elm Street, Springfield.")
    say(agent, session, "Where should I send the parcel?", role="assistant")
    say(agent, session, "To my address, please.")  # no fact: an episode naming the topic
    say(agent, session, "I love jazz.")
    data = say(agent, session, "Please forget my address.")
    assert data["memories"] == []  # nothing written: the request is no fact, no episode
    (forget,) = data["forget"]
    assert {(m["memory_type"], m["erased"]) for m in forget["memories"]} == {
        ("fact", "whole"),
        ("episodic", "whole"),
    }
    assert facts() == ["The user loves jazz"]
    assert episodes() == ["User: I love jazz."]
    listed = agent.get("/api/v1/memories/?user_id=agent:alice&include_expired=true").json()["data"]
    assert sorted(m["content"] for m in listed) == ["The user loves jazz", "User: I love jazz."]
    assert not Memory.objects.filter(content__contains="Elm Street").exists()
    assert Memory.objects.filter(forgotten_at__isnull=False).count() == 3


def test_forget_that_removes_a_slotless_fact_and_the_episodes_on_the_topic(agent, session):
    say(agent, session, "I love spicy food. I'm allergic to peanuts.")
    say(agent, session, "What spicy food would you recommend?", role="assistant")
    say(agent, session, "Something from Sichuan.")
    say(agent, session, "I love Italian food.")  # shares "food" only: not the topic
    data = say(agent, session, "Forget that I love spicy food")
    assert data["forget"][0]["memories"]
    assert facts() == ["The user is allergic to peanuts", "The user loves Italian food"]
    # The turn that said both keeps what was not about spicy food.
    assert episodes() == ["User: I'm allergic to peanuts.", "User: I love Italian food."]
    # The request itself is neither a fact nor an episode.
    assert not Memory.objects.filter(content__icontains="forget").exists()


def test_chinese_forget_that(agent, session):
    say(agent, session, "我很喜欢吃辣。我对花生过敏。")
    say(agent, session, "忘掉我喜欢吃辣这件事")
    assert facts() == ["用户对花生过敏"]
    assert episodes() == ["用户：我对花生过敏。"]
    assert not Memory.objects.filter(content__contains="忘掉").exists()


def test_a_forget_that_names_nothing_forgets_nothing_and_stores_nothing(agent, session):
    say(agent, session, "I love jazz.")
    data = say(agent, session, "Forget what I said")
    assert data["memories"] == []
    (forget,) = data["forget"]
    assert forget["memories"] == [] and forget["reason"]["code"] == "names_nothing"
    assert facts() == ["The user loves jazz"]
    assert episodes() == ["User: I love jazz."]


# --- Sessions --------------------------------------------------------------------------------


@pytest.mark.parametrize("content", ["", "   ", "\n\t"])
def test_a_blank_message_is_refused_and_stores_nothing(agent, session, content):
    response = agent.post(
        f"/api/v1/sessions/{session}/messages/", {"role": "user", "content": content}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "content"
    assert not ConversationMessage.objects.exists()


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


# --- The LLM extractor -----------------------------------------------------------------------


class FakeLLM(FakeOpenAIHandler):
    """Answers as a model following the prompt would, for the messages of these tests."""

    requests: list[dict] = []
    ANSWERS = {
        "I live in Shanghai with my wife and daughter.": [
            {
                "action": "remember",
                "content": "The user lives in Shanghai",
                "slot": "profile:home_city",
                "importance": 0.8,
            },
            {
                "action": "remember",
                "content": "The user lives with their wife and daughter",
                "slot": "profile:household",
            },
            {"action": "remember", "content": "The user loves spicy food", "slot": None},
        ],
        "Oh wait, I got that wrong: I actually live in Hangzhou now.": [
            {
                "action": "remember",
                "content": "The user lives in Hangzhou",
                "slot": "profile:home_city",
            },
        ],
        "Forget that I love spicy food.": [
            {
                "action": "forget",
                "topic": "that I love spicy food",
                "request": "Forget that I love spicy food.",
            },
        ],
    }

    def answer(self, path: str, body: dict) -> tuple[int, dict]:
        type(self).requests.append(body)
        items = self.ANSWERS.get(body["messages"][-1]["content"], [])
        return 200, {"choices": [{"message": {"content": json.dumps({"items": items})}}]}


@pytest.fixture
def llm(settings):
    FakeLLM.requests = []
    with serving(FakeLLM) as base_url:
        settings.EXTRACTOR, settings.LLM_API_BASE = "llm", base_url
        extractor.cache_clear()
        yield FakeLLM
    extractor.cache_clear()


def test_llm_facts_corrections_and_forget(agent, session, llm):
    say(agent, session, "Where do you live?", role="assistant")
    say(agent, session, "I live in Shanghai with my wife and daughter.")
    data = say(agent, session, "Oh wait, I got that wrong: I actually live in Hangzhou now.")
    assert written(data["memories"])[0] == ("UPDATE", "fact", "The user lives in Hangzhou")
    say(agent, session, "Forget that I love spicy food.")
    assert facts() == ["The user lives with their wife and daughter", "The user lives in Hangzhou"]
    assert episodes() == [
        "Assistant: Where do you live? → User: I live in Shanghai with my wife and daughter.",
        "User: Oh wait, I got that wrong: I actually live in Hangzhou now.",
    ]
    first = llm.requests[0]["messages"]
    assert [m["role"] for m in first] == ["system", "assistant", "user"]
    assert first[1]["content"] == "Where do you live?"
    assert [m["role"] for m in llm.requests[1]["messages"]] == ["system", "user"]


def test_llm_extractor_outage_keeps_the_message_and_its_episode(agent, session, settings):
    settings.EXTRACTOR, settings.LLM_API_BASE = "llm", "http://127.0.0.1:9/v1"  # nothing there
    extractor.cache_clear()
    try:
        data = say(agent, session, "I live in Lisbon.")
    finally:
        extractor.cache_clear()
    assert written(data["memories"]) == [("ADD", "episodic", "User: I live in Lisbon.")]
    assert ConversationMessage.objects.get().extraction_status == "failed"


# --- Importing a past conversation -----------------------------------------------------------


def test_a_past_conversation_is_dated_by_its_messages(agent, session):
    said = "2025-03-01T09:00:00Z"
    response = agent.post(
        f"/api/v1/sessions/{session}/messages/",
        {"role": "user", "content": "I live in Berlin.", "sent_at": said},
        format="json",
    )
    assert response.status_code == 201, response.json()
    data = response.json()["data"]
    assert data["message"]["created_at"] == said
    assert {m["memory"]["valid_at"] for m in data["memories"]} == {said}


@pytest.mark.parametrize("sent_at", ["2999-01-01T00:00:00Z", "2025-01-01T00:00:00Z"])
def test_a_message_cannot_be_dated_in_the_future_or_before_the_last_one(agent, session, sent_at):
    first = {"role": "user", "content": "Hello there.", "sent_at": "2025-02-01T00:00:00Z"}
    assert (
        agent.post(f"/api/v1/sessions/{session}/messages/", first, format="json").status_code == 201
    )
    response = agent.post(
        f"/api/v1/sessions/{session}/messages/",
        {"role": "user", "content": "I live in Berlin.", "sent_at": sent_at},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "sent_at"
    assert ConversationMessage.objects.count() == 1
    assert not Memory.objects.filter(content__contains="Berlin").exists()


def test_an_imported_change_reads_as_of_the_time_it_was_said(agent, session):
    """Imported with sent_at, a conversation is recorded as of its messages: `as_of` between
    two of them finds what was current then."""
    url = f"/api/v1/sessions/{session}/messages/"
    for content, said in [
        ("I live in Berlin.", "2025-03-01T09:00:00Z"),
        ("I moved to Austin.", "2025-06-01T09:00:00Z"),
    ]:
        body = {"role": "user", "content": content, "sent_at": said}
        assert agent.post(url, body, format="json").status_code == 201

    def recalled(as_of: str) -> list[str]:
        body = {"user_id": "agent:alice", "query": "Where does the user live?", "as_of": as_of}
        data = agent.post("/api/v1/recall/", body, format="json").json()["data"]
        return [hit["content"] for hit in data["merged"] if hit["memory_type"] == "fact"]

    assert recalled("2025-04-01T00:00:00Z") == ["The user lives in Berlin"]
    assert recalled("2025-06-15T00:00:00Z") == ["The user lives in Austin"]
    old = Memory.objects.get(content="The user lives in Berlin")
    assert old.created_at.isoformat() == "2025-03-01T09:00:00+00:00"
    assert old.expired_at.isoformat() == "2025-06-01T09:00:00+00:00"


@pytest.mark.parametrize(
    "message",
    [
        "What if I moved to Berlin?",
        "Do I live in Berlin?",
        "Is it true that I live in Berlin?",
        "I live in Berlin? I don't think so.",
        "People think I live in Berlin, but I don't.",
        "Let's say I live in Berlin.",
        "You told me I live in Berlin.",
        "My boss said 'I live in Berlin'.",
        'Translate "I live in Berlin" into French.',
        "I'd love to live in Berlin someday.",
        "I used to live in Berlin.",
        "Suppose my name is Bob and I live in Berlin.",
        'Here is my error:\n```\nraise ValueError("I live in Berlin")\n```',
        "如果我搬到柏林会怎么样？",
        "我住在柏林吗？",
        "我想搬到柏林。",
        "要是我住在柏林就好了。",
    ],
)
def test_a_question_supposition_wish_or_anothers_words_states_no_fact(agent, session, message):
    say(agent, session, "I live in Austin.")
    say(agent, session, message)
    assert facts() == ["The user lives in Austin"]


@pytest.mark.parametrize(
    ("message", "fact"),
    [
        ("I live in Lisbon, any tips for the winter?", "The user lives in Lisbon"),
        ("我住在杭州，你知道哪里好玩吗？", "用户住在杭州"),
        ("I'm used to the cold, I live in Oslo.", "The user lives in Oslo"),
        ('My favourite book is "Dune".', 'The user\'s favourite book is "Dune"'),
    ],
)
def test_a_statement_beside_a_question_or_a_title_in_quotes_still_states(
    agent, session, message, fact
):
    say(agent, session, message)
    assert fact in facts()


@pytest.mark.parametrize(
    ("message", "whose"),
    [
        ("I have a friend who is a lawyer in New York.", None),
        ("My old uni friend Raj lives in Cambridge, near the river.", "Raj"),
        ("My work colleague Tom lives in Leeds.", "Tom"),
    ],
)
def test_someone_elses_job_and_home_are_not_the_users(agent, session, message, whose):
    say(agent, session, message)
    user_edges = GraphEdge.objects.filter(subject__kind="user", relation__in=["job", "lives in"])
    assert not user_edges.exists()
    if whose:
        assert GraphEdge.objects.filter(subject__name=whose, relation="lives in").exists()


def test_a_slot_said_many_times_in_one_message_makes_one_version(agent, session):
    say(agent, session, " ".join(f"I live in Town{n}." for n in range(200)))
    assert facts() == ["The user lives in Town199"]
    assert Memory.objects.filter(key="profile:home_city").count() == 1


def test_a_message_stored_while_another_was_read_keeps_the_session_in_order(
    agent, session, monkeypatch
):
    """B, dated before A, is checked again under the session's locks: A was stored while B's
    extractor (an LLM: seconds) read it."""
    read = RuleBasedExtractor.extract

    def extract_while_a_is_stored(self, text, **context):
        if text.startswith("B"):
            say_at(agent, session, "A is later.", "2025-06-02T00:00:00Z")
        return read(self, text, **context)

    monkeypatch.setattr(RuleBasedExtractor, "extract", extract_while_a_is_stored)
    response = agent.post(
        f"/api/v1/sessions/{session}/messages/",
        {"role": "user", "content": "B is earlier.", "sent_at": "2025-06-01T00:00:00Z"},
        format="json",
    )
    assert (response.status_code, response.json()["error"]["field"]) == (400, "sent_at")
    assert list(ConversationMessage.objects.values_list("content", flat=True)) == ["A is later."]


def say_at(agent, session: str, content: str, sent_at: str) -> None:
    body = {"role": "user", "content": content, "sent_at": sent_at}
    response = agent.post(f"/api/v1/sessions/{session}/messages/", body, format="json")
    assert response.status_code == 201, response.json()


def test_what_a_doctor_reported_of_the_user_is_a_fact(agent, session):
    say(agent, session, "My doctor said my blood pressure is on the high side.")
    assert facts() == ["The user's doctor said the user's blood pressure is on the high side"]


def test_a_session_ended_while_a_message_was_read_takes_it_not(agent, session, monkeypatch):
    read = RuleBasedExtractor.extract

    def extract_while_the_session_ends(self, text, **context):
        assert agent.post(f"/api/v1/sessions/{session}/end/").status_code == 200
        return read(self, text, **context)

    monkeypatch.setattr(RuleBasedExtractor, "extract", extract_while_the_session_ends)
    response = agent.post(
        f"/api/v1/sessions/{session}/messages/", {"role": "user", "content": "Hi"}, format="json"
    )
    assert response.status_code == 409
    assert not ConversationMessage.objects.exists()
