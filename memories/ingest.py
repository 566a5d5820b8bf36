"""Conversation sessions and their messages; memories from what users say: the facts it
states, and the turn itself as an episode; what it asks to forget."""

import re
import uuid
from collections import Counter
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import F, Min
from django.utils import timezone

from core.access import Caller, user_access_check
from core.db.actor import audit_actor
from core.errors import Conflict, Invalid, NotFound
from core.validation import json_problem, user_id_problem, validated
from memories.extraction import (
    Extraction,
    ExtractionError,
    RuleBasedExtractor,
    content_free,
    episode_content,
    extractor,
    forget_requests,
)
from memories.forgetting.erasing import FORGET_REQUEST
from memories.forgetting.plan import Asking
from memories.forgetting.topics import topic_read
from memories.graph.services import (
    GraphChange,
    graph_statements_record,
    graph_values_ended,
    memories_said_wrong,
    memories_subject_set,
)
from memories.models import (
    ConversationMessage,
    ConversationSession,
    Memory,
    MemoryType,
)
from memories.predicates import latest_q
from memories.redaction import Redacted, Span, redact, redact_json, redact_spans
from memories.services import (
    MemoryInput,
    Operation,
    WriteResult,
    content_md5,
    memory_add,
    memory_supersede,
)
from memories.services.forgetting import ForgetOutcome, conversation_forget, topic_meanings
from memories.services.writes import lock_memory_writes
from memories.signals import session_ended
from memories.statements import Statement
from memories.statements.ends import things_given_up, values_said_ended, values_said_wrong


def session_open(
    *, caller: Caller, user_id: str, metadata: dict[str, Any] | None = None
) -> ConversationSession:
    user_access_check(caller=caller, user_id=user_id, write=True)
    validated(user_id=user_id_problem(user_id), metadata=json_problem(metadata or {}))
    metadata, _ = redact_json(metadata or {})
    return ConversationSession.objects.create(user_id=user_id, metadata=metadata)


def session_get(*, caller: Caller, session_id: uuid.UUID) -> ConversationSession:
    """The session, or NotFound — also when its end user is one `caller` may not read."""
    session = ConversationSession.objects.filter(pk=session_id).first()
    try:
        if session is not None:
            user_access_check(caller=caller, user_id=session.user_id, write=False)
            return session
    except NotFound:
        pass  # said as for a missing session: the message must not name the user
    raise NotFound(f"Session '{session_id}' not found.")


def session_end(*, session: ConversationSession, caller: Caller) -> ConversationSession:
    """Close the session and say so (`session_ended`: reflection queues a cycle for its user).
    Ending an ended session changes nothing."""
    user_access_check(caller=caller, user_id=session.user_id, write=True)
    with transaction.atomic():
        ended = ConversationSession.objects.filter(pk=session.pk, ended_at__isnull=True).update(
            ended_at=timezone.now()
        )
        if ended:
            session_ended.send(sender=ConversationSession, caller=caller, user_id=session.user_id)
    session.refresh_from_db()
    return session


# Below an extracted fact's importance: the fact a turn states outranks the turn itself.
EPISODE_IMPORTANCE = 0.4


def _session_takes(*, session: ConversationSession, sent_at: datetime | None) -> None:
    """The session takes a message dated `sent_at`: it has not ended, and the date keeps its
    turns in order."""
    _sent_at_check(session=session, sent_at=sent_at)
    if session.ended_at is not None:
        raise Conflict("This session has ended; open a new one.", field="session_id")


def _sent_at_check(*, session: ConversationSession, sent_at: datetime | None) -> None:
    if sent_at is None:
        return  # now, once the message's locks are held
    if sent_at > timezone.now():
        raise Invalid("A message cannot be sent in the future.", field="sent_at")
    last = session.messages.order_by("-created_at").values_list("created_at", flat=True).first()
    if last is not None and sent_at < last:
        raise Invalid(
            "A message cannot be dated before the session's last message.", field="sent_at"
        )


@dataclass(frozen=True)
class MessageAdded:
    """A stored message and what it did: the memories written (in the order said, the
    episode last), each forget request's outcome, and what was redacted from it."""

    message: ConversationMessage
    memories: list[WriteResult]
    forgets: list[ForgetOutcome]
    redactions: Counter[str]


def session_message_add(
    *,
    session: ConversationSession,
    role: str,
    content: str,
    caller: Caller,
    sent_at: datetime | None = None,
) -> MessageAdded:
    """Store a message. For a user's message, write the facts it states and honour its
    corrections and forget requests, then keep the turn itself as an episode (the user's
    words with the assistant message they answer, dated by the message) unless it carries no
    content or asks to forget something. Every memory written has provenance
    (memory_sources: session and message; the session in source_episode_ids).

    Secrets are redacted before anything else sees the message (the extractor included), and
    each sentence asking to forget is stored as "[forget request]" (it may name what it asks
    to forget). The extractor (an LLM, for EXTRACTOR=llm) is asked first, with no transaction
    open; then the message, its memories and its forgets are written in one.

    `sent_at` dates a message said earlier (importing a past conversation); it must not be
    in the future nor before the session's last message, so the turns stay in order."""
    user_access_check(caller=caller, user_id=session.user_id, write=True)
    _session_takes(session=session, sent_at=sent_at)
    redacted = redact(content)
    extractions: list[Extraction] = []
    status = "skipped"
    replying_to = ""
    if role == "user":
        replying_to = assistant_turn_before(session=session)
        reader = extractor()
        try:
            extractions = reader.extract(redacted.text, replying_to=replying_to)
            status = "done"
        except ExtractionError:
            status = "failed"  # the message (and its episode) is kept either way
        if not isinstance(reader, RuleBasedExtractor):
            extractions = _with_rule_forgets(redacted.text, extractions)
        redacted, extractions = _llm_secrets_redacted(redacted, extractions)
    extractions = _restatements_dropped(extractions)
    forgets_asked = [e for e in extractions if e.action == "forget"]
    topics = {e.topic: topic_read(e.topic) for e in forgets_asked}
    meanings = topic_meanings(list(topics.values()))  # the embedding provider: no transaction
    stored = _requests_marked(redacted.text, forgets_asked)
    with audit_actor(caller.name):
        # Every memory-write lock this message may need, first and in one sorted go: locks
        # taken one write at a time (a fact, then a slot held by a document, then the episode)
        # could deadlock with another writer taking them in another order.
        lock_memory_writes({(session.user_id, kind) for kind in MemoryType.values})
        # Its row locked (an end waits for this message, as this one for an end), and read
        # again: purged, ended or written to while this message was read.
        held = ConversationSession.objects.select_for_update().filter(pk=session.pk).first()
        if held is None:
            raise NotFound("Session not found.")
        session.ended_at = held.ended_at
        _session_takes(session=session, sent_at=sent_at)
        message = ConversationMessage.objects.create(
            session=session,
            user_id=session.user_id,
            role=role,
            content=stored,
            extraction_status=status,
            # Stamped under the locks: a forget or a purge that committed first is earlier.
            created_at=sent_at or timezone.now(),
            redactions=dict(redacted.counts) or None,
        )
        results: list[WriteResult] = []
        remembered: list[tuple[Extraction, WriteResult]] = []
        forgets: list[ForgetOutcome] = []
        for extraction in extractions:
            if extraction.action == "remember":
                result = remember(
                    session=session, message=message, extraction=extraction, caller=caller
                )
                results.append(result)
                remembered.append((extraction, result))
            elif extraction.action == "forget":
                asking = _asking(message, len(forgets))
                forgets.append(
                    conversation_forget(
                        caller=caller,
                        message=message,
                        asking=asking,
                        topic=topics[extraction.topic],
                        meanings=meanings,
                    )
                )
        episode = None
        if role == "user" and not forgets_asked and not content_free(stored):
            episode = episode_add(
                session=session, message=message, replying_to=replying_to, caller=caller
            )
            results.append(episode)
        if forgets:
            # What the message stated and then asked to forget goes to no graph edge.
            erased = {memory_id for outcome in forgets for memory_id in outcome.plan.memories}
            remembered = [(e, result) for e, result in remembered if result.memory.id not in erased]
        if remembered:
            statements_record(
                user_id=session.user_id,
                remembered=remembered,
                episode=episode,
                at=message.created_at,
                caller=caller,
            )
        if role == "user":
            _ends_recorded(user_id=session.user_id, message=message, results=results)
    return MessageAdded(message, results, forgets, redacted.counts)


def _ends_recorded(
    *, user_id: str, message: ConversationMessage, results: list[WriteResult]
) -> None:
    """What the user's message says has ended or was wrong leaves current recall: a held value
    it names as ended ("思域卖了"), earlier memories stating what it corrects ("not the 14th")."""
    own = {result.memory.id for result in results}
    if ended := values_said_ended(message.content):
        graph_values_ended(
            user_id=user_id,
            things=ended,
            given_up=things_given_up(message.content),
            at=message.created_at,
            keep=own,
        )
    if wrong := values_said_wrong(message.content):
        memories_said_wrong(user_id=user_id, wrong=wrong, at=message.created_at, keep=own)


def statements_record(
    *,
    user_id: str,
    remembered: list[tuple[Extraction, WriteResult]],
    episode: WriteResult | None,
    at: datetime,
    caller: Caller,
) -> GraphChange:
    """The values a message's facts state, into the memory graph (each stated by its fact and
    the message's episode), and each fact's subject entity named on it."""
    stated = [
        (statement, [result.memory.id, *([episode.memory.id] if episode else [])])
        for extraction, result in remembered
        for statement in extraction.statements
    ]
    change = graph_statements_record(
        user_id=user_id,
        statements=stated,
        at=at,
        actor=caller.name,
        subjects=[extraction.subject for extraction, _ in remembered],
    )
    memories_subject_set(
        subjects={
            result.memory.id: change.entities[extraction.subject].id
            for extraction, result in remembered
            if extraction.subject in change.entities  # not a thing the graph does not hold
        }
    )
    return change


def _with_rule_forgets(text: str, extractions: list[Extraction]) -> list[Extraction]:
    """The extractor's items, with every forget request the rules find that it did not name
    (an LLM that missed or failed one): a request to forget is never dropped."""
    named = {e.request for e in extractions if e.action == "forget"}
    return extractions + [e for e in forget_requests(text) if e.request not in named]


def _restatements_dropped(extractions: list[Extraction]) -> list[Extraction]:
    """Without a bare "that" / "it" that only restates a request made before it in the same
    message ("Please delete my medical information. I don't want it stored.")."""
    kept, asked = [], False
    for extraction in extractions:
        if extraction.action == "forget":
            topic = topic_read(extraction.topic)
            if asked and topic.anaphoric and not (topic.words or topic.concepts):
                continue
            asked = True
        kept.append(extraction)
    return kept


def _secrets_named(text: str, secrets: list[Extraction]) -> Redacted:
    """`text` with the secrets the LLM extractor named (`sensitive` items) redacted."""
    return redact_spans(
        text,
        [
            Span(match.start(), match.end(), secret.kind)
            for secret in secrets
            for match in re.finditer(re.escape(secret.content), text)
        ],
    )


def _llm_secrets_redacted(
    redacted: Redacted, extractions: list[Extraction]
) -> tuple[Redacted, list[Extraction]]:
    """The message, and the facts the extractor wrote from it, with the secrets the LLM
    extractor named redacted too (the rules ran first, on the message)."""
    secrets = [e for e in extractions if e.action == "sensitive"]
    if not secrets:
        return redacted, extractions
    again = _secrets_named(redacted.text, secrets)
    facts = [
        replace(
            e,
            content=_secrets_named(e.content, secrets).text,
            # A value holding a secret says nothing worth a graph edge: dropped, not redacted.
            statements=tuple(s for s in e.statements if not _holds_secret(s, secrets)),
        )
        if e.action == "remember"
        else e
        for e in extractions
    ]
    return Redacted(again.text, redacted.counts + again.counts), facts


def _holds_secret(statement: Statement, secrets: list[Extraction]) -> bool:
    named = [statement.value, statement.subject.name]
    if statement.value_entity is not None:
        named.append(statement.value_entity.name)
    return any(secret.content and secret.content in text for secret in secrets for text in named)


def _requests_marked(text: str, requests: list[Extraction]) -> str:
    """The message as stored: each sentence asking to forget replaced by FORGET_REQUEST."""
    for request in requests:
        if request.request and request.request in text:
            text = text.replace(request.request, FORGET_REQUEST, 1)
    return text


def _asking(message: ConversationMessage, index: int) -> Asking:
    """Where the message's `index`-th forget request stands: its "[forget request]" in the
    stored text as it is now (an earlier request may have erased some of it), or the end when
    the request could not be placed."""
    message.refresh_from_db(fields=["content"])
    marks = [m.span() for m in re.finditer(re.escape(FORGET_REQUEST), message.content)]
    end = len(message.content)
    return Asking(message=message, spans=(marks[index] if index < len(marks) else (end, end),))


def assistant_turn_before(*, session: ConversationSession) -> str:
    """The assistant message a new user message answers: the session's last message, when
    it is the assistant's; else ""."""
    last = session.messages.order_by("-created_at").values("role", "content").first()
    return last["content"] if last and last["role"] == "assistant" else ""


def episode_add(
    *,
    session: ConversationSession,
    message: ConversationMessage,
    replying_to: str,
    caller: Caller,
) -> WriteResult:
    """Keep a user turn as an episodic memory (format: `episode_content`)."""
    return memory_add(
        item=MemoryInput(
            user_id=session.user_id,
            content=episode_content(message.content, replying_to=replying_to),
            memory_type=MemoryType.EPISODIC,
            importance=EPISODE_IMPORTANCE,
            valid_at=message.created_at,
            recorded_at=message.created_at,
            session_id=session.id,
            conversation_id=message.id,
        ),
        caller=caller,
    )


def _past_value_add(*, fact: MemoryInput, caller: Caller) -> WriteResult:
    """A slot's value said before its current one began (an import of older messages): it held
    from its message until the slot's next value began, and an earlier value it falls inside
    ends where it begins, so that "as of" any instant finds one value of the slot. (An expired
    version's end moves too: what ended it is learnt only now.)"""
    said_at = fact.valid_at
    values = Memory.objects.filter(
        user_id=fact.user_id, key=fact.key, forgotten_at__isnull=True, valid_at__isnull=False
    )
    ended_by = values.filter(valid_at__gt=said_at).aggregate(first=Min("valid_at"))["first"]
    cut = values.filter(valid_at__lt=said_at, invalid_at__gt=said_at)
    now = timezone.now()
    cut.filter(latest_q()).update(invalid_at=said_at, updated_at=now, version=F("version") + 1)
    cut.update(invalid_at=said_at, updated_at=now)  # the expired versions keep their number
    return memory_add(item=replace(fact, invalid_at=ended_by), caller=caller)


def _held_elsewhere(fact: MemoryInput) -> Memory | None:
    """A current fact of the user's holding the same words under another key or none (one
    written over the API): said again, it is that memory; the slot's key would be a Conflict
    there, and a message is never refused for what it states."""
    if fact.key is None:
        return None
    return (
        Memory.objects.current()
        .filter(
            user_id=fact.user_id,
            memory_type=MemoryType.FACT,
            content_hash=content_md5(fact.content),
        )
        .exclude(key=fact.key)
        .first()
    )


def remember(
    *,
    session: ConversationSession,
    message: ConversationMessage,
    extraction: Extraction,
    caller: Caller,
) -> WriteResult:
    """Write one extracted fact; a new value for a slot supersedes the current one. A value
    said before the current one held (an import of older messages) is its past: written
    already ended when the current value began."""
    fact = MemoryInput(
        user_id=session.user_id,
        content=extraction.content,
        memory_type=MemoryType.FACT,
        importance=extraction.importance,
        valid_at=message.created_at,
        recorded_at=message.created_at,
        key=extraction.slot,
        session_id=session.id,
        conversation_id=message.id,
    )
    current = (
        Memory.objects.current()
        .filter(user_id=session.user_id, key=extraction.slot)
        .order_by("-created_at")
        .first()
        if extraction.slot
        else None
    )
    if current is None:
        if (held := _held_elsewhere(fact)) is not None:
            return WriteResult(Operation.NOOP, held)
        return memory_add(item=fact, caller=caller)
    if current.content_hash == content_md5(extraction.content):
        return WriteResult(Operation.NOOP, current)
    if current.valid_at is not None and message.created_at < current.valid_at <= timezone.now():
        return _past_value_add(fact=fact, caller=caller)
    successor = memory_supersede(
        memory=current,
        content=extraction.content,
        caller=caller,
        session_id=session.id,
        conversation_id=message.id,
        valid_at=message.created_at,
        invalid_at=message.created_at,  # the old value stopped being true then
        recorded_at=message.created_at,
        # The slot moves even where a fact without it already says the new value.
        unique_content=False,
    )
    current.refresh_from_db()
    return WriteResult(Operation.UPDATE, successor, superseded=current)
