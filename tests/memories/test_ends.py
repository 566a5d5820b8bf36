"""Reading what a message says has ended by naming it (memories/statements/ends.py), and
whether the thing named is a value the graph holds."""

import pytest

from memories.statements.ends import (
    names_value,
    things_given_up,
    values_said_ended,
    values_said_wrong,
)


@pytest.mark.parametrize(
    "text, things",
    [
        ("The Miata is gone, I swapped it for a bike.", ("Miata",)),
        ("Our old Volvo was finally sold on Saturday.", ("Volvo",)),
        ("I sold my Vespa last month and bought an e-bike.", ("Vespa",)),
        ("Traded in the Golf for a Kia Niro.", ("Golf",)),
        ("We cancelled the Netflix subscription.", ("Netflix subscription",)),
        ("Tess and I broke up in March.", ("Tess",)),
        ("I gave up on Duolingo, no time.", ("Duolingo",)),
        ("我那辆思域卖了，现在坐地铁。", ("思域",)),
        ("跟小周分手了，还是朋友。", ("小周",)),
        ("钢琴课也不上了，太贵。", ("钢琴课",)),
        ("pilates停了，改成游泳。", ("pilates",)),
        ("卖掉了那辆雅阁，换了特斯拉。", ("雅阁",)),
        # Left, given up halfway, abandoned
        ("We moved from Austin to Denver last spring.", ("Austin",)),
        ("I transferred from the ICU to the pediatric ward.", ("ICU",)),
        ("I bailed on Severance halfway through season two.", ("Severance",)),
        ("Stardew has been abandoned, Baldur's Gate 3 has eaten my life.", ("Stardew",)),
        ("我从大疆离职了！", ("大疆",)),
        ("我从静安搬到了徐汇滨江。", ("静安",)),
        ("学校邮箱停用了。", ("学校邮箱",)),
        ("学校邮箱毕业就停用了。", ("学校邮箱",)),
        ("旺财送给我爸妈养了。", ("旺财",)),
    ],
)
def test_an_end_said_by_naming_the_thing(text, things):
    assert values_said_ended(text) == things


@pytest.mark.parametrize(
    "text",
    [
        "Should I sell the Miata?",
        "I'd never sell the Miata.",
        "I almost sold the Miata last year.",
        "I'm thinking of cancelling Netflix.",
        "I traded it in for a bike.",
        "The concert was sold out.",
        "我打算把思域卖了。",
        "思域卖了吗？",
        "我没把思域卖了。",
        "I live in Leeds and drive a Miata.",
        "我们分手了。",
        "My sister's Miata is gone.",
        "我姐的思域卖了。",
        "他从腾讯离职了。",
        "我从上个月开始调到了新部门。",
        "我老公去年升职了，后来从腾讯离职了。",
        "健身卡下周就取消了。",
        "妈妈送给我一只猫。",
        "我送给妈妈一束花了。",
    ],
)
def test_no_end_when_it_is_asked_planned_denied_or_unnamed(text):
    assert values_said_ended(text) == ()


@pytest.mark.parametrize(
    "text, given_up",
    [
        ("The PureGym membership is cancelled.", ("PureGym",)),
        ("I transferred from the ICU to the pediatric ward.", ("ICU",)),
        ("I sold my 2016 Civic.", ("Civic",)),
        # A common noun, a Han word, a number: no proper name to find it by
        ("Quit the café, too pricey.", ()),
        ("演唱会取消了。", ()),
        ("I sold my 2016 one.", ()),
        # Over for now, not given up
        ("Christmas is over, back to work.", ()),
        ("My Pixel is dead, texting from the laptop.", ()),
        ("I dropped Mark at the airport.", ()),
    ],
)
def test_what_is_given_up_for_good_by_its_proper_name(text, given_up):
    assert things_given_up(text) == given_up


@pytest.mark.parametrize(
    "thing, value, named",
    [
        ("Miata", "2016 Mazda Miata", True),
        ("Mazda", "2016 Mazda Miata", True),
        ("思域", "本田思域", True),
        ("小周", "小周", True),
        ("old car", "2016 Mazda Miata", False),
        ("Netflix subscription", "Netflix", True),
        ("the", "the Overlook", False),
        ("周", "小周", False),
        ("Leeds", "Headingley, Leeds", True),
    ],
)
def test_the_thing_named_is_the_held_value(thing, value, named):
    assert names_value(thing, value) is named


@pytest.mark.parametrize(
    "text, wrong",
    [
        ("Sorry, I got that wrong: the dentist is on the 9th, not the 19th.", ("19",)),
        ("I mixed them up. Jonah plays the cello, not Eli.", ("Eli",)),
        ("更正一下，我妈生日是十月三号，不是十月八号。", ("十月八号",)),
        ("之前说三楼是我记错了，其实住五楼。", ("三楼",)),
        ("It's the red one, not the blue one.", ()),  # no word of a correction
        ("I'm vegetarian, not vegan.", ()),
    ],
)
def test_what_a_correction_says_was_wrong(text, wrong):
    assert tuple(value for value, _ in values_said_wrong(text)) == wrong
