"""The extractors on their own: natural phrasings (English and Chinese) to third-person facts,
slots and forget requests; which turns carry no content; how a turn reads as an episode; the
LLM extractor's request and how its answer is read."""

import json
from collections import Counter

import pytest

from memories.extraction import (
    EPISODE,
    Extraction,
    ExtractionError,
    LLMExtractor,
    RuleBasedExtractor,
    content_free,
    episode_content,
    only_asks,
)
from memories.forgetting.asks import asks_to_forget
from memories.forgetting.topics import topic_read
from memories.statements import USER, Statement, Subject, english, message_read
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
        # How to reach the user is no name; others' home is not the user's
        ("Call me on 07700 900123 if anything comes up.", []),
        ("Call me Liz.", [("The user's name is Liz", "profile:name")]),
        ("My in-laws live in Cork.", [("The user's in-laws live in Cork", None)]),
        (
            "My grandparents live in Springfield.",
            [("The user's grandparents live in Springfield", None)],
        ),
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


@pytest.mark.parametrize(
    ("words", "replying_to"),
    [
        ("How do I descale a kettle?", ""),
        ("Which is bigger, a hectare or an acre? Never remember.", ""),
        ("Translate 'see you soon' into Spanish.", ""),
        ('What does "my bad" mean in an email?', ""),  # quoted words are no one's own
        ("How long should I boil an egg?", ""),  # "should I" only asks
        ("What's 2.5 times 4?", ""),
        ("Could you list four board games for two players.", "Anything else?"),
        ("茶垢怎么去掉？", ""),
        ("帮我把这段话改成正式一点的语气。", "还有别的吗？"),
        ("用一句话解释一下什么是通货膨胀。", ""),
        # An aside on the asking, or the register asked for, says nothing of the user.
        ("What's the boiling point of water in Fahrenheit? I can never remember.", ""),
        ("Is it affect or effect here? I’m never sure.", ""),
        ("Explain how a mortgage works like I'm ten.", ""),
        ("月球的重力是地球的多少？我老记不住。", ""),
        ("从北京到上海的高铁有多快？", ""),
    ],
)
def test_a_request_to_the_assistant_only_asks(words, replying_to):
    assert only_asks(episode_content(words, replying_to=replying_to))


@pytest.mark.parametrize(
    "content",
    [
        episode_content("Can you help me plan my sister's hen party?"),  # whose party
        episode_content("What should our team call the new project?"),
        episode_content("We adopted a puppy on Sunday. Any tips for the first night?"),
        episode_content("Turns out the kettle was broken all along."),
        episode_content("Is it weird that I hate cilantro?"),  # a question that tells
        episode_content("How do I descale a kettle? I moved to Leeds and the water is hard."),
        episode_content("Name's Priya, by the way."),  # "name" opens no instruction here
        episode_content("Can't decide between the two flats."),
        episode_content("What's 2.5 times 4? We're baking for twelve."),
        episode_content("When does the pharmacy close? I always forget to pick up my insulin."),
        episode_content("Is it affect or effect? I'm not sure my editor will care."),
        episode_content("立春是哪天？我忘了带日历。"),
        episode_content("What should I do about the breakup? I can't forget it."),
        episode_content("Explain insulin resistance like I'm five, my doctor says I have it."),
        episode_content("我老公打呼噜怎么办？"),
        episode_content("我最近总是失眠，有什么办法吗？"),
        episode_content("刚升职了，要不要请同事吃饭？"),  # what happened, then a question
        episode_content("推荐的那家餐厅我去了，真不错。"),
        episode_content("用了三年的笔记本，写代码越来越卡。"),
        episode_content("写完论文了，终于可以休息了。"),
        "The user asked how to descale a kettle?",  # a fact, not the user's words
    ],
)
def test_words_of_the_user_own_or_no_request_do_not_only_ask(content):
    assert not only_asks(content)


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


# --- Subjects and statements -----------------------------------------------------------------


def remembered(text: str) -> list[Extraction]:
    return [e for e in RuleBasedExtractor().extract(text) if e.action == "remember"]


def test_a_message_about_two_brothers_gives_one_fact_each_linked_to_its_subject():
    facts = remembered(
        "My brother Mike is a doctor in Chicago. My brother Mark is a lawyer in New York."
    )
    assert [(f.content, f.subject, f.slot) for f in facts] == [
        (
            "The user's brother Mike is a doctor in Chicago",
            Subject("Mike", "brother", "person"),
            None,
        ),
        (
            "The user's brother Mark is a lawyer in New York",
            Subject("Mark", "brother", "person"),
            None,
        ),
    ]
    mark = facts[1]
    assert Statement(mark.subject, "job", "a lawyer", single=True) in mark.statements
    assert not any(s.subject.name == "Mike" for s in mark.statements)


def test_the_users_sentence_is_a_user_fact_beside_the_wifes():
    facts = remembered("I bought a Tesla Model 3 for commuting. My wife drives a Toyota Camry.")
    assert [(f.content, f.subject.role, f.slot) for f in facts] == [
        ("The user bought a Tesla Model 3 for commuting", "", None),
        ("The user's wife drives a Toyota Camry", "wife", None),
    ]
    assert [s.value for s in facts[0].statements] == ["Tesla Model 3"]
    assert [s.value for s in facts[1].statements] == ["Toyota Camry"]


def test_a_rule_fact_carries_the_value_it_states():
    (fact,) = remembered("I moved to Austin last month.")
    assert (fact.content, fact.slot, fact.subject) == (
        "The user lives in Austin",
        "profile:home_city",
        USER,
    )
    assert [(s.attribute, s.value, s.single) for s in fact.statements] == [
        ("lives in", "Austin", True)
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Rust is now my favorite language.",
            ("Rust is now the user's favorite language", "profile:favorite_language"),
        ),
        ("I'm no longer vegetarian.", ("The user is no longer vegetarian", "profile:diet")),
        (
            "I'm all settled in Denver now.",
            ("The user is all settled in Denver now", "profile:home_city"),
        ),
        (
            "I've officially started at Anthropic now.",
            ("The user has officially started at Anthropic now", "profile:job"),
        ),
        (
            "Actually I got a new phone number. It's 555-0202 now.",
            ("The user got a new phone number. It's 555-0202 now", "profile:phone"),
        ),
        ("I speak Spanish fluently.", ("The user speaks Spanish fluently", None)),
        ("我不再吃素了", ("用户不再吃素了", "profile:diet")),
    ],
)
def test_a_value_no_rule_wrote_is_a_fact_of_its_own(text, expected):
    (fact,) = remembered(text)
    assert (fact.content, fact.slot) == expected
    assert fact.statements and fact.subject == USER


def test_an_end_said_before_the_new_value_keeps_no_slot():
    facts = remembered("Finished Dune too! Just started '1984' by George Orwell today.")
    assert [(f.content, f.slot) for f in facts] == [
        ("The user finished Dune too", None),
        ("The user just started '1984' by George Orwell today", "profile:reading"),
    ]
    assert facts[0].statements[0].ended


def test_a_user_fact_repeating_a_rule_fact_is_written_once():
    facts = remembered("I live in Denver. My brother Mark lives in Boston.")
    assert [(f.content, f.slot) for f in facts] == [
        ("The user lives in Denver", "profile:home_city"),
        ("The user's brother Mark lives in Boston", None),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "My brother Mike is a doctor in Chicago. My brother Mark is a lawyer in New York.",
        "I have two cats. Whiskers is a tabby and is 3 years old. Mittens is a black cat and is "
        "7 years old.",
        "I speak Spanish fluently and I'm learning Mandarin. My wife speaks French fluently and "
        "is learning Japanese.",
        "Sadly, Max passed away last month. But we just adopted a new puppy — a labrador named "
        "Luna.",
        "I live in Shanghai with my wife and daughter. My name is Marcus and I work at Google.",
        "I'm an engineer at Acme Corp in Berlin. My sister Anna is a nurse. She lives in Paris.",
        "我哥哥马克是纽约的律师。我住在杭州，在阿里巴巴上班。",
        "我养了一只柴犬叫芝麻，两岁。我老婆开丰田。",
        "I moved to Austin and my wife Ana works at Dell.",
        "Rust is now my favorite language. I'm no longer vegetarian. My dog's name is Rex.",
    ],
)
def test_every_value_read_is_carried_by_exactly_one_fact(text):
    carried = Counter(
        (s.subject, s.attribute, s.value, s.ended) for e in remembered(text) for s in e.statements
    )
    read = Counter(
        (s.subject, s.attribute, s.value, s.ended) for s in message_read(text).statements
    )
    assert carried == read and read
    contents = [e.content for e in remembered(text)]
    assert len(contents) == len(set(contents))


def test_a_forget_request_is_not_read_for_values():
    extractions = RuleBasedExtractor().extract(
        "Please forget my address. My wife Ana works at Dell."
    )
    assert [e.action for e in extractions] == ["forget", "remember"]
    assert extractions[1].subject == Subject("Ana", "wife", "person")


def test_llm_prompt_asks_for_one_item_a_subject_with_statements(llm):
    FakeLLM.answer_items = []
    llm.extract("My brother Mark is a lawyer.")
    prompt = FakeLLM.requests[0]["messages"][0]["content"]
    assert '"subject": {"name"' in prompt and '"statements": [{"attribute"' in prompt
    assert "two" in prompt and "The user's brother Mark is a" in prompt
    assert '"ended"' in prompt and '"single"' in prompt


def test_llm_subjects_and_statements_are_read_and_garbage_is_dropped(llm):
    FakeLLM.answer_items = [
        {
            "action": "remember",
            "content": "The user's brother Mark is a lawyer in New York",
            "slot": "profile:job",  # another subject's fact holds no slot of the user's
            "subject": {"name": "Mark", "role": "brother", "kind": "person"},
            "statements": [
                {"attribute": "Occupation", "value": "a lawyer", "single": True},
                {"attribute": "based in", "value": "New York"},
                {"attribute": "", "value": "x"},  # no attribute: dropped
                {"attribute": "car"},  # no value, not ended: dropped
                "not a statement",
            ],
        },
        {
            "action": "remember",
            "content": "The user is no longer vegetarian",
            "slot": "profile:diet",
            "statements": [{"attribute": "diet", "value": "vegetarian", "ended": True}],
        },
        {
            "action": "remember",
            "content": "The user's cat Luna is 2",
            "subject": {"name": "Luna", "role": "cat", "kind": "alien"},  # unknown kind
            "statements": {"attribute": "age"},  # not a list
        },
        {"action": "remember", "content": "The user likes tea", "subject": "me"},  # not an object
    ]
    mark, diet, luna, tea = llm.extract("…")
    assert (mark.subject, mark.slot) == (Subject("Mark", "brother", "person"), None)
    assert [(s.attribute, s.value, s.single) for s in mark.statements] == [
        ("job", "a lawyer", True),
        ("lives in", "New York", True),
    ]
    assert (diet.subject, diet.slot) == (USER, "profile:diet")
    assert diet.statements == (Statement(USER, "diet", "vegetarian", single=True, ended=True),)
    assert (luna.subject, luna.statements) == (Subject("Luna", "cat", "person"), ())
    assert tea.subject == USER


@pytest.mark.parametrize(
    ("message", "fact"),
    [
        ("I live in St. Louis.", "The user lives in St. Louis"),
        ("I'm a nurse at St. Mary's Hospital.", "The user is a nurse at St. Mary's Hospital"),
        ("My therapist is Dr. Lane.", "The user's therapist is Dr. Lane"),
    ],
)
def test_a_titles_full_stop_ends_no_sentence(message, fact):
    assert fact in [e.content for e in RuleBasedExtractor().extract(message)]


@pytest.mark.parametrize(
    ("message", "facts"),
    [
        ("I no longer live in Austin.", ["The user no longer lives in Austin"]),
        ("I no longer work at Google.", ["The user no longer works at Google"]),
        ("Nobody in my family lives in Texas.", []),
    ],
)
def test_no_longer_is_retold_and_nobody_is_no_one(message, facts):
    assert [e.content for e in RuleBasedExtractor().extract(message)] == facts


@pytest.mark.parametrize(
    ("message", "relation", "name"),
    [("My wife's name is Sarah.", "partner", "Sarah"), ("My dog's name is Rex.", "pet", "Rex")],
)
def test_a_relatives_name_said_alone_names_them(message, relation, name):
    [fact] = RuleBasedExtractor().extract(message)
    assert (relation, name) in [(s.attribute, s.value) for s in fact.statements]


@pytest.mark.parametrize(
    ("message", "held"),
    [("I stopped working at Google.", [True]), ("I applied to work at Google.", [])],
)
def test_work_ended_or_only_sought_is_no_employer(message, held):
    ended = [
        s.ended
        for fact in RuleBasedExtractor().extract(message)
        for s in fact.statements
        if s.attribute == "works at"
    ]
    assert ended == held


@pytest.mark.parametrize(
    ("message", "fact"),
    [
        ("When I moved to Austin last year, I joined Dell.", "The user lives in Austin"),
        ("Will is my brother.", "Will is the user's brother"),
        (
            "What I do for work: I'm a nurse at Mercy Hospital.",
            "The user is a nurse at Mercy Hospital",
        ),
        (
            'My favourite book is "Dune" and my favourite film is "Alien".',
            'The user\'s favourite film is "Alien"',
        ),
        ('I told my boss "I quit" and I now work at Google.', "The user works at Google"),
        ("I used to live in Boston but now I live in Austin.", "The user lives in Austin"),
        ("Imagine Dragons is my favorite band.", "Imagine Dragons is the user's favorite band"),
        ("I'd like to update my address: I now live in Berlin.", "The user lives in Berlin"),
        ("我的工作是翻译。", "用户的工作是翻译"),
        ("#1 priority: I live in Austin", "The user lives in Austin"),
        (
            "My doctor said my blood pressure is on the high side.",
            "The user's doctor said the user's blood pressure is on the high side",
        ),
    ],
)
def test_a_statement_that_looks_like_a_question_or_a_quote_still_states(message, fact):
    assert fact in [e.content for e in RuleBasedExtractor().extract(message)]


def test_a_place_asked_within_is_where_one_lives_only():
    told = RuleBasedExtractor().extract(
        "I live in Austin.", replying_to="Where in Japan did you travel last year?"
    )
    assert [e.content for e in told] == ["The user lives in Austin"]


def test_the_same_value_said_twice_in_a_message_is_kept_as_said():
    said = RuleBasedExtractor().extract("I'm a software engineer at Google. I work at Google.")
    assert "The user is a software engineer at Google" in [e.content for e in said]


def test_a_relative_clause_on_someone_else_ends_where_the_users_own_begins():
    clause = "I have a sister who lives in Boston and I live in Austin"
    assert english.others_relative_left_out(clause) == "I have a sister and I live in Austin"
