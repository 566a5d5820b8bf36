"""A user's words retold in the third person: "I speak Spanish" → "The user speaks Spanish",
"my wife" → "the user's wife", "我哥哥马克" → "用户的哥哥马克"."""

import re

from memories.statements.words import ZH_PERSON_ROLES, ZH_SPECIES, alternation, word_set

I = re.I  # noqa: E741

AUXILIARIES = word_set(
    """can could will would should must might may did didn't can't couldn't won't wouldn't
    shouldn't had hadn't was wasn't used ought quit put set let cut hit hurt cost shut read
    spread bet"""
)
IRREGULAR_PAST = word_set(
    """went got bought had made took came saw found gave told felt left kept thought brought
    sent began ran wrote met paid sold spent lost won built caught taught fought sat stood
    understood heard held knew grew threw flew drew drove rode spoke broke chose woke wore
    swam sang drank ate forgot became fell led fed slept meant dealt lent bent burnt learnt
    dreamt lit gotten been done gone seen taken eaten given written spoken broken chosen
    driven ridden known grown shown flown drawn worn torn begun sung swum drunk become said
    paid laid finished"""
)
THIRD = {"have": "has", "do": "does", "go": "goes", "am": "is", "are": "is", "be": "is"}
ADVERBS = (
    r"(?:(?:just|really|also|still|always|usually|often|never|now|currently|actually|already"
    r"|no longer|no more|not yet"
    r"|finally|recently|mostly|sometimes|even|only|absolutely|totally|definitely|officially"
    r"|kind of|sort of|honestly|basically|probably|seriously|truly|mainly|generally|rarely"
    r"|occasionally|typically|normally|personally|happily|sadly|both|all)\s+)*"
)


def third_person(verb: str) -> str:
    """A verb after "the user": "speak" → "speaks", "study" → "studies"; a past stays."""
    lower = verb.lower()
    if lower in THIRD:
        return THIRD[lower]
    if lower in AUXILIARIES or lower in IRREGULAR_PAST or lower.endswith(("ed", "n't")):
        return verb
    if not lower.isalpha() or not (verb.islower() or verb.istitle()):
        return verb
    if lower.endswith("s") and not lower.endswith(("ss", "us", "is", "sh")):
        return verb  # said in the third person already ("Likes jazz")
    if lower.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if lower.endswith("y") and len(lower) > 1 and lower[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


STEPS: tuple[tuple[re.Pattern[str], object], ...] = tuple(
    (re.compile(p, I), r)
    for p, r in (
        (r"\b(?:my|our)\s+(\w+(?:\s+\w+)?)\s+and\s+i\b", r"the user and their \1"),
        (r"\bme\s+and\s+my\s+(\w+)", r"the user and their \1"),
        (r"\bi\s+am\b|\bi'm\b", "the user is"),
        (r"\bi've\b", "the user has"),
        (r"\bi'd\b(?=\s+(?:been|had|gone|\w+ed)\b)", "the user had"),
        (r"\bi'd\b", "the user would"),
        (r"\bi'll\b", "the user will"),
        (r"\bi\s+don't\b", "the user doesn't"),
        (r"\bi\s+do\s+not\b", "the user does not"),
        (r"\bi\s+haven't\b", "the user hasn't"),
        (r"\bi\s+have\s+not\b", "the user has not"),
        (
            rf"\bi\s+(?P<adv>{ADVERBS})(?P<verb>[a-z]+)\b",
            lambda m: f"the user {m['adv']}{third_person(m['verb'])}",
        ),
        (r"\bi\b", "the user"),
        (r"^user\b", "the user"),
        (r"\bmyself\b", "themselves"),
        (r"\bmine\b(?=\s*(?:[,.;!?]|$|\s+(?:too|now|as\s+well|either|though)\b))", "the user's"),
        (r"\bmy\b", "the user's"),
        (r"\bme\b", "the user"),
        (r"\bwe're\b|\bwe\s+are\b", "the user and their family are"),
        (r"\bwe've\b", "the user and their family have"),
        (r"\bwe\b", "the user and their family"),
        (r"\bours\b", "the user's"),
        (r"\bour\b", "the user's"),
        (r"\bus\b", "them"),
    )
)

ZH_ROLE_AFTER = re.compile(
    r"我(?:们家|家)?的?(?=(?:另一个|另外一个|最好的|好)?(?:"
    + alternation([*ZH_PERSON_ROLES, *ZH_SPECIES])
    + "))"
)


def retell(text: str, *, chinese: bool = False) -> str:
    """`text` in the third person about the user, its first letter upper case."""
    if chinese:
        text = ZH_ROLE_AFTER.sub("用户的", text)
        for said, told in (
            ("我们家", "用户家"),
            ("咱们", "用户一家"),
            ("我们", "用户一家"),
            ("我的", "用户的"),
        ):
            text = text.replace(said, told)
        text = text.replace("我", "用户")
    else:
        for pattern, replacement in STEPS:
            text = pattern.sub(replacement, text)
    text = text.strip()
    return text[:1].upper() + text[1:]
