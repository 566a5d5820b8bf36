"""What a forget request names, and which sentences are about it.

A topic as said ("my home address", "everything about that relationship", "what I told you
about my ex", "我的病史") is read into:
- its words, less pronouns, fillers and generic nouns ("information", "stuff", 信息, 事情);
- the names in it ("Alex", "Japan"): a sentence naming one is about the topic;
- concepts: kinds of personal information that a few words name and many words show ("medical
  information" → diabetes, blood pressure, 糖尿病 …; "home address" → an address, a street …),
  in English and Chinese (memories/forgetting/concepts.py);
- whether the user owns it ("my address": not a friend's address);
- whether it points back at what was just said ("that", "it", "that password", 刚才说的);
- or nothing at all ("everything", "what I said"): a vague request, which forgets nothing.

`Topic.about(sentence)` tells whether a sentence is about the topic; memories/forgetting/plan.py
decides what that erases.
"""

import re
from dataclasses import dataclass, field, replace
from functools import cached_property

from memories.forgetting.concepts import CONCEPTS, Concept
from memories.sentences import HAN
from memories.statements.words import HAN as HAN_CHARS
from memories.statements.words import ZH_SURNAMES

# --- Reading a topic ---------------------------------------------------------------------------

# What a topic's words may lead with before naming it: "everything about", "what I told you
# about", "the part about", "the fact that", "关于" …
LEAD = re.compile(
    r"^(?:(?:everything|anything|all|stuff|things?)(?:\s+(?:you\s+know|i(?:'ve)?\s+"
    r"(?:told\s+you|said|mentioned|shared)))?\s+(?:about|on|regarding|concerning|related\s+to)"
    r"|(?:all|any)(?:\s+of)?(?:\s+the)?\s+(?:stuff|things|info|information|details|data|notes"
    r"|memories|records)\s+(?:about|on|regarding)|the\s+(?:stuff|things?|part|bit|info|information"
    r"|details|data|notes?|memories|records?|conversation|story)\s+(?:about|on|regarding|where)"
    r"|what\s+i(?:'ve)?\s+(?:just\s+)?(?:told\s+you|said|mentioned|shared|wrote)"
    r"(?:\s+(?:about|regarding|on))?|the\s+fact\s+that|about|regarding|any\s+mention\s+of"
    r"|mentions?\s+of|all\s+of|all|everything\s+related\s+to|that(?=\s+(?:i|my|we|our|me)\b))\s+",
    re.I,
)
ZH_LEAD = re.compile(r"^(?:关于|有关|所有|全部|一切|所有关于|所有有关|跟|和|我说的|我说过的)+")
ZH_TAIL = re.compile(
    r"(?:的事情?|的信息|的资料|的记录|的内容|的一切|的东西|这件事|那件事|那个事情?|那事|这事|那段|这段"
    r"|那部分|的部分|方面的内容|方面|这些|那些|的话|相关的|有关的)+$"
)
# "That", "it", "what I just said", "that password", "刚才说的", "那段感情": what was just said.
ANAPHOR = re.compile(
    r"^(?:that|it|this|those|these|them|what\s+i\s+just\s+(?:said|told\s+you|mentioned|wrote)"
    r"|the\s+last\s+thing\s+i\s+(?:said|told\s+you)|my\s+last\s+message|that\s+last\s+(?:part|bit"
    r"|message)|everything\s+i\s+just\s+said|what\s+i\s+just\s+shared)$",
    re.I,
)
DEMONSTRATIVE = re.compile(r"^(?:that|this|those|these)\s+(?P<head>.+)$", re.I)
# Someone just named: "everything about him", "关于她的一切".
PRONOUN = re.compile(r"^(?:him|her)$", re.I)
ZH_PRONOUNS = ("他", "她")
ZH_ANAPHOR = re.compile(
    r"^(?:这个|那个|这些|那些|这件事|那件事|它|这|那|刚才说的|刚刚说的|刚才那句话?|刚才的|我刚才说的"
    r"|我刚说的|刚说的|上面说的|上面那句|之前说的|前面说的|后面说的|后来说的|这句话|那句话)$"
)
ZH_DEMONSTRATIVE = re.compile(r"^(?:这|那)(?:个|段|些|件|条)?(?P<head>.+)$")

STOPWORDS_TEXT = """
    i me my mine myself you your yours that this these those the a an about what said say told
    tell is am are was were be been being it its of to in on at for and or really very so just
    do does did don't not no like likes love loves enjoy enjoys hate hates prefer prefers thing
    things stuff part bit fact i'm i've all everything anything please now know known knows
    remember info information details detail data record records notes note memory memories
    conversation story mention mentions any some whole entire with from where when how which who
    whom why whatever we our us us' ever again any more anymore also too just own old new
    current previous former last latest session sessions appointment appointments visit visits
    plan plans issue issues problem problems situation matter case topic subject him her them
    his hers over into whole even concerning regarding involving
"""
STOPWORDS = frozenset(STOPWORDS_TEXT.split())
ZH_STOP = re.compile(
    r"我自己|我的|我们的|我|自己|那个|这个|这边|那边|你|很|非常|特别|真的|不喜欢|喜欢|爱|讨厌|偏好"
    r"|的|了|吧|都|也|就|过|说"
)
ZH_GENERIC_TEXT = """
    任何 任何记录 任何东西 记录 这块 那块 这条 那条
    信息 资料 记录 内容 东西 事 事情 一切 所有 情况 相关 问题 方面 部分
"""
ZH_GENERIC = frozenset(ZH_GENERIC_TEXT.split())
ZH_GENERIC_TAIL = re.compile(r"(?:信息|资料|记录|内容|情况|相关|的事情?)+$")
WORD = re.compile(r"[\w'@.+-]+")
NAME = re.compile(r"(?<![\w'])(?!I\b)[A-Z][\w'-]*")


def stem(word: str) -> str:
    word = word.lower().removesuffix("'s").removesuffix("’s")
    for suffix, replacement in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + replacement
    return word


@dataclass(frozen=True)
class Topic:
    said: str
    # Stems (English) or segments (Chinese) that are not part of a concept's name: what makes
    # the topic specific ("personal" in "my personal cell number", "Iceland" in "my Iceland
    # trip"). A topic with none is the concepts it names ("my medical information").
    words: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    concepts: tuple[Concept, ...] = ()
    owned: bool = False  # "my …": the user's, not someone else's
    anaphoric: bool = False  # points back at what was just said
    chinese: bool = False
    # Someone else's ("my brother's surgery", "我哥哥的手术"): a sentence must name them too.
    owner: str = ""
    person: bool = False  # "him", "her", 他: the one person just named

    @property
    def vague(self) -> bool:
        """Names nothing: a request that forgets nothing."""
        return not (self.words or self.names or self.concepts or self.anaphoric)

    @cached_property
    def slots(self) -> frozenset[str]:
        return frozenset(slot for c in self.concepts for slot in c.slots)

    @property
    def broad(self) -> bool:
        """Names kinds of information and nothing more specific ("my address", not "my work
        address"): every fact in their slots is about it."""
        return bool(self.concepts) and not (self.words or self.names or self.owner)

    def plain(self) -> "Topic":
        """The topic without pointing back ("that password" → "password")."""
        return replace(self, anaphoric=False)

    def about(self, sentence: str) -> bool:
        """Whether `sentence` is about the topic (see `spans`)."""
        return bool(self.spans(sentence))

    def spans(self, sentence: str) -> list[tuple[int, int]]:
        """Where `sentence` is about the topic: it names one of its names, holds all of its
        specific words, or (for a topic without any) shows one of its concepts — the user's own
        where the topic is theirs ("my address", not "Tom's work address"), the owner's where
        it is someone else's ("my brother's surgery")."""
        found = [m.span() for name in self.names for m in _word_matches(sentence, name)]
        if self.words:
            per_word = [_word_matches(sentence, word, stemmed=True) for word in self.words]
            if all(per_word):
                found += [m.span() for matches in per_word for m in matches]
        elif not self.names:
            found += self._concept_spans(sentence)
        return self._whose(sentence, found)

    def partly(self, sentence: str) -> bool:
        """Whether `sentence` shows a concept of a topic that is more specific than it ("my
        Iceland trip": a trip; "my personal cell number": a phone number): about the topic only
        if it means the same (memories/forgetting/plan.py asks the embeddings)."""
        return bool(self.partly_spans(sentence))

    def partly_spans(self, sentence: str) -> list[tuple[int, int]]:
        """Where `sentence` is partly about the topic (see `partly`)."""
        if not (self.words or self.names):
            return []
        return self._whose(sentence, self._concept_spans(sentence))

    def _concept_spans(self, sentence: str) -> list[tuple[int, int]]:
        return [m.span() for c in self.concepts for m in c.shows.finditer(sentence)]

    def _whose(self, sentence: str, found: list[tuple[int, int]]) -> list[tuple[int, int]]:
        if self.owned:
            found = [span for span in found if not owned_by_another(sentence, span[0])]
        if found and self.owner and not _word_matches(sentence, self.owner, stemmed=True):
            return []
        return found

    def owners_named_in(self, text: str) -> bool:
        """Whether `text` can be about the topic for whose it is: it names the topic's owner,
        or (the user's own topic) does not lead with someone else."""
        if self.owner:
            return bool(_word_matches(text, self.owner, stemmed=True))
        return not (self.owned and owned_by_another(text, len(CLAUSE_BREAK.split(text)[0])))


@dataclass(frozen=True)
class _Match:
    start: int
    end: int

    def span(self) -> tuple[int, int]:
        return self.start, self.end


# People called by more than one word: "my grandpa's death" is about "my grandfather".
KIN = [
    "grandpa grandfather granddad grandad gramps",
    "grandma grandmother granny nana gran",
    "mom mother mum mommy mama ma",
    "dad father daddy papa pa",
    "brother bro",
    "sister sis",
    "husband hubby spouse",
    "wife spouse",
    "kid child son daughter",
    "爸 爸爸 父亲 老爸",
    "妈 妈妈 母亲 老妈",
    "哥 哥哥",
    "姐 姐姐",
    "弟 弟弟",
    "妹 妹妹",
    "老公 丈夫",
    "老婆 妻子 太太",
    "爷爷 祖父",
    "奶奶 祖母",
    "外公 姥爷",
    "外婆 姥姥",
]
ALIASES = {word: tuple(group.split()) for group in KIN for word in group.split()}


def _word_matches(sentence: str, word: str, *, stemmed: bool = False) -> list[_Match]:
    if HAN.search(word):
        return [
            _Match(m.start(), m.end())
            for alias in ALIASES.get(word, (word,))
            for m in re.finditer(re.escape(alias), sentence)
        ]
    wanted = {stem(alias) if stemmed else alias for alias in ALIASES.get(word.lower(), (word,))}
    wanted = {w.lower() for w in wanted}
    return [
        _Match(m.start(), m.end())
        for m in WORD.finditer(sentence)
        if (stem(m.group().rstrip(".")) if stemmed else m.group().lower().rstrip(".")) in wanted
    ]


def concepts_named(text: str) -> tuple[Concept, ...]:
    """The concepts `text` names: the most specific where one name holds another ("job hunt":
    the job search, not every job), the head where one qualifies another ("work number": a
    phone number, not the job)."""
    spans = {c: [m.span() for m in c.names.finditer(text)] for c in CONCEPTS}
    named = {c: found for c, found in spans.items() if found}

    def within(inner: tuple[int, int], outer: tuple[int, int]) -> bool:
        return outer[0] <= inner[0] and inner[1] <= outer[1] and inner != outer

    def qualifies(inner: tuple[int, int], head: tuple[int, int]) -> bool:
        return 0 <= head[0] - inner[1] <= 1 and not HAN.search(text[slice(*inner)])

    return tuple(
        c
        for c, found in named.items()
        if not any(
            all(any(within(s, o) or qualifies(s, o) for o in other) for s in found)
            for d, other in named.items()
            if d is not c
        )
    )


def _head(
    text: str,
    owned: bool,
    demonstrative: re.Pattern[str] | None,
    possessed: re.Pattern[str],
    third_person: re.Pattern[str],
    mine: re.Pattern[str],
) -> tuple[str, bool, bool, str]:
    """The topic's head once a pointer back ("that relationship") and another owner ("my
    friend's address") are read off it: (head, anaphoric, owned, owner)."""
    anaphoric = False
    if demonstrative is not None and (pointed := demonstrative.match(text)) is not None:
        anaphoric, text = True, pointed["head"]
    owner = ""
    people = list(third_person.finditer(text))
    if (possessed_by := possessed.match(text)) is not None:
        owner, owned, text = possessed_by["owner"], False, possessed_by["head"]
    elif len(people) == 1 == len(mine.findall(text)):
        # One person, the only thing the topic calls the user's ("my ex", "my brother Mark",
        # "where my brother lives"): the topic is theirs, as "my brother's …" is; "my ex" is not
        # the boyfriend of now. Not "my trip with my brother" nor "my mom said my address".
        owner, owned = people[0].groupdict().get("name") or people[0]["noun"], False
    return text, anaphoric, owned, owner


def topic_read(said: str) -> Topic:
    """The topic a request names (see the module's docstring)."""
    text = " ".join(said.replace("’", "'").split()).strip(" .,!?;:。，！？；：")
    if HAN.search(text):
        return _chinese_topic(text)
    owned = re.search(r"\b(?:my|mine|i|me|myself|i'm|i've)\b", text, re.I) is not None
    while (lead := LEAD.match(text)) is not None:
        text = text[lead.end() :]
    if ANAPHOR.match(text) or PRONOUN.match(text):
        return Topic(said, anaphoric=True, owned=owned, person=bool(PRONOUN.match(text)))
    text, anaphoric, owned, owner = _head(text, owned, DEMONSTRATIVE, POSSESSED, THIRD_PERSON, MINE)
    concepts = concepts_named(text)
    named = [m.span() for c in concepts for m in c.names.finditer(text)]
    words = tuple(
        dict.fromkeys(
            stem(word.group())
            for word in WORD.finditer(text.lower())
            if word.group().strip(".") not in STOPWORDS
            and len(word.group().strip(".")) > 1
            and not any(start < word.end() and word.start() < end for start, end in named)
        )
    )
    names = tuple(dict.fromkeys(m.group() for m in NAME.finditer(text)))
    return Topic(said, words, names, concepts, owned, anaphoric, owner=owner)


def _chinese_topic(text: str) -> Topic:
    owned = "我" in text
    text = ZH_TAIL.sub("", ZH_LEAD.sub("", text))
    if not text:
        return Topic(said=text, chinese=True)  # 一切, 所有: names nothing
    if text in ZH_PRONOUNS:
        return Topic(text, anaphoric=True, owned=owned, chinese=True, person=True)
    if ZH_ANAPHOR.match(text) or re.match(r"^(?:刚才|刚刚|我刚才|我刚)", text):
        return Topic(text, anaphoric=True, owned=owned, chinese=True)
    demonstrative = ZH_DEMONSTRATIVE if "我" not in text else None
    text, anaphoric, owned, owner = _head(
        text, owned, demonstrative, ZH_POSSESSED, ZH_THIRD_PERSON, ZH_MINE
    )
    concepts = concepts_named(text)
    named = [m.span() for c in concepts for m in c.names.finditer(text)]
    segments, start = [], 0
    for stop in [*ZH_STOP.finditer(text), None]:
        end = stop.start() if stop else len(text)
        if end > start and not any(s < end and start < e for s, e in named):
            segments.append(text[start:end])
        start = stop.end() if stop else end
    words = tuple(
        dict.fromkeys(
            w for s in segments if s not in ZH_GENERIC and (w := ZH_GENERIC_TAIL.sub("", s))
        )
    )
    # A topic that is a person named ("我前女友翟珂娴"): sentences naming them are about it.
    named_alone = owner and text.endswith(owner) and not re.fullmatch(ZH_PERSON_NOUNS, owner)
    names = (owner,) if named_alone else ()
    return Topic(text, words, names, concepts, owned, anaphoric, chinese=True, owner=owner)


# --- Whose it is -------------------------------------------------------------------------------

PERSON_NOUNS = (
    r"friends?|brothers?|sisters?|mom|mum|mother|dad|father|wife|husband|spouse|sons?|daughters?"
    r"|colleagues?|co-?workers?|boss|manager|neighbou?rs?|cousins?|uncle|aunt|partner|roommate"
    r"|flatmate|teammates?|girlfriend|boyfriend|ex|kids?|child|children|parents?|grandma|grandpa"
    r"|grandmother|grandfather|nephew|niece|in-laws?|classmates?|client|landlord|doctor|teacher"
)
# A topic owned by someone else: "my brother's surgery", "Tom's address", "我哥哥的手术".
POSSESSED = re.compile(
    rf"^(?:my\s+|the\s+)?(?P<owner>(?:{PERSON_NOUNS})|(?-i:[A-Z][a-z]+))'s\s+(?P<head>.+)$", re.I
)
ZH_PERSON_NOUNS = (
    r"朋友|同事|哥哥|姐姐|弟弟|妹妹|妈妈|爸爸|母亲|父亲|老婆|老公|妻子|丈夫|儿子|女儿|邻居|老板|室友|同学"
    r"|男朋友|女朋友|前男友|前女友|孩子|客户|爷爷|奶奶|外公|外婆|闺蜜|哥们|老妈|老爸|领导|上司"
    r"|妈|爸|哥|姐|弟|妹"
)
ZH_POSSESSED = re.compile(rf"^(?:我的?)?(?P<owner>{ZH_PERSON_NOUNS})的(?P<head>.+)$")
# A person the user names as theirs anywhere in a topic: "where my brother lives", "my brother
# Mark", "我哥哥住在哪".
THIRD_PERSON = re.compile(
    rf"\bmy\s+(?P<noun>{PERSON_NOUNS})\b(?!')(?:\s+(?-i:(?P<name>[A-Z][a-z]+)))?", re.I
)
# ... and the name said after them ("我前女友翟珂娴", "我哥哥张伟住在哪"): a surname and a given
# name, or 小/老 and one character; not what follows ("我女儿生病", "我老板很凶" name no one).
ZH_THIRD_PERSON = re.compile(
    rf"我的?(?P<noun>{ZH_PERSON_NOUNS})(?P<name>(?:[{ZH_SURNAMES}][{HAN_CHARS}]{{1,2}}?"
    rf"|[小老][{HAN_CHARS}])(?:(?![{HAN_CHARS}])|(?=[的住在是做去和])))?"
)
# What a topic calls the user's: "my trip", "my brother"; 我.
MINE = re.compile(r"\bmy\s+\w+", re.I)
ZH_MINE = re.compile("我")
# A third person owning what follows: "Tom's", "my friend's", "his", "her", "my brother Mike".
# Places that own what follows as a person would: "my office in Pioneer Square" is not where
# the user lives.
PLACE_NOUNS = r"office|workplace|company|school|gym|studio|shop|store|clinic|employer"
OTHER_OWNER = re.compile(
    rf"\b(?:(?:{PERSON_NOUNS}|{PLACE_NOUNS})(?:'s)?|his|her|hers|him|he|she)\b"
    r"|(?-i:\b(?!(?:I|The|A|An|My|Also|And|But|So|Then|Yeah|Yes|No|Oh|Well|Maybe|Just|It|This"
    r"|That|We|They|He|She|You|Our|Your|His|Her|Their|There|Here|What|When|Where|Why|How|Who"
    r"|If|On|In|At|For|To|From|With|Honestly|Actually|Please|Thanks|Sometimes|Finally|Last"
    r"|Next|User|Assistant)\b)[A-Z][a-z]+(?:'s\b|\s+(?:is|was|has|had|[a-z]+s|[a-z]+ed)\b))",
    re.I,
)
# The user owning what follows: "I", "my", "the user's", "User:".
# "your" as the assistant says it ("your address").
USER_OWNER = re.compile(r"\b(?:i|my|mine|i'm|i've|the user'?s?|user:|your|you)(?![\w'])", re.I)
ZH_OTHER_OWNER = re.compile(rf"{ZH_PERSON_NOUNS}|他|她|医生|老师")
ZH_USER_OWNER = re.compile(r"我|用户")
# Where whose it is stops carrying over: a sentence's end, an episode's quote of the assistant.
# (Within a sentence it carries over clauses: "老婆在银行上班，月薪一万五" is the wife's pay.)
CLAUSE_BREAK = re.compile(r"[.!?。！？]|→")


# Who speaks is not whose it is: "Physio says the surgery healed", "医生让我复查".
REPORTED = re.compile(
    r"\b(?:says?|said|told\s+me|tells\s+me|thinks?|thought|suggested|recommended|explained"
    r"|confirmed|mentioned|warned|asked\s+me)\b|说|告诉我|觉得|认为|建议|让我|叫我",
    re.I,
)


def owned_by_another(sentence: str, position: int) -> bool:
    """Whether what stands at `position` belongs to someone other than the user: the owner
    named last before it in its sentence ("my friend Tom's work address", "我朋友的地址",
    "老婆在银行上班，月薪一万五") is a third person."""
    clause = REPORTED.split(CLAUSE_BREAK.split(sentence[:position])[-1])[-1]
    # The word at `position` too: "Dana lives at …" names Dana by her verb.
    word = re.match(r"\S*", sentence[position:]).group()
    owners = [(m.end(), True) for m in USER_OWNER.finditer(clause)]
    owners += [
        (min(m.end(), len(clause)), False)
        for m in OTHER_OWNER.finditer(clause + word)
        if m.start() < len(clause)
    ]
    owners += [(m.end(), True) for m in ZH_USER_OWNER.finditer(clause)]
    owners += [(m.end(), False) for m in ZH_OTHER_OWNER.finditer(clause)]
    if not owners:
        return False
    return not max(owners)[1]


# --- Values ------------------------------------------------------------------------------------

NUMBER = re.compile(r"(?<![\w-])\+?\d[\d\s().,/-]*\d(?![\w-])")
EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+")
PROPER = re.compile(r"(?-i:(?<![\w'])(?:[A-Z][\w'-]+)(?:\s+(?:[A-Z][\w'-]+|of|de|van|von))*)")
# Words that start a sentence or a label, never a value.
NOT_NAMES_TEXT = """
    I User Assistant The A An My Our Your It He She They We This That These Those What When
    Where Why How Who Please Thanks Thank Yes No Ok Okay Oh Hi Hello Hey Sure Also And But So
    Actually Well Just Now Then Monday Tuesday Wednesday Thursday Friday Saturday Sunday January
    February March April May June July August September October November December Mr Mrs Ms Dr
"""
NOT_NAMES = frozenset(NOT_NAMES_TEXT.split())


@dataclass(frozen=True)
class Values:
    """What a forgotten text said that identifies it elsewhere: its numbers, e-mail addresses
    and names ("742 Evergreen Terrace", "Alex")."""

    items: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def of(cls, text: str) -> "Values":
        found = {
            m.group() for m in NUMBER.finditer(text) if sum(c.isdigit() for c in m.group()) >= 3
        }
        found |= {m.group() for m in EMAIL.finditer(text)}
        for match in PROPER.finditer(text):
            words = [w for w in match.group().split() if w not in NOT_NAMES]
            if words and (len(words) > 1 or _introduced(text, match.start())):
                found.add(" ".join(words))
        return cls(frozenset(value.strip(" .,") for value in found if len(value.strip(" .,")) > 1))

    def __or__(self, other: "Values") -> "Values":
        return Values(self.items | other.items)

    def found_in(self, sentence: str) -> bool:
        return bool(self.spans(sentence))

    def spans(self, sentence: str) -> list[tuple[int, int]]:
        found = []
        for value in self.items:
            pattern = rf"(?<![\w]){re.escape(value)}(?![\w])"
            found += [m.span() for m in re.finditer(pattern, sentence, re.I)]
        return found


INTRODUCING = re.compile(
    rf"\b(?:with|and|named|called|met|dating|dated|married|marry|divorced|ex|about|to|from|by"
    rf"|for|like|love|miss|visit(?:ed|ing)?|{PERSON_NOUNS})\s*$",
    re.I,
)


def _introduced(text: str, position: int) -> bool:
    """A single capitalised word is a name where it is introduced as one: "with Alex", "my ex
    Alex", "Alex and I", "Alex's" — not a place in an address, nor a sentence's first word."""
    if INTRODUCING.search(text[:position]):
        return True
    return re.match(r"[\w'-]+(?:'s\b|\s+and\s+(?:i|me)\b)", text[position:], re.I) is not None
