"""Forget requests made in a conversation (the sessions API), English and Chinese: what "that"
points to, what stays, how the request itself is stored, and the LLM extractor's part
(against a fake OpenAI-compatible endpoint)."""

import json

import pytest

from core.access import SYSTEM
from memories.extraction import extractor
from memories.graph.models import GraphEdge
from memories.models import ConversationMessage, EmbeddingStatus, ForgetRequest, Memory
from memories.services import MemoryInput, memory_add
from tests.fake_openai import FakeOpenAIHandler, serving

pytestmark = pytest.mark.django_db
USER = "agent:lin"


@pytest.fixture
def agent(make_client):
    return make_client("agent", ["agent:"])[0]


@pytest.fixture
def session(agent):
    return agent.post("/api/v1/sessions/", {"user_id": USER}, format="json").json()["data"]["id"]


def say(agent, session: str, content: str, role: str = "user") -> dict:
    response = agent.post(
        f"/api/v1/sessions/{session}/messages/", {"role": role, "content": content}, format="json"
    )
    assert response.status_code == 201, response.json()
    return response.json()["data"]


def held(memory_type: str | None = None) -> list[str]:
    current = Memory.objects.current().filter(user_id=USER)
    if memory_type:
        current = current.filter(memory_type=memory_type)
    return sorted(current.values_list("content", flat=True))


def messages() -> list[str]:
    return list(
        ConversationMessage.objects.filter(user_id=USER)
        .order_by("created_at")
        .values_list("content", flat=True)
    )


def test_that_points_back_to_the_turn_just_said(agent, session):
    say(agent, session, "My dog Biscuit loves the beach.")
    say(agent, session, "Honestly, I was arrested once in college for trespassing.")
    say(agent, session, "Thanks for trusting me with that.", role="assistant")
    answer = say(agent, session, "Actually, don't keep that.")
    (forget,) = answer["forget"]
    assert [m["erased"] for m in forget["memories"]] == ["whole"]
    # What stays is about the dog: the turn, and the fact about the dog it gave.
    assert held("episodic") == ["User: My dog Biscuit loves the beach."]
    assert held("fact") == ["The user's dog Biscuit loves the beach"]
    assert messages() == [
        "My dog Biscuit loves the beach.",
        "[forgotten]",
        "Thanks for trusting me with that.",
        "[forget request]",
    ]


def test_that_in_the_same_message_points_to_the_sentence_before(agent, session):
    say(agent, session, "I rent a flat in Leeds with two roommates.")
    answer = say(agent, session, "The alarm code is 7391. On second thought, please forget that.")
    assert answer["redactions"] == {"pin": 1}  # never stored in the first place
    assert answer["memories"] == []  # the asking turn is no episode
    assert held() == [
        "The user rents a flat in Leeds with two roommates",
        "User: I rent a flat in Leeds with two roommates.",
    ]
    assert messages()[-1] == "[forgotten] [forget request]"


def test_a_request_and_its_restatement_make_one_request(agent, session):
    say(agent, session, "My medical history: I have diabetes and high blood pressure.")
    answer = say(agent, session, "Please delete my medical information. I don't want it stored.")
    assert len(answer["forget"]) == 1 and answer["forget"][0]["memories"]
    assert held() == []
    assert ForgetRequest.objects.get().via == "conversation"


def test_a_turn_that_said_two_things_keeps_the_other(agent, session):
    say(agent, session, "I see a therapist every Tuesday for my anxiety. I also play chess.")
    say(agent, session, "Remove the part about my therapy sessions.")
    (episode,) = Memory.objects.current().filter(user_id=USER, memory_type="episodic")
    assert held("fact") == ["The user also plays chess"]
    assert episode.content == "User: I also play chess."
    assert episode.embedding_status == EmbeddingStatus.PENDING  # embedded again, without it
    assert messages()[0] == "[forgotten] I also play chess."


@pytest.mark.parametrize(
    ("topic", "forgotten"),
    [
        ("where my brother lives", []),  # nothing says where he lives; not the user's city
        ("my brother Mark", ["My brother Mark is a lawyer in Boston."]),
        ("my brother", ["My brother Mark is a lawyer in Boston."]),
    ],
)
def test_a_topic_naming_someone_of_the_user_s_is_theirs(agent, session, topic, forgotten):
    say(agent, session, "I live in Denver.")
    say(agent, session, "My brother Mark is a lawyer in Boston.")
    said = messages()
    response = agent.post(f"/api/v1/users/{USER}/forget/", {"topic": topic}, format="json")
    assert response.status_code == 200, response.json()
    assert messages() == ["[forgotten]" if message in forgotten else message for message in said]
    assert "User: I live in Denver." in held("episodic")


def test_a_vague_request_forgets_nothing_and_says_so(agent, session):
    say(agent, session, "I grow tomatoes on my balcony.")
    answer = say(agent, session, "Just forget everything.")
    (forget,) = answer["forget"]
    assert forget["memories"] == [] and forget["reason"]["code"] == "names_nothing"
    assert held() == ["User: I grow tomatoes on my balcony."]


def test_not_a_request_is_a_turn_like_any_other(agent, session):
    answer = say(agent, session, "Don't forget to remind me about the dentist on Friday.")
    assert answer["forget"] == []
    assert held() == ["User: Don't forget to remind me about the dentist on Friday."]


def test_chinese_requests_and_whose_it_is(agent, session):
    say(agent, session, "我家住在朝阳区建国路88号。")
    say(agent, session, "我朋友小李的公司在中关村大街1号。")
    say(agent, session, "我姐姐下周要做手术。")
    say(agent, session, "我自己上个月拔了智齿，现在还有点疼。")
    say(agent, session, "请把我的住址从你的记忆里清除掉。")
    say(agent, session, "把我的病情都忘掉。")
    # Whose it is: the sister's surgery and the friend's office stay, turns and facts.
    assert held("episodic") == [
        "用户：我姐姐下周要做手术。",
        "用户：我朋友小李的公司在中关村大街1号。",
    ]
    assert held("fact") == ["用户的姐姐下周要做手术", "用户的朋友小李的公司在中关村大街1号"]


def test_chinese_topic_first_and_the_assistants_echo(agent, session):
    say(agent, session, "我现在月薪两万五。")
    say(agent, session, "收入很不错呀，两万五在杭州挺好的。", role="assistant")
    say(agent, session, "我在杭州上班。")
    say(agent, session, "工资那个事情你忘掉吧。")
    assert held() == ["用户在杭州工作", "用户：我在杭州上班。"]
    assert "两万五" not in "".join(messages())


# --- The LLM extractor --------------------------------------------------------------------------


class FakeLLM(FakeOpenAIHandler):
    """A model that finds what the rules do not: a request in words they miss, a secret with
    no label they know."""

    requests: list[dict] = []
    fail = False
    ANSWERS = {
        "Could you make my old address vanish?": [
            {
                "action": "forget",
                "topic": "my old address",
                "request": "Could you make my old address vanish?",
            }
        ],
        "The shed opens with blue-7-7-heron.": [
            {"action": "sensitive", "kind": "pin", "text": "blue-7-7-heron"},
            {
                "action": "remember",
                "content": "The user's shed opens with blue-7-7-heron",
                "statements": [{"attribute": "shed code", "value": "blue-7-7-heron"}],
            },
        ],
    }

    def answer(self, path: str, body: dict) -> tuple[int, dict | None]:
        type(self).requests.append(body)
        if type(self).fail:
            return 500, None
        items = self.ANSWERS.get(body["messages"][-1]["content"], [])
        return 200, {"choices": [{"message": {"content": json.dumps({"items": items})}}]}


@pytest.fixture
def llm(settings):
    FakeLLM.requests, FakeLLM.fail = [], False
    with serving(FakeLLM) as base_url:
        settings.EXTRACTOR, settings.LLM_API_BASE, settings.LLM_MAX_RETRIES = "llm", base_url, 0
        extractor.cache_clear()
        yield FakeLLM
    extractor.cache_clear()


def test_the_llm_finds_requests_the_rules_miss(agent, session, llm):
    say(agent, session, "My address is 12 Elm Street, Springfield.")
    answer = say(agent, session, "Could you make my old address vanish?")
    assert answer["forget"][0]["memories"]
    assert held() == []
    assert messages()[-1] == "[forget request]"


def test_the_llm_finds_secrets_the_rules_miss_and_never_sees_theirs(agent, session, llm):
    answer = say(agent, session, "The shed opens with blue-7-7-heron.")
    assert answer["redactions"] == {"pin": 1}
    assert messages() == ["The shed opens with [redacted: pin]."]
    assert held() == [
        "The user's shed opens with [redacted: pin]",
        "User: The shed opens with [redacted: pin].",
    ]
    say(agent, session, "My password is hunter2hunter2.")
    assert "hunter2hunter2" not in json.dumps(llm.requests)  # redacted before it is sent
    # Nor does the value it named reach the memory graph.
    assert not GraphEdge.objects.filter(object_value__contains="heron").exists()


def test_a_failing_llm_loses_no_request_to_forget(agent, session, llm):
    say(agent, session, "My address is 12 Elm Street, Springfield.")
    llm.fail = True
    answer = say(agent, session, "Please forget my address.")
    assert answer["message"]["content"] == "[forget request]"
    assert answer["forget"][0]["memories"]
    assert held() == []


def test_a_fact_retelling_an_erased_sentence_goes_with_it(agent, session):
    """A fact drawn from a sentence in other words (here one an LLM extractor could write)."""
    say(agent, session, "I started sertraline because of my anxiety.")
    message = ConversationMessage.objects.get()
    memory_add(
        item=MemoryInput(
            user_id=USER,
            content="The user takes sertraline",
            memory_type="fact",
            session_id=message.session_id,
            conversation_id=message.id,
        ),
        caller=SYSTEM,
    )
    say(agent, session, "Can you forget everything I told you about my anxiety?")
    assert not Memory.objects.current().filter(content__icontains="sertraline").exists()
