"""What a forget request erases: worked out from what the user's memories and conversations
hold. A read; a dry run answers it as it is, the service (memories/services/forgetting.py)
applies it (docs/privacy.md).

- **Anchors.** The memories about a topic (topics.py: its names, its specific words, the kinds
  of information it names, the user's own where the topic is "my …"), the facts in the slots
  those kinds name, and the memories that mean it by their embeddings (FORGET_SEMANTIC_MARGIN
  above the relevance floor). A topic that points back ("that", "that password", 刚才说的) is
  looked for in what was just said: the earlier sentences of the asking message, then the
  session's earlier user turns, newest first. Forgetting memories by id anchors them and their
  older versions.
- **Whole or in part.** A fact, a trait or a keyed memory is forgotten whole. An episode or a
  document loses the sentences about the topic (and those going on about them: "It was
  devastating."), and is forgotten whole when nothing with content is left. An episode whose
  assistant context is about it loses the context, and a short answer to it.
- **Where it was said.** The message a forgotten memory came from loses the sentences that said
  it; the assistant's reply loses the sentences echoing it; an episode loses its quote of an
  assistant message that lost something.
- **What identifies it.** Numbers, e-mail addresses and names in what is forgotten
  (topics.Values: "742 Evergreen Terrace", "Alex") are erased wherever else they stand.
- **Messages** keep their place in the transcript: an erased sentence reads "[forgotten]" (the
  asking sentence was stored as "[forget request]").
"""

import itertools
import logging
import re
import uuid
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.conf import settings
from pgvector import HalfVector

from memories.embeddings import EmbeddingError, embedding_provider
from memories.extraction import EPISODE, content_free
from memories.forgetting.erasing import (
    EVERY_SENTENCE,
    FORGOTTEN,
    PLACEHOLDER,
    Hit,
    Span,
    distinctive,
    erased,
    memory_sentences,
    narrowed,
    retells_erased,
    says,
    text_spans,
    with_continuations,
    words_of,
)
from memories.forgetting.topics import Topic, Values, topic_read
from memories.models import (
    ConversationMessage,
    ConversationSession,
    Memory,
    MemorySource,
    MemoryType,
)
from memories.sentences import HAN
from memories.similarity_floors import CJK_CHARACTERS, SimilarityFloors, similarity_floors
from memories.statements import message_read
from memories.vectors import vector_cursor

log = logging.getLogger("neuromem.forget")

# How many earlier user turns of the session "that" may point back to.
TURNS_BACK = 20


class Reason:
    NAMES_NOTHING = "names_nothing"
    REFERS_TO_NOTHING = "refers_to_nothing"
    NOTHING_HELD = "nothing_held"


REASONS = {
    Reason.NAMES_NOTHING: (
        "The request names nothing specific, so nothing was forgotten. Name what to forget "
        '("my home address", "everything about Alex"); to erase everything held about the '
        "user, purge them (DELETE /api/v1/users/{user_id}/)."
    ),
    Reason.REFERS_TO_NOTHING: (
        "Nothing said earlier in the conversation is what the request points to, so nothing "
        "was forgotten."
    ),
    Reason.NOTHING_HELD: "Nothing held about the user is on that topic, so nothing was forgotten.",
}


@dataclass
class MemoryErasure:
    memory: Memory
    whole: bool
    content_after: str = ""  # in part: what stays
    metadata_after: Any = None  # in part: the metadata without what is forgotten; None: as is


@dataclass
class MessageErasure:
    message: ConversationMessage
    content_after: str


@dataclass
class ForgetPlan:
    user_id: str
    memories: dict[uuid.UUID, MemoryErasure] = field(default_factory=dict)
    messages: dict[uuid.UUID, MessageErasure] = field(default_factory=dict)
    sessions: dict[uuid.UUID, Any] = field(default_factory=dict)  # id → metadata after
    reason: str | None = None

    @property
    def empty(self) -> bool:
        return not self.memories and not self.messages and not self.sessions


@dataclass(frozen=True)
class Asking:
    """Where a conversation request was made: the message (stored with each asking sentence
    replaced by FORGET_REQUEST) and where those placeholders stand."""

    message: ConversationMessage
    spans: tuple[Span, ...]


# --- Reading text ------------------------------------------------------------------------------


def memory_erasure(memory: Memory, hit: Hit) -> MemoryErasure | None:
    """What erasing its sentences that `hit` leaves of the memory (None: none do, nor its
    metadata). An episode whose assistant context is about it loses the context, and the
    user's first sentence when that is a short answer to it ("What's your name?" → "It's
    Marcus"). Its metadata loses what is about it (metadata_erased)."""
    metadata = metadata_erased(memory.metadata, hit)
    metadata_after = None if metadata == memory.metadata else metadata
    context, own = memory_sentences(memory)
    about_context = any(hit(memory.content[slice(*span)]) for span in context)
    spans = {span for span in own if hit(memory.content[slice(*span)])}
    asked = context and QUESTION.search(memory.content[slice(*context[-1])])
    if about_context and asked and own and _short(memory.content[slice(*own[0])]):
        spans.add(own[0])
    if not spans and not about_context:
        if metadata_after is None:
            return None
        return MemoryErasure(
            memory, whole=False, content_after=memory.content, metadata_after=metadata_after
        )
    if memory.memory_type not in (MemoryType.EPISODIC, MemoryType.DOCUMENT):
        return MemoryErasure(memory, whole=True)
    spans = {
        part
        for span in with_continuations(memory.content, own, spans)
        for part in narrowed(memory.content, span, hit)
    }
    words_start = own[0][0] if own else len(memory.content)
    after = erased(
        memory.content[words_start:], {(s - words_start, e - words_start): "" for s, e in spans}
    )
    if not after or content_free(after):
        return MemoryErasure(memory, whole=True)
    kept = memory.content[:words_start]
    if about_context:  # "Assistant: <context> → User: …" becomes "User: …"
        kept = kept[kept.index(" → ") + len(" → ") :]
    return MemoryErasure(
        memory, whole=False, content_after=kept + after, metadata_after=metadata_after
    )


QUESTION = re.compile(r"[?？]\s*$|[吗呢]\W*$")
# A key's parts read as words: "ex:zebulon-quarrington" names Zebulon Quarrington.
KEY_SEPARATORS = re.compile(r"[-_:./]+")


def _filed_under(topic: Topic, memory: Memory) -> bool:
    """A memory whose key names the topic ("ex:zebulon-quarrington"): about it, whatever its
    words. The topic's own words only, not the values of what else is forgotten ("goals:2019"
    is no memory about a wedding in 2019)."""
    return memory.key is not None and topic.about(KEY_SEPARATORS.sub(" ", memory.key))


def metadata_erased(value: Any, hit: Hit) -> Any:
    """JSON (a memory's or a session's metadata) without what `hit` finds: a string about it
    becomes FORGOTTEN. Keys are a client's field names, kept."""
    if isinstance(value, str):
        return FORGOTTEN if hit(value) else value
    if isinstance(value, dict):
        return {key: metadata_erased(child, hit) for key, child in value.items()}
    if isinstance(value, list):
        return [metadata_erased(child, hit) for child in value]
    return value


def _short(sentence: str) -> bool:
    """A short answer: a few words ("It's Marcus Chen", "Yeah."), or a Chinese phrase."""
    sentence = re.sub(r"^(?:User: |用户：)", "", sentence.strip())
    if HAN.search(sentence):
        return len(re.sub(r"\W", "", sentence)) <= 10
    return len(sentence.split()) <= 5


class Holdings:
    """What is held about one user that a forget may touch: their memories (not forgotten), their
    messages, and which message each memory came from."""

    def __init__(self, user_id: str) -> None:
        self.memories = {
            memory.id: memory
            for memory in Memory.objects.filter(user_id=user_id, forgotten_at__isnull=True).only(
                "id",
                "user_id",
                "memory_type",
                "content",
                "metadata",
                "key",
                "version",
                "superseded_by",
            )
        }
        self.session_metadata = dict(
            ConversationSession.objects.filter(user_id=user_id)
            .exclude(metadata={})
            .values_list("id", "metadata")
        )
        self.messages = {
            message.id: message
            for message in ConversationMessage.objects.filter(user_id=user_id).order_by(
                "created_at", "id"
            )
        }
        self.came_from: dict[uuid.UUID, uuid.UUID] = {}  # memory → message
        self.said_in: dict[uuid.UUID, list[uuid.UUID]] = defaultdict(list)  # message → memories
        for memory_id, message_id in MemorySource.objects.filter(
            session_id__in={message.session_id for message in self.messages.values()},
            conversation_id__isnull=False,
        ).values_list("memory_id", "conversation_id"):
            if memory_id in self.memories:
                self.came_from[memory_id] = message_id
                self.said_in[message_id].append(memory_id)

    def with_older_versions(self, memory_ids: set[uuid.UUID]) -> set[uuid.UUID]:
        """The memories and every version they superseded."""
        superseded = defaultdict(list)
        for memory in self.memories.values():
            if memory.superseded_by:
                superseded[memory.superseded_by].append(memory.id)
        chain, todo = set(memory_ids), list(memory_ids)
        while todo:
            for older in superseded.get(todo.pop(), ()):
                if older not in chain:
                    chain.add(older)
                    todo.append(older)
        return chain


# --- Planning ----------------------------------------------------------------------------------


@dataclass
class _Found:
    """What a plan has found so far."""

    hits: dict[uuid.UUID, list[Hit]] = field(default_factory=lambda: defaultdict(list))
    whole: set[uuid.UUID] = field(default_factory=set)
    said: dict[uuid.UUID, list[Span]] = field(default_factory=lambda: defaultdict(list))
    topics: list[Topic] = field(default_factory=list)
    values: Values = field(default_factory=Values)
    reasons: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class TopicMeaning:
    """A topic's embedding and the relevance floors its similarities are measured against."""

    vector: np.ndarray
    floors: SimilarityFloors | None


def forget_plan(
    *,
    user_id: str,
    topics: Iterable[Topic] = (),
    memory_ids: Iterable[uuid.UUID] = (),
    asking: Asking | None = None,
    meanings: Mapping[str, TopicMeaning] | None = None,
) -> ForgetPlan:
    """What forgetting the topics (or the memories `memory_ids`) erases for the user (see the
    module's docstring). `asking` is the conversation message that asked, if one did;
    `meanings` the topics' embeddings and floors (by `Topic.said`; topic_meaning), for finding
    by meaning."""
    held = Holdings(user_id)
    found = _Found()
    found.whole |= held.with_older_versions(set(memory_ids) & held.memories.keys())
    for topic in topics:
        _anchor(topic, held, found, asking)
    for topic in found.topics:
        meaning = (meanings or {}).get(topic.said)
        margins = similarity_margins(user_id=user_id, meaning=meaning) if meaning else {}
        for memory in held.memories.values():
            if memory.key and (
                (_slot(memory.key) in topic.slots and topic.broad) or _filed_under(topic, memory)
            ):
                found.whole.add(memory.id)
            elif memory_erasure(memory, Hit(topic.spans)) is not None:
                found.hits[memory.id].append(Hit(topic.spans))
            elif _means(topic, memory, margins.get(memory.id)):
                found.hits[memory.id].append(_meant(topic, memory))
    erasures = _erasures(held, found)

    # What identifies what is forgotten, erased everywhere; where it was said, erased there.
    for erasure in list(erasures.values()):
        if erasure.whole:
            found.values |= Values.of(erasure.memory.content)
            _where_said(erasure.memory, held, found)
        else:
            _sentences_said(erasure, held, found)
    if found.values.items:
        for memory in held.memories.values():
            if memory_erasure(memory, Hit(found.values.spans)) is not None:
                found.hits[memory.id].append(Hit(found.values.spans))
    erasures = _erasures(held, found)

    about = Hit.any_of([Hit(found.values.spans), *(Hit(t.spans) for t in found.topics)])
    messages = _message_erasures(held, found, about)
    for message_id, erasure in messages.items():  # a fact retelling what they erased goes too
        for memory_id in held.said_in.get(message_id, ()):
            memory = held.memories.get(memory_id)
            if memory is not None and retells_erased(
                memory, erasure.message, erasure.content_after
            ):
                erasures[memory_id] = MemoryErasure(memory, whole=True)
    _contexts_erased(messages, held, erasures)
    sessions = {
        session_id: after
        for session_id, metadata in held.session_metadata.items()
        if (after := metadata_erased(metadata, about)) != metadata
    }
    plan = ForgetPlan(user_id=user_id, memories=erasures, messages=messages, sessions=sessions)
    if plan.empty:
        plan.reason = found.reasons[0] if found.reasons else Reason.NOTHING_HELD
    return plan


def similarity_margins(*, user_id: str, meaning: TopicMeaning) -> dict[uuid.UUID, float]:
    """How much more similar each of the user's embedded memories is to the topic than the
    relevance floor of its language (memories/similarity_floors.py): above 0, more than
    unrelated text usually is."""
    floors = meaning.floors
    if floors is None:
        return {}
    with vector_cursor() as cursor:
        cursor.execute(
            """
            SELECT id, content ~ %s, 1 - (embedding <=> %s)
            FROM memories
            WHERE user_id = %s AND embedding_status = 'ready' AND embedding IS NOT NULL
              AND forgotten_at IS NULL
            """,
            [f"[{CJK_CHARACTERS}]", HalfVector(meaning.vector), user_id],
            binary=True,
        )
        return {
            memory_id: similarity - (floors.floor_cjk if cjk else floors.floor_latin)
            for memory_id, cjk, similarity in cursor.fetchall()
            if similarity == similarity  # not NaN
        }


def topic_meaning(topic: Topic) -> TopicMeaning | None:
    """The topic's embedding and floors, for finding memories about it by meaning; None when it
    needs none (it names nothing, or points back) or the provider fails (then by words alone).
    Both call the provider (the floors' background, once a process): outside any transaction.
    Never cached: the topic may itself be what is to be forgotten."""
    if topic.vague or topic.anaphoric:
        return None
    try:
        vector = np.asarray(embedding_provider().embed_query(topic.said), dtype=np.float32)
    except EmbeddingError:
        log.warning("forget: the embedding provider failed; finding by words only", exc_info=True)
        return None
    return TopicMeaning(vector, similarity_floors(vector))


def _means(topic: Topic, memory: Memory, margin: float | None) -> bool:
    """Whether a memory no sentence of which is about the topic by its words means it: its
    embedding is FORGET_SEMANTIC_MARGIN above the relevance floor, and it is whose the topic is
    (the owner's, or not led by someone else for the user's own)."""
    return (
        margin is not None
        and margin >= settings.FORGET_SEMANTIC_MARGIN
        and topic.owners_named_in(memory.content)
    )


def _meant(topic: Topic, memory: Memory) -> Hit:
    """The sentences a memory that means the topic loses: those showing a concept of the topic,
    or every one when none does."""
    _, own = memory_sentences(memory)
    partly = Hit(topic.partly_spans)
    if any(partly(memory.content[slice(*span)]) for span in own):
        return partly
    return EVERY_SENTENCE


def _anchor(topic: Topic, held: Holdings, found: _Found, asking: Asking | None) -> None:
    """Anchor what `topic` names: a topic to look for everywhere, or what "that" points to."""
    if topic.vague:
        found.reasons.append(Reason.NAMES_NOTHING)
        return
    if not topic.anaphoric:
        found.topics.append(topic)
        return
    referent = _referent(topic, asking, held) if asking is not None else None
    if referent is None:
        if topic.words or topic.concepts:
            found.topics.append(topic.plain())  # "that password", with nothing before it
        else:
            found.reasons.append(Reason.REFERS_TO_NOTHING)
        return
    message, spans = referent
    text = " ".join(message.content[slice(*span)] for span in spans)
    if topic.person and (name := _person_named(text)) is not None:
        found.topics.append(topic_read(name))  # "him": everything about the one person named
        return
    found.said[message.id] += spans
    found.values |= Values.of(text)
    hit = says(words_of(text))
    for memory_id in held.said_in.get(message.id, ()):
        memory = held.memories.get(memory_id)
        if memory is not None and memory_erasure(memory, hit) is not None:
            found.hits[memory_id].append(hit)


def _person_named(text: str) -> str | None:
    """The one person `text` names ("Zebulon Quarrington moved to Berlin"), if it names one."""
    people = {s.name for s in message_read(text).subjects if s.kind == "person" and s.name}
    return people.pop() if len(people) == 1 else None


def _referent(
    topic: Topic, asking: Asking, held: Holdings
) -> tuple[ConversationMessage, list[Span]] | None:
    """What "that" points to: the sentences (about the topic's head, when it has one: "that
    password") of the asking message before the request, or else of the session's latest
    earlier user turn that has them."""
    head = topic.plain() if (topic.words or topic.concepts) else None
    asked_in = asking.message
    first_ask = min(start for start, _ in asking.spans)
    earlier = [
        message
        for message in reversed(list(held.messages.values()))
        if message.session_id == asked_in.session_id
        and message.role == "user"
        and message.id != asked_in.id
        and message.created_at <= asked_in.created_at
    ][:TURNS_BACK]
    before = [span for span in text_spans(asked_in.content) if span[1] <= first_ask]
    for message, spans in [(asked_in, before), *((m, text_spans(m.content)) for m in earlier)]:
        said = [
            span
            for span in spans
            if not content_free(message.content[slice(*span)])
            and not PLACEHOLDER.match(message.content[slice(*span)])
        ]
        hits = {s for s in said if head is None or head.about(message.content[slice(*s)])}
        if hits:
            return message, sorted(with_continuations(message.content, said, hits))
    return None


def _where_said(memory: Memory, held: Holdings, found: _Found) -> None:
    """The sentences of the message a forgotten memory came from that said it, and of that
    message's episode."""
    message = held.messages.get(held.came_from.get(memory.id))
    if message is None:
        return
    hit = says(words_of(memory.content))
    found.said[message.id] += [
        span for span in text_spans(message.content) if hit(message.content[slice(*span)])
    ]
    for sibling_id in held.said_in.get(message.id, ()):
        sibling = held.memories.get(sibling_id)
        if sibling is not None and sibling.memory_type == MemoryType.EPISODIC:
            found.hits[sibling_id].append(hit)


def _contexts_erased(
    messages: dict[uuid.UUID, MessageErasure],
    held: Holdings,
    erasures: dict[uuid.UUID, MemoryErasure],
) -> None:
    """An episode quotes the assistant message its user turn answered: where that message lost
    something, the episode loses its quote of it."""
    by_session = defaultdict(list)
    for message in held.messages.values():
        by_session[message.session_id].append(message)
    for turns in by_session.values():
        for said, answer in itertools.pairwise(turns):
            if said.role != "assistant" or said.id not in messages or answer.role != "user":
                continue
            for memory_id in held.said_in.get(answer.id, ()):
                memory = held.memories.get(memory_id)
                erasure = erasures.get(memory_id)
                if memory is None or (erasure is not None and erasure.whole):
                    continue
                content = erasure.content_after if erasure else memory.content
                if (episode := EPISODE.match(content)) is not None and episode["context"]:
                    after = content[episode.end("context") + len(" → ") :]
                    erasures[memory_id] = MemoryErasure(
                        memory,
                        whole=False,
                        content_after=after,
                        metadata_after=erasure.metadata_after if erasure else None,
                    )


def _sentences_said(erasure: MemoryErasure, held: Holdings, found: _Found) -> None:
    """The sentences an episode erased in part loses, in the message it came from."""
    message = held.messages.get(held.came_from.get(erasure.memory.id))
    if message is None:
        return
    _, own = memory_sentences(erasure.memory)
    removed = {
        _normal(erasure.memory.content[slice(*span)])
        for span in own
        if erasure.memory.content[slice(*span)] not in erasure.content_after
    }
    found.said[message.id] += [
        span
        for span in text_spans(message.content)
        if _normal(message.content[slice(*span)]) in removed
    ]


def _normal(sentence: str) -> str:
    return " ".join(sentence.split()).strip(" .!?。！？")


def _erasures(held: Holdings, found: _Found) -> dict[uuid.UUID, MemoryErasure]:
    erasures = {
        memory_id: MemoryErasure(held.memories[memory_id], whole=True) for memory_id in found.whole
    }
    for memory_id, hits in found.hits.items():
        if memory_id in erasures:
            continue
        erasure = memory_erasure(held.memories[memory_id], Hit.any_of(hits))
        if erasure is not None:
            erasures[memory_id] = erasure
    return erasures


def _message_erasures(held: Holdings, found: _Found, about: Hit) -> dict[uuid.UUID, MessageErasure]:
    erasures = {}
    erased_before: str | None = None  # what the user's previous message lost, for the reply
    for message in held.messages.values():
        spans = set(found.said.get(message.id, ()))
        sentences = text_spans(message.content)
        for span in sentences:
            if about(message.content[slice(*span)]):
                spans.update(narrowed(message.content, span, about))
        if message.role == "assistant" and erased_before:
            # The reply to what was forgotten, where it echoes it ("Reykjavik in winter!").
            echoes = distinctive(words_of(erased_before))
            spans |= {s for s in sentences if echoes & words_of(message.content[slice(*s)])}
        spans = {
            span
            for span in with_continuations(message.content, sentences, spans)
            if not PLACEHOLDER.match(message.content[slice(*span)])
        }
        if message.role == "user":
            erased_before = " ".join(message.content[slice(*span)] for span in spans)
        if spans:
            marks = dict.fromkeys(spans, FORGOTTEN)
            erasures[message.id] = MessageErasure(message, erased(message.content, marks))
    return erasures


def _slot(key: str) -> str:
    """A key's slot: `plan:deadline:report` → `plan:deadline`."""
    return ":".join(key.split(":")[:2])
