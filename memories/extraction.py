"""Memories from conversation: what a user message says that is worth keeping.

An extractor turns one user message (and the assistant turn it answers, for context) into
`Extraction`s:
- `remember`: a fact about the user, written in the third person ("The user lives in
  Hangzhou", "用户住在杭州"). A `slot` (e.g. `profile:home_city`) marks facts of which a person
  holds one value at a time: a new value for the slot supersedes the current one ("I moved to
  Austin", "Correction: I'm a product manager now", "不对，我是产品经理"), so the old fact stays
  in history and leaves recall. One sentence may state several facts, each in its own slot or
  none ("I live in Shanghai with my wife and daughter": the city, and who the user lives with).
- `forget`: the user asks to forget something ("please forget my address", "forget that I love
  spicy food"): the current memories in that slot, or about the topic, are soft-deleted. A
  forget request is never a fact.

A `remember` item names its subject (the user, or a person, pet, place… the message speaks
of) and carries the attribute values it states (memories/statements/): a message about
several subjects gives one fact each ("The user's brother Mark is a lawyer in New York",
no slot), and every value the message states is carried by exactly one fact — a rule's,
or one written for it ("The user is no longer vegetarian", slotted by its attribute when
it holds one value at a time).

Events, plans and small talk are not extracted: the turn itself is kept as an episode in the
user's own words (`episode_content`), unless it carries no content (`content_free`).

`RuleBasedExtractor` is the offline default (English and Chinese patterns);
`LLMExtractor` asks an OpenAI-compatible chat endpoint for the same structure.
"""

import json
import re
import unicodedata
from dataclasses import dataclass, replace
from functools import cache
from typing import Literal, Protocol

from django.conf import settings

from core.openai_compat import OpenAICompatibleClient, OpenAICompatibleError, openai_settings
from memories.forgetting.asks import forget_asks
from memories.redaction import KINDS as REDACTION_KINDS
from memories.sentences import HAN, sentence_spans, sentences
from memories.statements import (
    USER,
    MessageReading,
    Statement,
    Subject,
    attribute_key,
    message_read,
    single_valued,
)
from memories.statements.reading import clean


@dataclass(frozen=True)
class Extraction:
    action: Literal["remember", "forget", "sensitive"]
    content: str = ""
    importance: float = 0.5
    slot: str | None = None
    # `forget`: the words naming what to forget ("my home address"; memories/forgetting/), and
    # the user's words that asked, verbatim (the sentence stored as "[forget request]").
    topic: str = ""
    request: str = ""
    # `sensitive` (the LLM extractor only): a secret the rules missed, verbatim, and its kind
    # (memories/redaction.py); it is redacted like the rules' finds.
    kind: str = ""
    # `remember`: whom the fact is about (the user, or a person, pet, place… the message
    # names: "The user's brother Mark is a lawyer in New York"), and the attribute values it
    # states (memories/statements/). A fact about another subject has no slot.
    subject: Subject = USER
    statements: tuple[Statement, ...] = ()


class ExtractionError(Exception):
    """The extractor could not answer; the message is kept, marked `failed`."""


class Extractor(Protocol):
    def extract(self, text: str, *, replying_to: str = "") -> list[Extraction]: ...


# --- Episodes ---------------------------------------------------------------------------------

# The assistant turn kept as an episode's context: its end (where the question usually is),
# whole sentences up to this many characters.
CONTEXT_CHARS = 160
CONTEXT_SENTENCE_START = re.compile(r"(?<=[.!?。！？])\s*(?=\S)")


def episode_content(words: str, *, replying_to: str = "") -> str:
    """A user turn as an episodic memory: "Assistant: What's your name? → User: It's Marcus
    Chen" ("助手：你叫什么名字？ → 用户：我叫陈明" when the user writes Chinese); just "User: …"
    when the turn answers no assistant message. The user's words are kept verbatim."""
    chinese = HAN.search(words) is not None
    user, assistant, colon = ("用户", "助手", "：") if chinese else ("User", "Assistant", ": ")
    said = f"{user}{colon}{words.strip()}"
    context = _assistant_context(replying_to)
    return f"{assistant}{colon}{context} → {said}" if context else said


# episode_content's form read back: "Assistant: <context> → User: <words>" (or the Chinese
# labels), or "User: <words>".
EPISODE = re.compile(
    r"^(?:(?:Assistant: |助手：)(?P<context>.*?) → )?(?:User: |用户：)(?P<words>.*)$", re.S
)


def _assistant_context(text: str) -> str:
    text = " ".join(text.split())
    if len(text) <= CONTEXT_CHARS:
        return text
    tail = text[-CONTEXT_CHARS:]
    start = CONTEXT_SENTENCE_START.search(tail)
    if start is not None:
        return tail[start.end() :]
    return "…" + tail.split(" ", 1)[-1]  # one long sentence: its end, from a word start


# Turns that carry nothing of their own: acknowledgements, thanks, greetings, laughter and
# interjections (English and Chinese), alone or strung together, with any punctuation and
# emoji. Answers ("yes", "no", "对", "不行") are content: with their context they say something.
FILLERS = (
    # English (apostrophes become spaces before matching)
    r"ok(?:ay|ey|ie)?|k+|alright|all right|right|sure|cool|nice|great|perfect|awesome",
    r"got it|gotcha|i see|understood|noted|thanks|thank (?:you|u)|thx|ty|tysm|cheers",
    r"so much|very much|a lot|much appreciated|appreciate it|np|no problem|no worries",
    r"(?:ha){2,}h?|(?:he){2,}|lo+l|lmf?ao+|rofl|xd|h+m+|u+m+|u+h+|o+h+|a+h+|wow|yay|oops",
    r"hi|hello|hey|yo|bye|bye bye|goodbye|see you|see ya|good (?:night|morning)|please",
    # Chinese
    r"好的?|好吧|好啊|好嘞|行|可以|嗯+|哦+|噢+|喔+|哈+|呵+|嘿+|嘻+|谢谢(?:你|您)?|多谢|谢了",
    r"感谢|辛苦了|收到|知道了|明白了?|懂了|了解|没问题|没事|不客气|拜拜|再见|晚安|早安|你好|您好",
    r"[啊呀啦吧呢哇嘛]",
)
CONTENT_FREE = re.compile(rf"(?:(?:{'|'.join(FILLERS)})\s*)+")


def content_free(text: str) -> bool:
    """True for a turn with nothing worth keeping as an episode ("thanks", "ok", "好的",
    "谢谢", "lol", emoji)."""
    # Punctuation, symbols (emoji), separators, control and format characters (zero-width
    # joiners), marks (emoji variation selectors) all become spaces.
    kept = "".join(" " if unicodedata.category(ch)[0] in "PSZCM" else ch for ch in text)
    words = " ".join(kept.lower().split())
    return not words or CONTENT_FREE.fullmatch(words) is not None


# --- Rules: shared pieces --------------------------------------------------------------------

ADVERBS = r"(?:(?:actually|really|now|currently|still|also|just|already|recently|finally) )*"
# Where a value (a city, a company) ends: punctuation, the sentence's end, or a word that
# starts another detail ("… Shanghai with my wife", "… Hangzhou now", "… Austin last month").
VALUE_END = (
    r"(?=\s*[,;:!?()]|\s*$|\s+(?:with|and|but|because|since|so|for|now|nowadays|currently"
    r"|these days|at the moment|last|this|next|ago|as of)\b)"
)
VALUE = r"[^\s,;:!?()][^,;:!?()]*?"
JOBS = (
    r"manager|engineer|developer|designer|teacher|doctor|nurse|lawyer|student|analyst"
    r"|scientist|consultant|writer|accountant|architect|researcher|professor|programmer|chef"
    r"|journalist|editor|founder|ceo|cto|director|intern|officer|pharmacist|dentist|therapist"
    r"|entrepreneur|freelancer|photographer|artist|musician|pilot|driver|mechanic"
)
ZH_ADVERBS = r"(?:其实|现在|目前|已经|还|也|一直|如今)*"
ZH_END = r"(?=[了啦呢吧啊呀]*(?:[，,。；;！!？?\s]|$))"
ZH_VALUE = r"[^，,。；;！!？?\s]+?"
ZH_JOBS = (
    r"经理|工程师|设计师|老师|教师|医生|护士|律师|学生|程序员|会计|分析师|研究员|教授|作家|记者"
    r"|厨师|顾问|销售|主管|总监|司机|创始人|实习生|架构师"
)

THIRD_PERSON = {
    "i": "they",
    "me": "them",
    "my": "their",
    "mine": "theirs",
    "myself": "themselves",
    "i'm": "they're",
    "i've": "they've",
    "i'll": "they'll",
    "i'd": "they'd",
}
FIRST_PERSON = re.compile(r"\b(?:i'm|i've|i'll|i'd|myself|mine|my|me|i)\b", re.I)
ZH_FIRST_PERSON = re.compile(r"我的|我(?!们)")


def _about_them(value: str) -> str:
    """A captured detail retold about the user: "my wife" → "their wife", "我的猫" → "自己的猫"."""
    value = FIRST_PERSON.sub(lambda m: THIRD_PERSON[m.group().lower()], value)
    return ZH_FIRST_PERSON.sub(lambda m: "自己的" if m.group() == "我的" else "自己", value)


def _about_the_user(clause: str) -> str:
    """A whole sentence retold about the user: "My deadline is Friday" → "The user's deadline is
    Friday", "我的截止日期" → "用户的截止日期"."""
    clause = re.sub(r"\bmy\b", "the user's", clause, flags=re.I)
    clause = re.sub(r"\b(?:me|i)\b", "the user", clause, flags=re.I)
    clause = clause.replace("我", "用户")
    return clause[:1].upper() + clause[1:]


# --- Rules: facts ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    pattern: re.Pattern[str]
    # The fact, from the match's named groups (each retold in the third person; an optional
    # group that did not match is empty); None: the whole sentence, retold.
    template: str | None
    slot: str | None
    importance: float
    # The attributes (memories/statements/) the fact states: it carries the statements of
    # its sentence about them.
    attributes: tuple[str, ...] = ()


# What a slot's facts state: the home_city rule's fact carries "lives in", the job rule's the
# job and the employer (and where, "an engineer at Acme in Berlin").
SLOT_ATTRIBUTES = {
    "profile:name": ("name",),
    "profile:home_city": ("lives in",),
    "profile:household": ("lives with",),
    "profile:address": ("address",),
    "profile:phone": ("phone",),
    "profile:email": ("email",),
    "profile:birthday": ("birthday",),
    "profile:job": ("job", "works at", "school", "lives in"),
    "plan:deadline": ("deadline",),
}


def rule(
    pattern: str,
    template: str | None,
    slot: str | None,
    importance: float,
    attributes: tuple[str, ...] = (),
) -> Rule:
    attributes = attributes or SLOT_ATTRIBUTES.get(slot or "", ())
    return Rule(re.compile(pattern, re.I), template, slot, importance, attributes)


RULES: list[Rule] = [
    # English
    rule(
        rf"\b(?:my name(?:'s| is)|i'm called|i am called|(?:^|you can |please |just )call me)"
        rf" (?P<name>{VALUE}){VALUE_END}",
        "The user's name is {name}",
        "profile:name",
        0.9,
    ),
    rule(
        rf"\bi(?:'ve| have)? {ADVERBS}(?:moved|relocated) to (?P<city>{VALUE}){VALUE_END}"
        rf"|\bi {ADVERBS}live (?:with [^,;]+? )?in (?P<city2>{VALUE}){VALUE_END}"
        rf"|\bi(?:'m| am) {ADVERBS}(?:based|living) in (?P<city3>{VALUE}){VALUE_END}",
        "The user lives in {city}{city2}{city3}",
        "profile:home_city",
        0.8,
    ),
    rule(
        rf"\bi {ADVERBS}live (?:in {VALUE} )?with (?P<who>{VALUE})(?=\s*[,;:!?()]|\s*$|\s+in\b)",
        "The user lives with {who}",
        "profile:household",
        0.7,
    ),
    rule(
        r"\bmy (?:home )?address is (?P<address>[^;!?]+)",
        "The user's address is {address}",
        "profile:address",
        0.8,
    ),
    rule(
        r"\bmy (?:phone|phone number|mobile|mobile number|cell|number) is"
        r" (?P<phone>[+\d][\d\s().-]*\d)",
        "The user's phone number is {phone}",
        "profile:phone",
        0.8,
    ),
    rule(
        r"\bmy email(?: address)? is (?P<email>\S+@\S+)",
        "The user's email is {email}",
        "profile:email",
        0.8,
    ),
    rule(
        rf"\bmy birthday is (?P<birthday>{VALUE}){VALUE_END}",
        "The user's birthday is {birthday}",
        "profile:birthday",
        0.8,
    ),
    rule(
        rf"\bi {ADVERBS}work as (?P<role>an? {VALUE}|{VALUE})"
        rf"(?P<org> (?:at|for) {VALUE})?{VALUE_END}",
        "The user works as {role}{org}",
        "profile:job",
        0.8,
    ),
    rule(
        rf"\bi {ADVERBS}work (?P<org>(?:at|for) {VALUE}){VALUE_END}",
        "The user works {org}",
        "profile:job",
        0.8,
    ),
    rule(
        rf"\bi(?:'m| am) {ADVERBS}(?P<role>an? (?:[\w-]+ ){{0,3}}?(?:{JOBS}))\b"
        rf"(?P<org> (?:at|for|in) {VALUE}{VALUE_END})?",
        "The user is {role}{org}",
        "profile:job",
        0.8,
    ),
    rule(
        r"\b(?:the )?(?P<subject>(?!(?:my|our|your|the|a|this|that)\b)\w+ )?deadline\b.*"
        r"\b(?:is|moved to|changed to)\b",
        None,
        "plan:deadline",
        0.8,
    ),
    rule(
        rf"\bi(?:'m| am) {ADVERBS}allergic to (?P<allergen>[^;:!?()]+)",
        "The user is allergic to {allergen}",
        None,
        0.9,
        ("allergy",),
    ),
    rule(
        rf"\bi (?P<adverb>{ADVERBS})(?P<verb>like|love|prefer|enjoy|hate|dislike|adore"
        r"|don't like|do not like|can't stand|cannot stand) (?P<liked>[^;:!?()]+?)"
        r"(?=\s*[;:!?()]|\s*$|,?\s+(?:and|but) i\b)",
        "The user {adverb}{verb} {liked}",
        None,
        0.6,
        ("likes", "dislikes"),
    ),
    # Chinese
    rule(
        rf"我叫(?P<name>{ZH_VALUE}){ZH_END}|我的名字(?:是|叫)(?P<name2>{ZH_VALUE}){ZH_END}",
        "用户的名字是{name}{name2}",
        "profile:name",
        0.9,
    ),
    rule(
        rf"我{ZH_ADVERBS}(?:搬到了?|搬去了?)(?P<city>{ZH_VALUE}){ZH_END}"
        rf"|我{ZH_ADVERBS}(?:(?:和|跟|与)[^，,。住]+?(?:一起)?)?{ZH_ADVERBS}住在(?P<city2>{ZH_VALUE}){ZH_END}",
        "用户住在{city}{city2}",
        "profile:home_city",
        0.8,
    ),
    rule(
        rf"我{ZH_ADVERBS}(?:和|跟|与)(?P<who>[^，,。住]+?)(?:一起)?{ZH_ADVERBS}住",
        "用户和{who}住在一起",
        "profile:household",
        0.7,
    ),
    rule(
        r"我的(?:家庭)?(?:地址|住址)是(?P<address>[^；;！!？?]+)",
        "用户的地址是{address}",
        "profile:address",
        0.8,
    ),
    rule(
        r"我的(?:电话|手机)(?:号码?)?是(?P<phone>[+\d][\d\s-]*\d)",
        "用户的电话号码是{phone}",
        "profile:phone",
        0.8,
    ),
    rule(
        r"我的邮箱(?:地址)?是(?P<email>\S+@[^\s，。；]+)",
        "用户的邮箱是{email}",
        "profile:email",
        0.8,
    ),
    rule(
        rf"我的生日是(?P<birthday>{ZH_VALUE}){ZH_END}",
        "用户的生日是{birthday}",
        "profile:birthday",
        0.8,
    ),
    rule(
        rf"我{ZH_ADVERBS}在(?P<org>{ZH_VALUE})(?P<verb>做|当|担任)(?P<role>[^，,。；;\s]*?(?:{ZH_JOBS}))",
        "用户在{org}{verb}{role}",
        "profile:job",
        0.8,
    ),
    rule(
        rf"我{ZH_ADVERBS}是(?:一名|一个|一位|个|名)?(?P<role>[^，,。；;\s]*?(?:{ZH_JOBS})){ZH_END}",
        "用户是{role}",
        "profile:job",
        0.8,
    ),
    rule(
        rf"我{ZH_ADVERBS}在(?P<org>{ZH_VALUE})(?:工作|上班)",
        "用户在{org}工作",
        "profile:job",
        0.8,
    ),
    rule(
        r"(?:截止日期|截止时间|deadline|期限).*(?:是|改为|改到|推迟到|提前到)",
        None,
        "plan:deadline",
        0.8,
    ),
    rule(
        rf"我{ZH_ADVERBS}对(?P<allergen>[^，,。；;]+?)过敏",
        "用户对{allergen}过敏",
        None,
        0.9,
        ("allergy",),
    ),
    rule(
        r"我(?P<adverb>(?:很|非常|特别|最|也|还|真的|超)*)"
        r"(?P<verb>不喜欢|喜欢|喜爱|爱|讨厌|偏好)(?P<liked>[^，,。；;！!？?]+)",
        "用户{adverb}{verb}{liked}",
        None,
        0.6,
        ("likes", "dislikes"),
    ),
]

# "I like" → "The user likes": the verbs of the preference rule, in the third person.
THIRD_PERSON_VERBS = {
    "don't like": "doesn't like",
    "do not like": "does not like",
    "can't stand": "can't stand",
    "cannot stand": "cannot stand",
}


def _fact(rule: Rule, match: re.Match[str], sentence: str) -> Extraction:
    slot = rule.slot
    if rule.template is None:
        content = _about_the_user(sentence)
    else:
        groups = {name: _about_them(value or "") for name, value in match.groupdict().items()}
        if "verb" in groups and not HAN.search(groups["verb"]):
            verb = groups["verb"].lower()
            groups["verb"] = THIRD_PERSON_VERBS.get(verb, verb + "s")
        content = rule.template.format(**groups).strip()
    subject = match.groupdict().get("subject")
    if subject:  # "the report deadline" and "the project deadline" are two slots
        slot = f"{slot}:{subject.strip().lower()}"
    return Extraction("remember", content, rule.importance, slot)


def forget_requests(text: str) -> list[Extraction]:
    """The forget requests the rules find in `text`, each with the sentence that asks."""
    return [
        Extraction("forget", topic=ask.topic, request=text[ask.start : ask.end])
        for ask in forget_asks(text)
    ]


class RuleBasedExtractor:
    """The rules' facts about the user, sentence by sentence, each carrying the values it
    states; one fact for each other subject the message speaks of ("The user's brother Mark
    is a lawyer in New York"); and a fact for each value of the user's no rule wrote ("The
    user is no longer vegetarian"). Every value the message states (memories/statements/) is
    carried by exactly one fact."""

    def extract(self, text: str, *, replying_to: str = "") -> list[Extraction]:
        # A sentence asking to forget states no fact (forget_asks places each on a sentence).
        forgets = {forget.request: forget for forget in forget_requests(text)}
        spans = [text[start:end] for start, end in sentence_spans(text)]
        reading = message_read("\n".join(s for s in spans if s not in forgets))
        written = _Written(reading)
        for piece in spans:
            if (forget := forgets.get(piece)) is not None:
                written.add(forget)
                written.number += 1
                continue
            for sentence in sentences(piece):
                written.at[sentence] = written.number
                for rule, match, fact in self._rule_facts(sentence):
                    written.add(fact, statements=written.rule_statements(rule, match, sentence))
                    written.covered.add(sentence)
                written.number += 1
        written.subject_facts()
        written.user_values()
        return written.extractions()

    def _rule_facts(self, sentence: str) -> list[tuple[Rule, re.Match[str], Extraction]]:
        found: list[tuple[int, Rule, re.Match[str], Extraction]] = []
        slots: set[str] = set()
        for rule in RULES:
            for match in rule.pattern.finditer(sentence):
                fact = _fact(rule, match, sentence)
                if fact.slot in slots:
                    continue  # one value a slot a sentence: the first rule's
                if fact.slot:
                    slots.add(fact.slot)
                found.append((match.start(), rule, match, fact))
        found.sort(key=lambda entry: entry[0])  # stable: same start keeps the rules' order
        return [(rule, match, fact) for _, rule, match, fact in found]


# Importance of a fact about another subject, and of a value of the user's no rule wrote.
SUBJECT_FACT_IMPORTANCE = 0.7
USER_VALUE_IMPORTANCE = 0.7

# The slots of the user's values that rules also write; any other single value of the
# user's is slotted by its attribute ("profile:favorite_language", "profile:diet"), so a new
# value supersedes the fact of the old one.
ATTRIBUTE_SLOTS = {
    "name": "profile:name",
    "lives in": "profile:home_city",
    "lives with": "profile:household",
    "address": "profile:address",
    "phone": "profile:phone",
    "email": "profile:email",
    "birthday": "profile:birthday",
    "job": "profile:job",
    "works at": "profile:job",
    "deadline": "plan:deadline",
}

# A rule's value when the statements missed it: (attribute, the groups that may hold it).
RULE_VALUES = {
    "profile:name": (("name", ("name", "name2")),),
    "profile:home_city": (("lives in", ("city", "city2", "city3")),),
    "profile:household": (("lives with", ("who",)),),
    "profile:address": (("address", ("address",)),),
    "profile:phone": (("phone", ("phone",)),),
    "profile:email": (("email", ("email",)),),
    "profile:birthday": (("birthday", ("birthday",)),),
    "profile:job": (("job", ("role",)), ("works at", ("org",))),
}


def value_slot(statements: tuple[Statement, ...] | list[Statement]) -> str | None:
    """The slot of a fact stating the user's values: one single-valued attribute's (both of
    job and works at are "profile:job"); None for many values, another subject's, or more
    than one slot."""
    if not statements or not all(s.single and s.subject.is_user for s in statements):
        return None
    slots = {
        ATTRIBUTE_SLOTS.get(s.attribute, "profile:" + s.attribute.replace(" ", "_"))
        for s in statements
    }
    return slots.pop() if len(slots) == 1 else None


class _Written:
    """The extractions of one message, in the order said, and which statements they carry."""

    def __init__(self, reading: MessageReading) -> None:
        self.reading = reading
        self.number = 0  # the sentence being read
        self.at: dict[str, int] = {}  # a sentence's number
        self.covered: set[str] = set()  # sentences a rule wrote a fact from
        self.carried: set[int] = set()  # ids of the statements carried
        self.written: list[tuple[int, Extraction]] = []
        self.added: set[int] = set()  # ids of the facts of values no rule wrote
        self.user_statements: dict[str, list[Statement]] = {}
        for fact in reading.user_clauses:
            for sentence in fact.said:
                self.user_statements.setdefault(sentence, []).extend(fact.statements)

    def add(self, extraction: Extraction, *, statements=(), number: int | None = None) -> None:
        self.carried.update(id(s) for s in statements)
        if statements:
            extraction = replace(extraction, statements=tuple(statements))
        self.written.append((self.number if number is None else number, extraction))

    def rule_statements(self, rule: Rule, match: re.Match[str], sentence: str) -> list[Statement]:
        found = [
            s
            for s in self.user_statements.get(sentence, ())
            if id(s) not in self.carried and s.subject.is_user and s.attribute in rule.attributes
        ]
        if found:
            return found
        fallback = []
        for attribute, groups in RULE_VALUES.get(rule.slot or "", ()):
            value = next((match.groupdict().get(g) for g in groups if match.groupdict().get(g)), "")
            value = re.sub(r"^\s*(?:at|for|in)\s+", "", value or "", flags=re.I)
            if value := clean(value):
                fallback.append(Statement(USER, attribute, value, single_valued(attribute)))
        return fallback

    def _number(self, said: tuple[str, ...], *, last: bool = False) -> int:
        numbers = [self.at[s] for s in said if s in self.at] or [self.number]
        return max(numbers) if last else min(numbers)

    def subject_facts(self) -> None:
        contents = {e.content for _, e in self.written}
        for fact in self.reading.facts:
            if not fact.subject.is_user:
                self.add(
                    Extraction(
                        "remember", fact.content, SUBJECT_FACT_IMPORTANCE, subject=fact.subject
                    ),
                    statements=fact.statements,
                    number=self._number(fact.said),
                )
                continue
            # The user's part of a message about several subjects, unless the rules wrote it;
            # like every subject's fact, slotless (the graph's edges say what it changed).
            left = [s for s in fact.statements if id(s) not in self.carried]
            if fact.content in contents or (not left and all(s in self.covered for s in fact.said)):
                continue
            self.add(
                Extraction("remember", fact.content, USER_VALUE_IMPORTANCE),
                statements=left,
                number=self._number(fact.said),
            )

    def user_values(self) -> None:
        """A fact for each clause of the user's whose values no fact carries yet."""
        added: list[tuple[int, Extraction]] = []
        for fact in self.reading.user_clauses:
            left = [s for s in fact.statements if id(s) not in self.carried]
            if not left:
                continue
            self.carried.update(id(s) for s in left)
            slot = value_slot(left)
            extraction = Extraction(
                "remember", fact.content, USER_VALUE_IMPORTANCE, slot, statements=tuple(left)
            )
            added.append((self._number(fact.said, last=True), extraction))
        self.added = {id(e) for _, e in added}
        self.written += added

    def extractions(self) -> list[Extraction]:
        merged: dict[str, int] = {}
        result: list[Extraction] = []
        ordered = [e for _, e in sorted(self.written, key=lambda pair: pair[0])]
        # One value a slot a message: a fact this extractor added for an end said before the
        # new value ("I left Freightly. I'm a staff engineer at Lumen Pay now") stays a fact
        # of its own; the new value supersedes.
        last_of_slot = {e.slot: i for i, e in enumerate(ordered) if e.slot}
        ordered = [
            replace(e, slot=None)
            if id(e) in self.added and e.slot and last_of_slot[e.slot] != i
            else e
            for i, e in enumerate(ordered)
        ]
        for extraction in ordered:
            if extraction.action == "remember" and extraction.content in merged:
                at = merged[extraction.content]  # the same fact twice: one, with both's values
                result[at] = replace(
                    result[at], statements=result[at].statements + extraction.statements
                )
                continue
            if extraction.action == "remember":
                merged[extraction.content] = len(result)
            result.append(extraction)
        return result


# --- LLM -------------------------------------------------------------------------------------

SLOTS = (
    "profile:name, profile:home_city, profile:household, profile:address, profile:phone, "
    "profile:email, profile:job, profile:birthday, plan:deadline"
)
LLM_PROMPT = f"""You extract long-term memories about the user from the user's latest message.
The assistant message before it, when there is one, is context only.
Answer with JSON: {{"items": [...]}}, each item one of
  {{"action": "remember", "content": "...", "importance": 0..1, "slot": "<slot>" | null}}
  {{"action": "forget", "topic": "...", "request": "..."}}
  {{"action": "sensitive", "kind": "<kind>", "text": "..."}}
Rules:
- A "remember" item is one fact about the user, written in the third person in the user's
  language ("The user lives in Hangzhou", "用户住在杭州"). A sentence stating several details
  gives one item each: "I live in Shanghai with my wife" is "The user lives in Shanghai"
  (profile:home_city) and "The user lives with their wife" (profile:household).
- slot, for facts a person holds one value of at a time: {SLOTS}.
- A correction or change ("Oh wait, I got that wrong: I actually live in Hangzhou now",
  "不对，我是产品经理") is a "remember" item with the slot: the new value replaces the old one.
- When the user asks you to forget, delete or stop keeping something (in any wording or
  language: "please remove my home address from your memory", "别记我的病史了"), give a
  "forget" item, never a "remember" item: topic is what to forget in the user's own words
  ("my home address", "everything about that relationship", "我的病史"), request is the
  user's sentence that asks, copied exactly. Saying they forgot something themselves ("I
  always forget my keys") is no request.
- A credential or identifier the user states (a password, a PIN or door code, a card number,
  a social security or national id number, an IBAN, an API key or token, a private key) is a
  "sensitive" item: kind one of {", ".join(REDACTION_KINDS)}, text the secret exactly as written.
  Never put a secret into a "remember" item. "[redacted: …]" marks a secret already removed.
- Facts about someone or something other than the user (a relative, a friend, a colleague,
  a pet; a place or an organisation the message is about) are "remember" items too, one item
  per subject, never two subjects in one item, with
  "subject": {{"name": "Mark" or "", "role": "<relation to the user, singular, in English:
  brother, wife, friend, manager, dog, cat…>", "kind": "person" | "pet" | "place" |
  "organisation" | "thing"}} and slot null, the content in the third person about them:
  "My brother Mike is a doctor in Chicago. My brother Mark is a lawyer in New York." gives two
  items, "The user's brother Mike is a doctor in Chicago" and "The user's brother Mark is a
  lawyer in New York". An item about the user has no subject.
- Each "remember" item lists the values it states of its subject:
  "statements": [{{"attribute": "...", "value": "...", "single": true|false, "ended": true|false}}]
  attribute: a short phrase, the common ones as "lives in", "works at", "job", "phone",
  "email", "age", "car", "diet", "favorite <thing>", "reading", "speaks", "learning", "pet",
  or the relation ("brother", "friend", "partner", "manager"); value as said ("Denver",
  "a lawyer", "Rust"); single: true when one value holds at a time (lives in, job, phone,
  manager, partner, favorite X, diet, car, what one is reading), false when many do
  (languages, pets, children, friends, hobbies); ended: true when the value stopped holding
  with no new one said ("I'm no longer vegetarian", "Max passed away": the user's "pet" Max
  ended, "I quit Google"). A plan or a future change ("I'm moving there next week") states no
  value yet.
- Events, plans, questions and small talk give no item: the message itself is kept.
- No items when nothing is worth keeping."""


class LLMExtractor:
    def __init__(self, *, base_url: str, api_key: str, model: str, timeout: float) -> None:
        self.model = model
        self.client = OpenAICompatibleClient(base_url=base_url, api_key=api_key, timeout=timeout)

    def extract(self, text: str, *, replying_to: str = "") -> list[Extraction]:
        context = [{"role": "assistant", "content": replying_to}] if replying_to else []
        try:
            answer = self.client.chat_json(
                model=self.model,
                messages=[
                    {"role": "system", "content": LLM_PROMPT},
                    *context,
                    {"role": "user", "content": text},
                ],
            )
            items = json.loads(answer).get("items", [])
            return [extraction for item in items if (extraction := _from_llm(item))]
        except (OpenAICompatibleError, ValueError, AttributeError, TypeError) as error:
            raise ExtractionError(f"LLM extractor failed: {error}") from error


def _from_llm(item: dict) -> Extraction | None:
    """The item as an Extraction; None for one that says nothing (no content, no topic, an
    unknown kind of secret)."""
    slot = str(item.get("slot") or "") or None
    if item.get("action") == "forget":
        topic, request = str(item.get("topic") or "").strip(), str(item.get("request") or "")
        return Extraction("forget", topic=topic, request=request.strip())
    if item.get("action") == "sensitive":
        kind, secret = str(item.get("kind") or ""), str(item.get("text") or "").strip()
        return (
            Extraction("sensitive", kind=kind, content=secret)
            if kind in REDACTION_KINDS and secret
            else None
        )
    content = str(item.get("content") or "").strip()
    if not content:
        return None
    importance = min(1.0, max(0.0, float(item.get("importance") or 0.5)))
    subject = _llm_subject(item.get("subject"))
    raw = item.get("statements")
    statements = tuple(
        statement
        for one in (raw if isinstance(raw, list) else [])
        if (statement := _llm_statement(one, subject)) is not None
    )
    if not subject.is_user:
        slot = None  # a slot holds the user's own values
    return Extraction("remember", content, importance, slot, subject=subject, statements=statements)


ENTITY_KINDS = {"person", "pet", "place", "organisation", "thing"}


def _llm_subject(raw: object) -> Subject:
    """The item's subject; the user for none, or for one that names no one."""
    if not isinstance(raw, dict):
        return USER
    name = str(raw.get("name") or "").strip()
    role = str(raw.get("role") or "").strip().lower()
    kind = str(raw.get("kind") or "").strip().lower().replace("organization", "organisation")
    if kind == "user" or role in ("user", "self", "me", "the user") or not (name or role):
        return USER
    if kind not in ENTITY_KINDS:
        kind = "person"
    return Subject(name=name, role=role, kind=kind)  # type: ignore[arg-type]


def _llm_statement(raw: object, subject: Subject) -> Statement | None:
    """One statement of an item, its attribute normalised; None for one that says nothing."""
    if not isinstance(raw, dict):
        return None
    attribute = raw.get("attribute")
    value = raw.get("value")
    if not isinstance(attribute, str) or not attribute.strip():
        return None
    value = "" if value is None or isinstance(value, (dict, list)) else str(value).strip()
    ended = raw.get("ended") is True or str(raw.get("ended")).lower() == "true"
    if not value and not ended:
        return None
    key = attribute_key(attribute)
    single = raw.get("single")
    single = single if isinstance(single, bool) else single_valued(key)
    owner = _llm_subject(raw["subject"]) if isinstance(raw.get("subject"), dict) else subject
    return Statement(owner, key, value, single=single, ended=ended)


@cache
def extractor() -> Extractor:
    if settings.EXTRACTOR == "llm":
        return LLMExtractor(**openai_settings("LLM"))
    return RuleBasedExtractor()
