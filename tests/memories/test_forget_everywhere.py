"""A forget leaves the forgotten words in no live row of any table: beside the memories and the
messages, a memory's key and metadata, a session's metadata, and the graph edges a message
would have written before asking to forget what it said."""

import pytest

from memories.models import ConversationSession
from tests.memories.test_forget import data, say, text_anywhere

pytestmark = pytest.mark.django_db

USER = "agent:dana"
TOPIC = {"topic": "everything about Zebulon Quarrington"}


@pytest.fixture
def http(make_client):
    return make_client("agent", ["agent:"])[0]


def session_opened(http, **extra) -> str:
    body = {"user_id": USER, **extra}
    return data(http.post("/api/v1/sessions/", body, format="json"), 201)["id"]


def forget(http) -> dict:
    return data(http.post(f"/api/v1/users/{USER}/forget/", TOPIC, format="json"))


def test_a_sessions_metadata_loses_what_names_the_topic(http):
    session = session_opened(http, metadata={"title": "chat about Zebulon", "mood": "calm"})
    say(http, session, "My ex Zebulon Quarrington still lives in Lisbon.")
    assert forget(http)["memories"]
    assert text_anywhere("Zebulon") == []
    metadata = ConversationSession.objects.get(pk=session).metadata
    assert metadata == {"title": "[forgotten]", "mood": "calm"}


def test_a_memory_filed_under_the_topic_or_naming_it_in_its_metadata_is_reached(http):
    fact = {"user_id": USER, "memory_type": "fact"}
    about = {**fact, "content": "The user's ex is a carpenter", "metadata": {"person": "Zebulon"}}
    named = data(http.post("/api/v1/memories/", about, format="json"), 201)["memory"]["id"]
    keyed = {"user_id": USER, "key": "ex:zebulon-quarrington", "value": {"text": "A carpenter"}}
    filed = data(http.post("/add_memory", keyed, format="json"), 201)["meta"]["id"]
    kept = {**fact, "content": "The user drinks green tea", "metadata": {"when": "mornings"}}
    data(http.post("/api/v1/memories/", kept, format="json"), 201)
    erased = {m["id"]: m["erased"] for m in forget(http)["memories"]}
    assert erased == {named: "part", filed: "whole"}
    assert text_anywhere("Zebulon") == []
    listed = data(http.get("/api/v1/memories/", {"user_id": USER}))
    assert {m["content"]: m["metadata"] for m in listed} == {
        "The user's ex is a carpenter": {"person": "[forgotten]"},
        "The user drinks green tea": {"when": "mornings"},
    }


def test_a_memory_erased_in_part_loses_the_metadata_naming_the_topic(http):
    episode = {
        "user_id": USER,
        "memory_type": "episodic",
        "content": "We had dinner with Zebulon. The pasta was great.",
        "metadata": {"with": "Zebulon", "place": "Trattoria"},
    }
    data(http.post("/api/v1/memories/", episode, format="json"), 201)
    assert [m["erased"] for m in forget(http)["memories"]] == ["part"]
    assert text_anywhere("Zebulon") == []
    (memory,) = data(http.get("/api/v1/memories/", {"user_id": USER}))
    assert memory["content"] == "The pasta was great."
    assert memory["metadata"] == {"with": "[forgotten]", "place": "Trattoria"}


def test_what_a_message_states_and_then_asks_to_forget_reaches_no_graph_edge(http):
    session = session_opened(http)
    said = "Zebulon Quarrington is a pilot now. Please forget everything about Zebulon Quarrington."
    answer = say(http, session, said)
    assert answer["forget"][0]["memories"]
    assert text_anywhere("Zebulon") == [] and text_anywhere("pilot") == []


def test_a_chinese_topic_naming_a_person_by_role_and_name_forgets_them_by_name(http):
    session = session_opened(http)
    say(http, session, "我前女友叫翟珂娴，她住在杭州。")
    say(http, session, "翟珂娴养了一只猫叫团团。")
    say(http, session, "我每天早上喝绿茶。")
    answer = say(http, session, "请忘掉关于我前女友翟珂娴的一切。")
    assert answer["forget"][0]["memories"]
    assert text_anywhere("珂娴") == []
    assert text_anywhere("绿茶") != []  # what is not about her stays


@pytest.mark.parametrize(
    ("said", "asked", "name"),
    [
        ("Zebulon Quarrington moved to Berlin.", "Please forget everything about him.", "Zebulon"),
        ("张婷搬到杭州了。", "忘掉关于她的一切。", "张婷"),
    ],
)
def test_him_or_her_is_the_one_person_just_named(http, said, asked, name):
    earlier = session_opened(http)
    say(http, earlier, f"{name} loves sailing.")  # said before, elsewhere: about them too
    say(http, earlier, "I drink green tea every morning.")
    answer = say(http, session_opened(http), f"{said} {asked}")
    assert answer["forget"][0]["memories"], answer["forget"]
    assert text_anywhere(name) == []
    assert text_anywhere("green tea") != []


def test_the_values_of_what_is_forgotten_reach_no_key_and_a_relative_s_state_is_no_name(http):
    fact = {"user_id": USER, "memory_type": "fact"}
    wedding = {**fact, "content": "The user got married in 2019 in Lisbon"}
    married = data(http.post("/api/v1/memories/", wedding, format="json"), 201)["memory"]["id"]
    goal = {**fact, "content": "Run a marathon", "key": "goals:2019"}
    kept = data(http.post("/api/v1/memories/", goal, format="json"), 201)["memory"]["id"]
    forgotten = data(
        http.post(f"/api/v1/users/{USER}/forget/", {"memory_ids": [married]}, format="json")
    )
    assert [m["id"] for m in forgotten["memories"]] == [married]
    assert data(http.get(f"/api/v1/memories/{kept}/"))["key"] == "goals:2019"
    # "我女儿生病" is the daughter's illness: the user's own stays.
    own = {**fact, "content": "用户去年生病住过院"}
    data(http.post("/api/v1/memories/", own, format="json"), 201)
    daughter = {**fact, "content": "用户的女儿上周生病了"}
    data(http.post("/api/v1/memories/", daughter, format="json"), 201)
    data(http.post(f"/api/v1/users/{USER}/forget/", {"topic": "我女儿生病"}, format="json"))
    assert text_anywhere("用户去年生病住过院") != []
