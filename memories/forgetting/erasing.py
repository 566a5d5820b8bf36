"""Which sentences of a text a topic's words hit (and those going on about them), and the text
with them erased: the reading memories/forgetting/plan.py plans with.
"""

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass

from memories.extraction import EPISODE
from memories.forgetting.topics import STOPWORDS, ZH_PERSON_NOUNS, stem
from memories.models import ConversationMessage, Memory, MemoryType
from memories.sentences import HAN, sentence_spans

FORGOTTEN = "[forgotten]"
# Chinese characters too common to tell two texts apart.
COMMON_HAN = set(
    "的了是我你他她它们这那个有在不一也都很吗吧呢啊就还要会说去来到上下和与把被给让么什"
)
FORGET_REQUEST = "[forget request]"

Span = tuple[int, int]


def text_spans(text: str, offset: int = 0) -> list[Span]:
    return [(offset + start, offset + end) for start, end in sentence_spans(text[offset:])]


def memory_sentences(memory: Memory) -> tuple[list[Span], list[Span]]:
    """A memory's sentences: (its assistant context's, its own). Only episodes have a
    context ("Assistant: <context> → User: <words>")."""
    episode = EPISODE.match(memory.content) if memory.memory_type == MemoryType.EPISODIC else None
    if episode is None:
        return [], text_spans(memory.content)
    context = []
    if episode["context"]:
        start = episode.start("context")
        context = [(start + s, start + e) for s, e in sentence_spans(episode["context"])]
    return context, text_spans(memory.content, episode.start("words"))


def words_of(text: str) -> set[str]:
    """Content words (stemmed) and Chinese character pairs, for telling which sentences said a
    memory."""
    latin = {
        stem(word)
        for word in re.findall(r"[\w'-]+", text.lower())
        if not HAN.search(word)
        and word not in STOPWORDS
        and word not in ("user", "user's", "their", "they", "them", "assistant")
        and len(word) > 1
    }
    han = {
        run[i : i + 2]
        for run in re.findall(r"[\u3400-\u9fff]+", text.replace("用户", " "))
        for i in range(max(1, len(run) - 1))
    }
    return latin | han


# A sentence that goes on about the one before it: "I had a bad breakup. It was devastating."
CONTINUES = re.compile(
    r"^\W*(?:it|it's|that|that's|this|these|those|they|they're|he|he's|she|she's|his|her|their"
    r"|there|which|so|still|especially)\b|^\W*(?:他|她|它|这|那|而且|所以)",
    re.I,
)
# What starts on something else: never a continuation.
CHANGES_TOPIC = re.compile(
    r"\b(?:unrelated|on another note|on a (?:happier|different|lighter) note|by the way|anyway"
    r"|separately|changing the subject)\b|另外|顺便|换个话题|说起来",
    re.I,
)
PLACEHOLDER = re.compile(rf"^\W*(?:{re.escape(FORGOTTEN)}|{re.escape(FORGET_REQUEST)})\W*$")


def with_continuations(text: str, spans: list[Span], hits: set[Span]) -> set[Span]:
    """`hits` and the sentences that go on about them (starting "It", "They", "这" …)."""
    found = set(hits)
    for before, span in itertools.pairwise(spans):
        sentence = text[slice(*span)]
        if before in found and CONTINUES.match(sentence) and not CHANGES_TOPIC.search(sentence):
            found.add(span)
    return found


@dataclass(frozen=True)
class Hit:
    """Where a sentence is about what is forgotten (spans in the sentence; none: it is not)."""

    where: Callable[[str], list[Span]]

    def __call__(self, sentence: str) -> bool:
        return bool(self.where(sentence))

    @classmethod
    def whole(cls, test: Callable[[str], bool]) -> "Hit":
        """A test of whole sentences, with no place in them."""
        return cls(lambda sentence: [(0, len(sentence))] if test(sentence) else [])

    @classmethod
    def any_of(cls, hits: list["Hit"]) -> "Hit":
        return cls(lambda sentence: [span for hit in hits for span in hit.where(sentence)])


EVERY_SENTENCE = Hit.whole(lambda sentence: True)


def says(words: set[str]) -> Hit:
    """A sentence says a memory made of `words` when it holds at least half of them."""
    return Hit.whole(
        lambda sentence: bool(words) and len(words & words_of(sentence)) * 2 >= len(words)
    )


# Chinese joins with commas what English says in sentences of their own: "我现在月薪两万三，老婆
# 在银行上班，月薪一万五左右。" A clause naming a new subject (someone, or something "在 / 是")
# starts a new part; clauses without one go on about the part before.
ZH_CLAUSE_END = re.compile(r"(?<=[，,；;])")
ZH_NEW_SUBJECT = re.compile(
    rf"^\s*(?:另外|顺便|还有|对了|而|但是?|不过)?\s*(?:我们|我|你|他们|她们|他|她|{ZH_PERSON_NOUNS}"
    r"|(?![现正还实一就都也只又总可于真要老倒不][在是])[\u4e00-\u9fff]{1,4}(?:在|是))"
)


# The same in English, for lists said in one sentence: "work cell is 415-…, personal cell is
# 628-…, email is …".
EN_CLAUSE_END = re.compile(r"(?<=[,;:])(?=\s)")
EN_NEW_SUBJECT = re.compile(
    r"^\s*(?:and\s+|plus\s+)?(?:(?:my|his|her|their|our|the|a|an)\s+)?[\w'-]+(?:\s+[\w'-]+)?"
    r"\s+(?:is|are|was|were)\b",
    re.I,
)


def narrowed(text: str, span: Span, hit: Hit) -> list[Span]:
    """The parts of the sentence at `span` that `hit` is about: a clause that names a new
    subject starts a part, clauses without one go on about the part before (see
    ZH_NEW_SUBJECT, EN_NEW_SUBJECT); the whole sentence when it is one part."""
    sentence = text[slice(*span)]
    chinese = HAN.search(sentence) is not None
    clause_end, new_subject = (
        (ZH_CLAUSE_END, ZH_NEW_SUBJECT) if chinese else (EN_CLAUSE_END, EN_NEW_SUBJECT)
    )
    parts: list[list[int]] = []
    start = 0
    for piece in clause_end.split(sentence):
        if piece.strip():
            if not parts or new_subject.match(piece):
                parts.append([start, start + len(piece)])
            else:
                parts[-1][1] = start + len(piece)
        start += len(piece)
    matches = hit.where(sentence)
    if (0, len(sentence)) in matches:  # said as a whole
        return [span]
    chosen = [(s, e) for s, e in parts if any(s <= m[0] < e for m in matches)]
    return [(span[0] + s, span[0] + e) for s, e in chosen] or [span]


def erased(text: str, marks: dict[Span, str]) -> str:
    """`text` with each span replaced by its mark (or dropped: ""), overlapping spans as one,
    neighbouring marks merged."""
    pieces: list[str] = []
    position, last_mark = 0, None
    for (start, end), mark in sorted(marks.items()):
        if start < position:  # overlapping the span before: erase what it adds
            position = max(position, end)
            continue
        between = text[position:start]
        if not (last_mark == mark and not between.strip()):
            pieces += [between, mark]
        last_mark = mark
        position = end
    pieces.append(text[position:])
    return re.sub(r"[ \t]{2,}", " ", "".join(pieces)).strip()


def distinctive(words: set[str]) -> set[str]:
    """Words that say what a text is about: English stems of four letters or more, Chinese
    pairs without a common character."""
    return {
        word
        for word in words
        if (len(word) >= 4 and not HAN.search(word))
        or (HAN.search(word) and len(word) == 2 and not set(word) & COMMON_HAN)
    }


def retells_erased(memory: Memory, message: ConversationMessage, content_after: str) -> bool:
    """Whether a fact drawn from `message` retells what a forget erased of it ("The user started
    sertraline", from "…since I started sertraline", erased by a forget of the user's mental
    health): most of its telling words were in the sentences erased."""
    if memory.memory_type != MemoryType.FACT:
        return False
    own = distinctive(words_of(memory.content))
    removed = words_of(message.content) - words_of(content_after)
    return bool(own) and 2 * len(own & removed) >= len(own)
