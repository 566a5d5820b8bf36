"""What a user message says no longer holds, by naming it, whatever its attribute
(docs/graph.md):

- an end: "The Miata is gone", "I sold my Vespa", "Tess and I broke up", "I moved from
  Austin", "思域卖了", "跟小周分手了", "pilates停了", "我从大疆离职了" — a change is often
  said as the end of the old value, in words no attribute rule reads; the memory graph closes
  a value it holds that such a message names, and recall lets a later memory saying so replace
  an earlier one naming it (memories/recall.py, rule 4).
  Only a plain statement counts: not a question, nor an end denied, planned or imagined ("I'd
  never sell the Miata", "打算把思域卖了"), nor someone else's ("my sister's Miata is gone");
- a correction: "Sorry, I got that wrong: …, not the 12th", "不是十月八号" — the earlier
  memories stating what it calls wrong leave current recall."""

import re

from memories.sentences import sentence_spans, sentences
from memories.statements.keys import HAN_RE
from memories.statements.words import HAN

CLAUSE_BREAK = re.compile(r"[，,、；;：:]\s*|\s+(?:but|so)\s+|\s*(?:然后|但是|不过|所以)")

# --- English -----------------------------------------------------------------------------------

DETERMINER = r"(?:(?:the|my|our|that|this|his|her|their)\s+)?(?:old\s+)?"
# A thing named in up to three words, stopping before what follows it ("the Golf for a Niro").
THING = (
    r"(?P<thing>[\w'&.-]+(?:\s+(?!(?:for|to|in|at|on|and|but|because|after|since|last|this"
    r"|with|from|now|today|yesterday|already)\b)[\w'&.-]+){0,2}?)"
)
EN_GONE = re.compile(
    rf"^{DETERMINER}{THING}\s+(?:is|was|'s|are|were|has\s+been|have\s+been|got)\s+"
    r"(?:now\s+|finally\s+|officially\s+|all\s+|long\s+)?(?:gone|sold(?!\s+out)|cancell?ed|over"
    r"|history|dead|stolen|scrapped|totall?ed|written\s+off|abandoned|switched\s+off)\b",
    re.I,
)
# Left behind ("moved from Austin to Denver", "transferred out of law"), given up ("bailed on
# Severance halfway").
EN_ENDED = re.compile(
    r"^(?:(?:i|we)\s+(?:(?:just|finally|recently|have|'ve|had|officially)\s+)*)?"
    r"(?:sold|traded\s+in|traded|got\s+rid\s+of|gave\s+away|gave\s+up(?:\s+on)?|quit"
    r"|cancell?ed|ditched|dropped|bailed\s+on|broke\s+up\s+with|split\s+(?:up\s+)?with"
    r"|broke\s+it\s+off\s+with|ended\s+(?:things|it)\s+with|called\s+it\s+quits\s+with"
    r"|(?:moved|transferred|relocated)\s+(?:from|out\s+of)"
    rf"|handed\s+in\s+my\s+notice\s+at)\s+{DETERMINER}{THING}(?=$|\s+(?:for|to|in|at|on|after"
    r"|because|since|last|this|now|today|yesterday|already|and|but|so|halfway|partway|midway"
    r"|through)\b)",
    re.I,
)
EN_BROKE_UP = re.compile(
    r"^(?P<thing>[A-Z][\w'-]+)\s+(?:and\s+[Ii]\s+(?:have\s+|'ve\s+)?(?:broke\s+up|split(?:\s+up)?"
    r"|called\s+it\s+quits|ended\s+things|broke\s+it\s+off)|(?:dumped|left)\s+me)\b"
)
# Said of what did not happen, might, or will: no end yet.
EN_NOT_SO = re.compile(
    r"\b(?:not|never|n't|almost|nearly|might|may|will|would|should|could|going\s+to|gonna"
    r"|thinking|want|wants|plan|planning|if|whether|until|unless|hope)\b|'ll\b|'d\b",
    re.I,
)

# "My sister's Miata is gone", "我姐的思域卖了": someone else's thing, not the user's.
SOMEONE_ELSES = re.compile(r"'s\b|的")
# "I traded it in", "我们分手了": a pronoun names no value.
PRONOUNS = frozenset(
    (
        *("it", "that", "this", "them", "those", "these", "everything", "all"),
        *("我们", "咱们", "你们", "他们", "她们", "它们", "这个", "那个", "这些", "那些", "一切"),
    )
)

# --- Chinese -----------------------------------------------------------------------------------

ZH_END = (
    r"(?:卖了|卖掉了|送人了|送走了|退了|退掉了|停了|停掉了|停用了|停机了|没了|丢了|扔了|报废了|注销了|取消了"
    r"|分了|分手了|不当了|不干了|不做了|不开了|不学了|不住了|不去了|不练了|不上了|不用了|不玩了|不追了"
    r"|不看了|戒了|辞了|黄了"
    # given away to be kept by someone else: "旺财送给我爸妈养了"
    rf"|送给了?[{HAN}A-Za-z]{{1,6}}?养了)"
)
ZH_OPENER = r"(?:对了|其实|然后|后来|最后|结果|终于|哎|唉|嗯)?"
ZH_LATER = r"下周|下个|明天|明年|后天|马上|今晚|待会|月底|年底"
ZH_GONE = re.compile(
    rf"^{ZH_OPENER}(?:(?:我们|我)?(?:跟|和|与))?(?:我的|我们的|我家的|我那辆|我那个|那辆|那个|那台|那份"
    rf"|这个|这台|这份|我)?(?P<thing>[{HAN}A-Za-z0-9]{{2,10}}?)"
    # An event before 就 ("毕业就停用了"), not a time to come ("下周就取消了")
    rf"(?:(?!{ZH_LATER})[{HAN}]{{2}}就)?(?:也|都|已经|早就|终于|刚|刚刚|总算)*(?:被)?{ZH_END}"
)
# Left by the user, who says so: "我从大疆离职了" (not "他从腾讯离职了", nor "…，后来从腾讯离职了"
# after someone else's clause); a place or a body, not a time ("从上个月开始", "从小到大").
ZH_LEFT = re.compile(
    rf"^{ZH_OPENER}(?:我们|我)(?:已经|刚|刚刚|终于|也)?从(?!上|下|小|去年|今年|明年|那时|当时)"
    rf"(?P<thing>[{HAN}A-Za-z0-9]{{2,10}}?)(?<!开始)(?<!以来)"
    r"(?:离职|辞职|退学|退出|搬走|搬出|(?:搬|转|调)(?:到|去|回|走|出))"
)
ZH_ENDED = re.compile(
    rf"^{ZH_OPENER}(?:我|我们)?(?:已经|刚|刚刚|终于)?(?:卖了|卖掉了|送走了|退掉了|辞掉了|辞了|戒了"
    rf"|取消了|换掉了)(?:我的|那辆|那个|那份|那台)?(?P<thing>[{HAN}A-Za-z0-9]{{2,10}})"
)
ZH_NOT_SO = re.compile(rf"没|不会|别|不要|要是|如果|打算|准备|想|快要|可能|{ZH_LATER}")
QUESTION = re.compile(r"[?？吗呢]\W*$")


def values_said_ended(text: str) -> tuple[str, ...]:
    """The things the message says have ended, as named ("Miata", "思域", "小周"), in order."""
    return tuple(thing for thing, _ in _ends(text))


# An end for now, not given up: "Christmas is over", "My phone is dead", "dropped Mark at the
# airport".
FOR_NOW = re.compile(r"\b(?:over|dead|dropped)\b", re.I)


def things_given_up(text: str) -> tuple[str, ...]:
    """Of the ends the message says, those of something given up for good (sold, quit,
    cancelled, left, "停了"), by its proper words (`proper_words`): what an earlier memory
    names by them is no more. "The PureGym membership is cancelled": "PureGym"."""
    return tuple(
        word
        for thing, clause in _ends(text)
        if not FOR_NOW.search(clause)
        for word in proper_words(thing)
    )


def proper_words(thing: str) -> list[str]:
    """The words of a thing that name it and nothing else: a name or an acronym, written with a
    capital ("PureGym" of "PureGym membership", "ICU"); not a common noun ("the café") nor a
    number, nor a Han word, which no capital tells from a common one ("演唱会")."""
    return [
        word
        for word in LATIN_WORD.findall(thing)
        if len(word) >= 3 and any(c.isupper() for c in word) and not HAN_RE.search(word)
    ]


def _ends(text: str) -> list[tuple[str, str]]:
    """Each end the message says: the thing, and the clause saying it."""
    things: list[tuple[str, str]] = []
    said_plainly = (
        sentence
        for start, end in sentence_spans(text)
        if not QUESTION.search(text[start:end].strip())
        for sentence in sentences(text[start:end])
    )
    for sentence in said_plainly:
        for clause in CLAUSE_BREAK.split(sentence):
            clause = clause.strip()
            for pattern, not_so in (
                (EN_GONE, EN_NOT_SO),
                (EN_ENDED, EN_NOT_SO),
                (EN_BROKE_UP, EN_NOT_SO),
                (ZH_GONE, ZH_NOT_SO),
                (ZH_ENDED, ZH_NOT_SO),
                (ZH_LEFT, ZH_NOT_SO),
            ):
                said = pattern.match(clause)
                if (
                    said
                    and not not_so.search(clause[: said.end("thing")])
                    and said["thing"].casefold() not in PRONOUNS
                    and not SOMEONE_ELSES.search(said["thing"])
                ):
                    things.append((said["thing"], clause))
                    break
    return things


LATIN_WORD = re.compile(r"[\w'&-]+")
# Words that name nothing on their own: "the" of "the Overlook" is not the Overlook.
FUNCTION_WORDS = frozenset(("the", "a", "an", "my", "our", "his", "her", "their", "of", "and"))


def names_value(thing: str, value: str) -> bool:
    """Whether `thing`, as an end named it, is the held `value`: in Han, one holds the other
    (two characters at least: "思域" is "本田思域"); in Latin script, the same words, or its
    last word or a capitalised one (three letters at least) is one of the value's ("the Miata"
    is "2016 Mazda Miata", "my Mazda" too)."""
    thing, value = thing.strip(), value.strip()
    if re.search(rf"[{HAN}]", thing + value):
        shorter = min(len(thing), len(value))
        return shorter >= 2 and (thing in value or value in thing)
    value_words = {word.casefold() for word in LATIN_WORD.findall(value)} - FUNCTION_WORDS
    words = [word for word in LATIN_WORD.findall(thing) if word.casefold() not in FUNCTION_WORDS]
    if not words or not value_words:
        return False
    if {word.casefold() for word in words} == value_words:
        return True
    heads = {words[-1], *(word for word in words if word[:1].isupper())}
    return any(len(word) >= 3 and word.casefold() in value_words for word in heads)


# --- Corrections ------------------------------------------------------------------------------

# The user says something they said before was wrong: "Sorry, I got that wrong", "I mixed
# them up", "更正一下", "是我记错了".
CORRECTION = re.compile(
    r"\b(?:told\s+you\s+wrong|got\s+(?:it|that|them)\s+wrong|i\s+was\s+wrong|mixed\s+(?:them|it"
    r"|that|those)\s+up|mixed\s+up|my\s+(?:bad|mistake)|correction|i\s+meant|i\s+misspoke)\b"
    r"|说错|记错|搞错|弄错|写错|更正|纠正|口误",
    re.I,
)
# What was wrong: "…, not the 12th.", "not Eli", "不是十月八号", "之前说三楼是我记错了".
EN_NOT = re.compile(
    r"\bnot\s+(?:the\s+|a\s+|an\s+)?(?P<thing>[\w'&.-]+(?:\s+[\w'&.-]+){0,2}?)(?=\s*(?:[,.;!]|$))",
    re.I,
)
ZH_NOT = re.compile(rf"不是(?P<thing>[{HAN}A-Za-z0-9]{{2,8}}?)(?=[，。！；,.!;]|$)")
ZH_SAID_BEFORE = re.compile(
    rf"之前说(?:的)?(?:是)?(?P<thing>[{HAN}A-Za-z0-9]{{2,8}}?)(?:是我|我)?(?:记错|说错|搞错|弄错)"
)
ORDINAL = re.compile(r"(?<=\d)(?:st|nd|rd|th)\b", re.I)


def values_said_wrong(text: str) -> tuple[tuple[str, str], ...]:
    """What a correction says was wrong, each with the sentence saying so ("Eli" of "Jonah
    plays the cello, not Eli."; "12" of "June 21, not the 12th."; "十月八号"), when the message
    says it corrects itself."""
    if not CORRECTION.search(text):
        return ()
    found = [
        (ORDINAL.sub("", match["thing"].rstrip(".")).strip(), sentence)
        for start, end in sentence_spans(text)
        for sentence in (text[start:end],)
        for pattern in (EN_NOT, ZH_NOT, ZH_SAID_BEFORE)
        for match in pattern.finditer(sentence)
    ]
    return tuple(
        (thing, sentence)
        for thing, sentence in found
        if len(thing) >= 2 and thing.casefold() not in PRONOUNS
    )
