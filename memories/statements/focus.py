"""Whether a memory's text says something about what a question asks: its focus words, by
stem or through a small bilingual table of words with the same meaning (recall answers
nothing when no memory does, memories/graph/answering.py)."""

import re

from memories.sentences import HAN as HAN_RE
from memories.statements.english import PHONE
from memories.statements.keys import singular
from memories.statements.model import QuestionReading
from memories.statements.words import (
    ATTRIBUTE_WORDS,
    COLOURS,
    CONCEPTS,
    NUMBER_WORDS,
    ZH_COLOURS,
    alternation,
    is_relation,
)

IRREGULAR_STEMS = {
    "children": "child", "kids": "kid", "people": "person", "men": "man", "women": "woman",
    "wives": "wife", "knives": "knife", "mice": "mouse", "feet": "foot", "teeth": "tooth",
    "bought": "buy", "drove": "driv", "driven": "driv", "spoke": "speak", "spoken": "speak",
    "paid": "pay", "earned": "earn", "read": "read", "made": "mak", "born": "born",
}  # fmt: skip
LATIN_WORD = re.compile(r"[a-z0-9]+(?:['-][a-z0-9]+)*")


def stem(word: str) -> str:
    """A rough English stem, the same for a word's common forms: "drive", "drives",
    "driving" → "driv"; "children" → "child"."""
    word = word.lower()
    if word.endswith("'s"):
        word = word[:-2]
    if word in IRREGULAR_STEMS:
        return IRREGULAR_STEMS[word]
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes", "zes")):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if len(word) > 5 and word.endswith("ing"):
        word = word[:-3]
    elif len(word) > 4 and word.endswith("ed"):
        word = word[:-2]
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word


def _group_terms(group: frozenset[str]) -> tuple[frozenset[str], tuple[str, ...], tuple[str, ...]]:
    """A concept's words as (stems of single Latin words, Latin phrases, substrings)."""
    stems, phrases, substrings = set(), [], []
    for term in group:
        term = term.lower()
        if HAN_RE.search(term) or not re.fullmatch(r"[a-z0-9' -]+", term):
            substrings.append(term)
        elif " " in term:
            phrases.append(term)
        else:
            stems.add(stem(term))
    return frozenset(stems), tuple(phrases), tuple(substrings)


GROUPS = tuple(_group_terms(group) for group in CONCEPTS)
GROUPS_OF: dict[str, list[int]] = {}
for _index, _group in enumerate(CONCEPTS):
    for _term in _group:
        _key = _term.lower() if HAN_RE.search(_term) or " " in _term else stem(_term)
        GROUPS_OF.setdefault(_key, []).append(_index)

QUOTE = re.compile(r"'[^'\s][^']*'|\"[^\"]+\"|“[^”]+”|‘[^’]+’|《[^》]+》")
PROPER_NAME = re.compile(r"(?<![.!?:→]\s)(?<!^)\b(?!(?:I|User|Assistant|The|My)\b)[A-Z][a-z]+")
COLOUR = re.compile(rf"\b(?:{COLOURS})\b|{ZH_COLOURS}")
PHONE_NUMBER = re.compile(PHONE)
PHONE_GROUP = GROUPS_OF[stem("phone")][0]
FULL_NAME = re.compile(r"\b[A-Z][a-z]+\s+[A-Z][a-z]+\b")
NUMBER_WORD = re.compile(
    rf"\d|\b(?:{alternation(w for w in NUMBER_WORDS if w not in ('a', 'an', 'both'))}|dozen|hundred"
    r"|thousand)\b|[一二两三四五六七八九十百千万几]+(?:个|只|位|岁|年|条|辆|本|次|口|名|月|天|周|块|元|万|千|百|套)"
    r"|[零一二两三四五六七八九十]岁",
    re.I,
)


class _Text:
    """A memory's text, read once for many focus words."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lower = text.lower()
        self.stems = {stem(w) for w in LATIN_WORD.findall(self.lower)}

    def has_term(self, term: str) -> bool:
        term = term.lower()
        if HAN_RE.search(term) or not re.fullmatch(r"[a-z0-9' -]+", term):
            return term in self.lower
        if " " in term:
            words = r"\s+".join(re.escape(w) for w in term.split())
            return re.search(rf"\b{words}(?:s|es)?\b", self.lower) is not None
        return stem(term) in self.stems

    def has_group(self, index: int) -> bool:
        stems, phrases, substrings = GROUPS[index]
        return (
            not stems.isdisjoint(self.stems)
            or any(self.has_term(p) for p in phrases)
            or any(s in self.lower for s in substrings)
        )


def _groups(word: str) -> list[int]:
    word = word.lower()
    key = word if HAN_RE.search(word) or " " in word else stem(word)
    groups = list(GROUPS_OF.get(key, ()))
    if not groups and " " not in word and not HAN_RE.search(word):
        groups = list(GROUPS_OF.get(stem(singular(word)), ()))
    return groups


def _says(word: str, text: _Text) -> bool:
    if text.has_term(word):
        return True
    groups = _groups(word)
    if len(groups) > 1 and is_relation(word):
        # A relative asked by kind is said only in its own words: "kids" is no son.
        groups = [min(groups, key=lambda index: len(CONCEPTS[index]))]
    if any(text.has_group(g) for g in groups):
        return True
    lower = word.lower()
    if lower in ("name", "名字", "brand", "make", "model", "牌子", "品牌") and PROPER_NAME.search(
        text.text
    ):
        return True  # a name said is the name (or the brand) asked for
    if lower in ("color", "colour", "颜色") and COLOUR.search(text.lower):
        return True
    if PHONE_GROUP in groups and PHONE_NUMBER.search(text.text):
        return True  # a number said is the number asked for
    if lower in ("surname", "姓") and FULL_NAME.search(text.text):
        return True  # "Kelvin Chan"
    if lower in ("title", "book", "书名", "书") and QUOTE.search(text.text):
        return True
    if " " in lower and not groups:  # "social security number": every word said
        return all(_says(part, text) for part in lower.split())
    return False


def attributes_of_another(question: QuestionReading) -> tuple[str, ...]:
    """The attributes a question asks of someone other than the user, and nothing else ("What
    does Tomas do for a living?"): only a memory speaking to one tells it, not any memory about
    them ("Tomas lives in Porto"). Not a name, said in too many ways to be read by its words
    ("男朋友张磊"), nor the user's own values, said in every way."""
    if question.subject.is_user or question.focus or question.count or question.choices:
        return ()
    return tuple(key for key in question.attributes if key != "name")


def _says_one_of(attributes: tuple[str, ...], said: _Text) -> bool:
    return any(
        _says(key.split()[0], said)  # "lives in": "lives"
        or any(said.has_term(word) for word in ATTRIBUTE_WORDS.get(key, ()))
        for key in attributes
    )


def speaks_to_attribute(question: QuestionReading, text: str) -> bool:
    """Whether a memory's text speaks to one of the attributes the question asks, the user's
    own included ("怎么去上班": a commute), in the attribute's words or those of its meaning;
    True when it asks none. Stricter than `answers_focus`, which lets any memory tell the
    user's own values: for choosing between two memories, not for answering nothing."""
    return not question.attributes or _says_one_of(question.attributes, _Text(text))


def answers_focus(question: QuestionReading, text: str) -> bool:
    """Whether a memory's text says something about every focus word of the question (of an
    either-or question, about one of its choices), and, when the question counts, states a
    number (and, when no focus word names what is counted, speaks to the asked attribute: an
    age, a salary).

    Recall uses this to decide when it answers nothing: no memory saying anything about what
    is asked means the thing was never said. So it is strict about the asked thing — a
    memory about a guitar does not answer the guitar's brand, one about kids does not say how
    many — yet generous about wording: stems and plurals ("children", "child"), and a compact
    bilingual table of words with the same meaning (car, vehicle, drives, Toyota, 车, 丰田;
    salary, pay, earns, 工资, 收入; children, kids, 孩子), a proper name for "name", a quoted
    title for "title" or "book"."""
    if keys := attributes_of_another(question):
        return _says_one_of(keys, _Text(text))
    if not question.focus and not question.count and not question.choices:
        return True
    said = _Text(text)
    if question.count and NUMBER_WORD.search(text) is None:
        return False
    if question.choices:
        return any(_says(choice, said) for choice in question.choices)
    if question.focus:
        return all(_says(word, said) for word in question.focus)
    # A count no focus word names ("How old is Pepper?", "用户一个月赚多少钱？"): the number must
    # be of the asked attribute; "新号码是 186…" does not say an age.
    return any(_says(key, said) for key in question.attributes) if question.attributes else True
