"""The extractors on their own: natural phrasings (English and Chinese) to third-person facts,
slots and forget requests; which turns carry no content; how a turn reads as an episode; the
LLM extractor's request and how its answer is read."""

import json

import pytest

from memories.extraction import (
    EPISODE,
    Extraction,
    ExtractionError,
    LLMExtractor,
    RuleBasedExtractor,
    content_free,
    episode_content,
)
from memories.forgetting.asks import asks_to_forget
from memories.forgetting.topics import topic_read
from tests.fake_openai import FakeOpenAIHandler, serving


def extracted(text: str) -> list[tuple[str, str | None]]:
    return [
        (e.content, e.slot) for e in RuleBasedExtractor().extract(text) if e.action == "remember"
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Corrections, as people say them
        (
            "Oh wait, sorry, I got that wrong: I actually live in Hangzhou now",
            [("The user lives in Hangzhou", "profile:home_city")],
        ),
        (
            "Correction: I'm a product manager now",
            [("The user is a product manager", "profile:job")],
        ),
        ("我在阿里巴巴做产品经理", [("用户在阿里巴巴做产品经理", "profile:job")]),
        ("其实我现在住在杭州", [("用户住在杭州", "profile:home_city")]),
        ("不对，我是产品经理", [("用户是产品经理", "profile:job")]),
        ("I moved to Austin last month.", [("The user lives in Austin", "profile:home_city")]),
        ("我搬到了上海。", [("用户住在上海", "profile:home_city")]),
        # Several details, each its own fact
        (
            "I live in Shanghai with my wife and daughter",
            [
                ("The user lives in Shanghai", "profile:home_city"),
                ("The user lives with their wife and daughter", "profile:household"),
            ],
        ),
        (
            "我和妻子女儿住在上海。",
            [
                ("用户住在上海", "profile:home_city"),
                ("用户和妻子女儿住在一起", "profile:household"),
            ],
        ),
        (
            "My name is Marcus Chen and I live in New York City.",
            [
                ("The user's name is Marcus Chen", "profile:name"),
                ("The user lives in New York City", "profile:home_city"),
            ],
        ),
        (
            "I don't like cilantro, and I hate olives",
            [("The user doesn't like cilantro", None), ("The user hates olives", None)],
        ),
        # Other slots and slot-less facts
        (
            "I'm an engineer at Acme Corp.",
            [("The user is an engineer at Acme Corp", "profile:job")],
        ),
        ("I work at Google", [("The user works at Google", "profile:job")]),
        (
            "My email is alice@example.com.",
            [("The user's email is alice@example.com", "profile:email")],
        ),
        (
            "My phone number is +1 555-123-4567.",
            [("The user's phone number is +1 555-123-4567", "profile:phone")],
        ),
        ("我叫小明。", [("用户的名字是小明", "profile:name")]),
        ("I'm allergic to peanuts.", [("The user is allergic to peanuts", None)]),
        ("我对花生过敏", [("用户对花生过敏", None)]),
        (
            "I really love hiking with my dog",
            [("The user really loves hiking with their dog", None)],
        ),
        ("我很喜欢吃辣", [("用户很喜欢吃辣", None)]),
        (
            "The project deadline is May 1",
            [("The project deadline is May 1", "plan:deadline:project")],
        ),
        ("My deadline is Friday", [("The user's deadline is Friday", "plan:deadline")]),
        # Events, plans, questions: the episode keeps them, no fact
        ("I'm going to Tokyo next week.", []),
        ("Yesterday I met my sister.", []),
        ("What's the weather like?", []),
        ("今天天气不错。", []),
    ],
)
def test_rule_based_facts(text, expected):
    assert extracted(text) == expected


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("Please forget my phone number.", "my phone number"),
        ("Can you please forget my address?", "my address"),
        ("请忘记我的地址。", "我的地址"),
        ("forget that I love spicy food", "that I love spicy food"),
        ("Forget about my trip to Tokyo.", "my trip to Tokyo"),
        ("忘掉我喜欢吃辣这件事", "我喜欢吃辣这件事"),
        ("把我喜欢吃辣这件事忘掉吧", "我喜欢吃辣这件事"),
        ("帮我把我爱吃辣这件事忘了吧，最近胃不好。", "我爱吃辣这件事"),
        ("把我前男友的事都忘掉吧，不想再提他了。", "我前男友的事"),
    ],
)
def test_forget_requests_are_never_facts(text, topic):
    (extraction,) = RuleBasedExtractor().extract(text)
    assert (extraction.action, extraction.topic) == ("forget", topic)
    assert extraction.request in text  # the sentence that asks, stored as "[forget request]"
    assert asks_to_forget(text)


@pytest.mark.parametrize("text", ["I always forget my keys", "我忘了带钥匙", "Forgetful me!"])
def test_forgetting_something_is_not_a_forget_request(text):
    assert not asks_to_forget(text)
    assert all(e.action == "remember" for e in RuleBasedExtractor().extract(text))


def test_a_forget_request_naming_nothing_is_a_request_that_names_nothing():
    (extraction,) = RuleBasedExtractor().extract("Forget what I said")
    assert extraction.action == "forget"
    assert topic_read(extraction.topic).vague


@pytest.mark.parametrize(
    "text",
    [
        "thanks",
        "ok",
        "OK!",
        "好的",
        "谢谢",
        "好的，谢谢！",
        "👍",
        "❤️",
        "lol",
        "haha ok",
        "hmm...",
        "Thank you so much 🙏🏻",
        "bye!",
        "嗯嗯",
        "哈哈哈",
        "   ",
    ],
)
def test_content_free_turns(text):
    assert content_free(text)


@pytest.mark.parametrize(
    "text",
    [
        "no",
        "yes",
        "对",
        "不行",
        "ok, I live in Berlin",
        "哈尔滨",
        "Window please",
        "42",
        "好久不见",
    ],
)
def test_turns_with_content(text):
    assert not content_free(text)


def test_episode_format():
    assert episode_content("It's Marcus Chen", replying_to="What's your name?") == (
        "Assistant: What's your name? → User: It's Marcus Chen"
    )
    assert episode_content("  I'm going to Tokyo next week. ") == (
        "User: I'm going to Tokyo next week."
    )
    assert episode_content("我叫陈明", replying_to="你叫什么名字？") == (
        "助手：你叫什么名字？ → 用户：我叫陈明"
    )


@pytest.mark.parametrize(
    ("words", "replying_to"),
    [("It's Marcus Chen", "What's your name?"), ("我叫陈明", "你叫什么名字？"), ("Hi there", "")],
)
def test_an_episode_reads_back_as_its_context_and_words(words, replying_to):
    episode = EPISODE.match(episode_content(words, replying_to=replying_to))
    assert (episode["context"] or "", episode["words"]) == (replying_to, words)


def test_a_long_assistant_turn_is_kept_by_its_last_sentences():
    long = "Here are three options. " + "The first one is cheap and cheerful. " * 6
    content = episode_content("Window", replying_to=long + "Window or aisle seat?")
    assert content.startswith("Assistant: The first one")
    assert content.endswith("Window or aisle seat? → User: Window")
    assert len(content) < len("Assistant:  → User: Window") + 161
    # One long sentence: its last 160 characters, from the first whole word.
    one_sentence = "word " * 60 + "and which seat would you like"
    assert episode_content("Aisle", replying_to=one_sentence) == (
        "Assistant: …" + "word " * 26 + "and which seat would you like → User: Aisle"
    )


# --- The LLM extractor -----------------------------------------------------------------------


class FakeLLM(FakeOpenAIHandler):
    answer_items: list = []
    requests: list[dict] = []

    def answer(self, path: str, body: dict) -> tuple[int, dict]:
        type(self).requests.append(body)
        content = json.dumps({"items": type(self).answer_items})
        return 200, {"choices": [{"message": {"content": content}}]}


@pytest.fixture
def llm():
    FakeLLM.requests = []
    with serving(FakeLLM) as base_url:
        yield LLMExtractor(base_url=base_url, api_key="k", model="m", timeout=5)


def test_llm_prompt_asks_for_third_person_slots_and_forgets(llm):
    FakeLLM.answer_items = []
    llm.extract("It's Marcus Chen", replying_to="What's your name?")
    [request] = FakeLLM.requests
    system, assistant, user = request["messages"]
    assert (assistant, user) == (
        {"role": "assistant", "content": "What's your name?"},
        {"role": "user", "content": "It's Marcus Chen"},
    )
    prompt = system["content"]
    assert "third person" in prompt and "The user lives in Hangzhou" in prompt
    assert "profile:home_city" in prompt and "profile:household" in prompt
    assert 'never a "remember" item' in prompt
    assert '"sensitive"' in prompt and "Never put a secret into" in prompt
    assert request["response_format"] == {"type": "json_object"}


def test_llm_answer_is_read_into_extractions(llm):
    FakeLLM.answer_items = [
        {
            "action": "remember",
            "content": "The user lives in Hangzhou",
            "slot": "profile:home_city",
            "importance": 3,
        },
        {"action": "remember", "content": "  ", "slot": None},  # says nothing: dropped
        {"action": "forget", "topic": "my love of spicy food", "request": " Forget that. "},
        {"action": "sensitive", "kind": "pin", "text": "4471"},
        {"action": "sensitive", "kind": "horoscope", "text": "Leo"},  # no such kind: dropped
    ]
    assert llm.extract("…") == [
        Extraction("remember", "The user lives in Hangzhou", 1.0, "profile:home_city"),
        Extraction("forget", topic="my love of spicy food", request="Forget that."),
        Extraction("sensitive", "4471", kind="pin"),
    ]


def test_llm_answer_that_is_not_the_structure_is_an_error(llm):
    FakeLLM.answer_items = ["not an object"]
    with pytest.raises(ExtractionError):
        llm.extract("I live in Lisbon.")
