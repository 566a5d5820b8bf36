"""How text is read into sentences, English and Chinese, for extraction and for forgetting; and
whether a text names a value (the memory graph's closed values, in recall and in forgetting)."""

import re
from collections.abc import Iterator

HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
# What continues a Latin word: a name is bounded by none of these, not by \b, which Han
# characters do not break ("跟Lucas说了" names Lucas).
LATIN_WORD_CHARACTERS = "A-Za-z0-9À-ÿ"


def latin_bounded(pattern: str) -> str:
    """`pattern` as a whole Latin word or words: no Latin letter or digit on either side (the
    same in Python's and PostgreSQL's regular expressions)."""
    return rf"(?<![{LATIN_WORD_CHARACTERS}]){pattern}(?![{LATIN_WORD_CHARACTERS}])"


# English sentences end at . ! ? ; before a space (so "alice@example.com" stays whole), but
# not inside a name after an initial (`_inside_a_name`); Chinese ones at 。！？； whatever follows.
SENTENCE_BREAK = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])\s*|\n+")
# An initial, after a name or another initial ("Ursula K.", "J. R."), and what may follow it in
# the name: another initial, or a capitalised word that does not open a sentence ("Le Guin",
# not "My wife…", "I live…").
AFTER_A_NAME = re.compile(r"(?:^|\s)(?:[A-Z][a-z]+|[A-Z]\.)\s[A-Z]\.$")
AN_INITIAL = re.compile(r"(?:^|\s)[A-Z]\.$")
NEXT_INITIAL = re.compile(r"^[A-Z]\.(?:\s|$)")
# A title's full stop, before the name it goes with ("Dr. Lane", "St. Louis", "Mt. Fuji").
TITLE = re.compile(r"(?:^|[\s(])(?:Dr|Mr|Mrs|Ms|Mx|Prof|St|Mt|Ft|Lt|Capt|Sgt|Gen|Rev|Hon)\.$")
NAME_GOES_ON = re.compile(
    r"^(?!(?:I|My|We|Our|The|He|She|They|It|This|That|And|But|So|Then|Also|His|Her|Their"
    r"|Your|A|An|In|On|At|If|When)\b)[A-Z][a-z]"
)


def _inside_a_name(before: str, after: str) -> bool:
    """Whether a full stop that ends `before` is a title's or an initial's inside a name that
    `after` goes on with ("Dr. | Lane", "Ursula K. | Le Guin", "J. | R. R. Tolkien"), not a
    sentence's end ("a Model S. | My wife…", "blood type O. | …")."""
    if TITLE.search(before):
        return NAME_GOES_ON.match(after) is not None
    if not AN_INITIAL.search(before):
        return False
    return NEXT_INITIAL.match(after) is not None or (
        AFTER_A_NAME.search(before) is not None and NAME_GOES_ON.match(after) is not None
    )


def _breaks(text: str) -> Iterator[re.Match[str]]:
    for match in SENTENCE_BREAK.finditer(text):
        if not _inside_a_name(text[: match.start()], text[match.end() :]):
            yield match


SENTENCE_END = ".!?;。！？； "

# Openers of a correction or a request, skipped before a sentence is read: "Oh wait, sorry, I
# got that wrong:", "Correction:", "Can you please …", "不对，", "其实", "请".
PREAMBLE = re.compile(
    r"^(?:(?:oh|oops|wait|sorry|no(?! longer| need)|nope|actually|correction|update|also|and|ok"
    r"|okay|well|i mean|i meant|my bad|scratch that|to be clear|i got (?:that|it) wrong|i was wrong"
    r"|let me correct (?:that|myself)|please|can you|could you|would you|i want you to"
    r"|i'd like you to)\b[\s,:;.!-]*)+",
    re.I,
)
ZH_PREAMBLE = re.compile(
    r"^(?:(?:不对|不是|其实|抱歉|对不起|更正一下|更正|纠正一下|我说错了|说错了|哦|噢|等等|等一下"
    r"|另外|还有|对了|请你|请|麻烦你|麻烦|你能不能|能不能|可以)[，,：:\s]*)+"
)


def sentences(text: str) -> Iterator[str]:
    """The message's sentences, openers and final punctuation removed."""
    text = text.replace("’", "'")
    for start, end in sentence_spans(text):
        sentence = text[start:end].strip()
        sentence = ZH_PREAMBLE.sub("", PREAMBLE.sub("", sentence)).strip(SENTENCE_END)
        if sentence:
            yield sentence


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Where each sentence of `text` stands in it (start, end), its final punctuation
    included, the breaks between them not."""
    spans, start = [], 0
    for match in _breaks(text):
        if text[start : match.start()].strip():
            spans.append((start, match.start()))
        start = match.end()
    if text[start:].strip():
        spans.append((start, len(text)))
    return spans


def mentions(text: str, value: str, *, any_case: bool = True) -> bool:
    r"""Whether `text` names `value`: bounded by Latin letters and digits (not by Han, which
    \w would count), in any case unless `any_case` is False (then as written), in Latin
    script; anywhere in Han (memories.graph.services.value_mentioned is its SQL twin). An
    empty value names nothing."""
    if not value.strip():
        return False
    if HAN.search(value):
        return value.casefold() in text.casefold() if any_case else value in text
    flags = re.IGNORECASE if any_case else 0
    return re.search(latin_bounded(re.escape(value)), text, flags=flags) is not None
