"""Forget requests as people say them, English and Chinese (memories/forgetting/asks.py), and
what their topics name (memories/forgetting/topics.py)."""

import pytest

from memories.forgetting.asks import forget_asks
from memories.forgetting.topics import Values, owned_by_another, topic_read


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("For privacy reasons, please remove my home address from your memory.", "my home address"),
        ("Please delete my medical information. I don't want it stored.", "my medical information"),
        ("Could you scrub anything health-related you have on me?", "anything health-related"),
        ("Take my home address out of your memory, please.", "my home address"),
        ("I'd really prefer you didn't hold on to what I earn.", "what I earn"),
        ("Stop remembering where I work.", "where I work"),
        ("No need to remember my religious stuff.", "my religious stuff"),
        ("Let's pretend I never told you about my ex, okay?", "my ex"),
        ("Could you not hold on to the therapy details?", "the therapy details"),
        (
            "Scrap what I said about my pay, I don't want that floating around.",
            "what I said about my pay",
        ),
        ("Please delete the streaming account info I gave you.", "the streaming account info"),
        (
            "Hold on, I'd rather you not store anything about the baby until I've told my family.",
            "anything about the baby",
        ),
        ("Actually, don't keep that.", "that"),
        ("Forget I said that.", "what i just said"),
        ("Forget what I said.", "what i said"),
        ("Wipe my email address, I changed providers anyway.", "my email address"),
        ("请忘记我的地址。", "我的地址"),
        ("请把我的住址从你的记忆里清除掉。", "我的住址"),
        ("别记我的工资了。", "我的工资"),
        ("我的病史你就别记了", "我的病史"),
        ("怀孕的事先别保存。", "怀孕的事"),
        ("关于那段感情的事，你都忘了吧。", "关于那段感情的事"),
        ("工资那个事情你忘掉吧。", "工资那个事情"),
        ("打官司的事请帮我清除掉，不想留下任何记录。", "打官司的事"),
        ("我哥那件事，你就当不知道吧，别存着。", "我哥那件事"),
        ("股票亏钱那事，帮我从记忆里彻底删除。", "股票亏钱那事"),
        ("刚才说的当我没说吧。", "刚才说的"),
        ("算了算了，全部都忘了吧。", "全部"),
        ("我不想让你记住我的生日。", "我的生日"),
    ],
)
def test_requests_as_people_make_them(text, topic):
    ask = forget_asks(text)[0]
    assert ask.topic == topic
    assert text[ask.start : ask.end].strip()  # where the asking sentence stands


@pytest.mark.parametrize(
    "text",
    [
        "I always forget my keys",
        "Don't forget to call my mom tomorrow.",
        "Don't let me forget, Mom's birthday is May 9th!",
        "I deleted my Facebook account last week.",
        "I forgot my password again.",
        "Can you remind me to delete the old backups?",
        "The doctor told me to remove sugar from my diet.",
        "Clear my schedule for Friday.",
        "Delete the draft email.",
        "Remove the meeting from my calendar.",
        "Drop me a line when you can.",
        "我忘了带钥匙",
        "别忘了提醒我明天交房租。",
        "我把照片删了",
        "我老是忘记给女儿签作业本，有什么办法提醒自己吗？",
        "删除这个文件",
        "清空购物车",
    ],
)
def test_what_only_sounds_like_a_request_is_none(text):
    assert forget_asks(text) == []


@pytest.mark.parametrize("said", ["everything", "what I said", "all my data", "一切", "全部"])
def test_a_topic_naming_nothing_is_vague(said):
    assert topic_read(said).vague


@pytest.mark.parametrize("said", ["that", "it", "what I just said", "刚才说的", "这个"])
def test_a_topic_pointing_back(said):
    topic = topic_read(said)
    assert topic.anaphoric and not topic.vague


def test_a_topic_is_its_concepts_and_what_makes_it_specific():
    address = topic_read("my home address")
    assert ([c.name for c in address.concepts], address.words, address.owned) == (
        ["address"],
        (),
        True,
    )
    assert address.broad and "profile:address" in address.slots
    cell = topic_read("my personal cell number")
    assert ([c.name for c in cell.concepts], cell.words) == (["phone"], ("personal",))
    assert not cell.broad
    card = topic_read("the credit card info")
    assert [c.name for c in card.concepts] == ["payment_card"]  # not the bank account
    assert card.about("My subscriptions go on my Amex ending in 3092.")
    assert not card.about("Rent comes out of my Wells Fargo checking.")
    hunt = topic_read("the job hunt stuff")
    assert [c.name for c in hunt.concepts] == ["job_search"]  # not every job
    brother = topic_read("my brother's surgery")
    assert (brother.owner, brother.owned) == ("brother", False)
    assert brother.about("My brother had knee surgery.")
    assert not brother.about("I had knee surgery.")
    # One person, the only thing the topic calls the user's, named or asked about: theirs, as
    # "my brother's" is.
    for said, owner in (
        ("where my brother lives", "brother"),
        ("my brother Mark", "Mark"),
        ("我哥哥住在哪", "哥哥"),
        ("my kids", "kids"),
        ("everything about my ex", "ex"),
        ("我前男友", "前男友"),
    ):
        topic = topic_read(said)
        assert (topic.owner, topic.owned) == (owner, False), said
    for sentence in ("I live in Denver.", "My kids are 5 and 7.", "我住在上海。"):
        assert not topic_read("where my brother lives").about(sentence), sentence
        assert not topic_read("我哥哥住在哪").about(sentence), sentence
    assert topic_read("my kids").about("I have two kids.")  # a word at the sentence's end
    assert not topic_read("我前男友").about("今天情人节，男朋友张磊订了一家日料店。")
    assert not topic_read("my ex").about("My boyfriend Sam cooked dinner.")
    # The user's still: something else of theirs named too, or the person alone.
    for said in (
        "my trip with my brother",
        "my mom said my address",
        "my home address, which my brother knows",
        "my divorce from my wife",
        "my wife and my kids",
    ):
        assert (topic_read(said).owner, topic_read(said).owned) == ("", True), said
    assert topic_read("my trip with my brother").about("My trip to Paris was fun.")


def test_whose_it_is():
    address = topic_read("my address")
    assert address.about("My address is 742 Evergreen Terrace.")
    assert address.about("The user's address is 742 Evergreen Terrace.")
    assert not address.about("My friend Tom's work address is 400 Market Street.")
    assert not address.about("Dana lives at 17 Birchwood Lane.")
    assert owned_by_another("我朋友的地址是文三路88号", 5)
    assert not owned_by_another("我家的地址是文三路88号", 4)
    grandpa = topic_read("my grandpa's death")
    assert grandpa.about("My grandfather Harold passed away in January.")
    assert not grandpa.about("My grandmother Edith is moving to Tucson.")


def test_a_specific_topic_needs_its_specific_words():
    cell = topic_read("my personal cell number")
    assert cell.about("My personal cell is 415-555-0148.")
    assert not cell.about("If you need to reach my office, it's 415-555-0199.")
    # The office's number belongs to the office; a number of the user's own is left to meaning.
    assert not cell.partly("If you need to reach my office, it's 415-555-0199.")
    assert cell.partly("If you need to reach me, it's 415-555-0199.")


def test_values_identify_what_was_said():
    assert Values.of("The user's address is 742 Evergreen Terrace, Springfield").items == {
        "742",
        "Evergreen Terrace",
    }
    assert Values.of("I went through a bad breakup with Alex last year.").items == {"Alex"}
    assert Values.of("My email is sam@fastmail.com").items == {"sam@fastmail.com"}
