"""The rule-based extractor's rules: English and Chinese patterns of what the user says of
themselves, each with the fact it writes ("The user lives in Hangzhou"), its slot and the
attributes (memories/statements/) the fact states."""

import re
from dataclasses import dataclass

from memories.extraction.model import Extraction
from memories.sentences import HAN

# --- Shared pieces ---------------------------------------------------------------------------

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


# --- The rules -------------------------------------------------------------------------------


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
        rf"\b(?:my name(?:'s| is)|i'm called|i am called|(?:^|you can |please |just )call me"
        # a name, not how to reach the user ("call me on 07700 900123", "call me back")
        r"(?= (?-i:[A-Z]))(?! (?:on|at|back|if|when|whenever|anytime|later|tomorrow|tonight)\b))"
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
        # not how or when ("在这边找了份工作")
        rf"我{ZH_ADVERBS}在(?!这边|那边|这里|那里)(?P<org>(?:(?!找了)[^，,。；;！!？?\s])+?)(?:工作|上班)",
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


def rule_fact(rule: Rule, match: re.Match[str], sentence: str) -> Extraction:
    """The fact a rule's match writes: its template filled in the third person (or the whole
    sentence retold), in the rule's slot."""
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
