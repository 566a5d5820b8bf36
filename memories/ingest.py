"""Conversation sessions and their messages; memories from what users say: the facts it
states, and the turn itself as an episode."""

import uuid
from datetime import datetime
from functools import reduce
from operator import and_, or_
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from memories.extraction import (
    Extraction,
    ExtractionError,
    asks_to_forget,
    content_free,
    episode_content,
    extractor,
)
from memories.models import (
    ConversationMessage,
    ConversationSession,
    Memory,
    MemorySource,
    MemoryType,
)
from memories.services import (
    MemoryInput,
    Operation,
    WriteResult,
    content_md5,
    memory_add,
    memory_delete,
    memory_supersede,
)
from memories.services.writes import lock_memory_writes
from neuromem_site.access import Caller, user_access_check
from neuromem_site.db.actor import audit_actor
from neuromem_site.errors import Conflict, Invalid, NotFound
from neuromem_site.validation import json_problem, user_id_problem, validated
from reflection.models import ReflectionTrigger
from reflection.services.cycles import reflection_cycle_request


def session_open(
    *, caller: Caller, user_id: str, metadata: dict[str, Any] | None = None
) -> ConversationSession:
    user_access_check(caller=caller, user_id=user_id, write=True)
    validated(user_id=user_id_problem(user_id), metadata=json_problem(metadata or {}))
    return ConversationSession.objects.create(user_id=user_id, metadata=metadata or {})


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
    """Close the session and queue a reflection cycle for its user (`session_end`). Ending an
    ended session changes nothing."""
    user_access_check(caller=caller, user_id=session.user_id, write=True)
    with transaction.atomic():
        ended = ConversationSession.objects.filter(pk=session.pk, ended_at__isnull=True).update(
            ended_at=timezone.now()
        )
        if ended:
            reflection_cycle_request(
                caller=caller, user_id=session.user_id, trigger_type=ReflectionTrigger.SESSION_END
            )
    session.refresh_from_db()
    return session


# Below an extracted fact's importance: the fact a turn states outranks the turn itself.
EPISODE_IMPORTANCE = 0.4


def _checked_sent_at(*, session: ConversationSession, sent_at: datetime | None) -> datetime:
    now = timezone.now()
    if sent_at is None:
        return now
    if sent_at > now:
        raise Invalid("A message cannot be sent in the future.", field="sent_at")
    last = session.messages.order_by("-created_at").values_list("created_at", flat=True).first()
    if last is not None and sent_at < last:
        raise Invalid(
            "A message cannot be dated before the session's last message.", field="sent_at"
        )
    return sent_at


def session_message_add(
    *,
    session: ConversationSession,
    role: str,
    content: str,
    caller: Caller,
    sent_at: datetime | None = None,
) -> tuple[ConversationMessage, list[WriteResult]]:
    """Store a message. For a user's message, write the facts it states and honour its
    corrections and forget requests, then keep the turn itself as an episode (the user's
    words with the assistant message they answer, dated by the message) unless it carries no
    content or asks to forget something. Every memory written has provenance
    (memory_sources: session and message; the session in source_episode_ids).

    The extractor (an LLM, for EXTRACTOR=llm) is asked first, with no transaction open; then
    the message and its memories are written in one.

    `sent_at` dates a message said earlier (importing a past conversation); it must not be
    in the future nor before the session's last message, so the turns stay in order."""
    user_access_check(caller=caller, user_id=session.user_id, write=True)
    sent_at = _checked_sent_at(session=session, sent_at=sent_at)
    if session.ended_at is not None:
        raise Conflict("This session has ended; open a new one.", field="session_id")
    extractions: list[Extraction] = []
    status = "skipped"
    replying_to = ""
    if role == "user":
        replying_to = assistant_turn_before(session=session)
        try:
            extractions = extractor().extract(content, replying_to=replying_to)
            status = "done"
        except ExtractionError:
            status = "failed"  # the message (and its episode) is kept either way
    with audit_actor(caller.name):
        # Every memory-write lock this message may need, first and in one sorted go: locks
        # taken one write at a time (a fact, its key, then the episode) could deadlock with
        # another writer taking them in another order.
        lock_memory_writes(
            {(session.user_id, kind) for kind in (MemoryType.FACT, MemoryType.EPISODIC)}
        )
        message = ConversationMessage.objects.create(
            session=session,
            user_id=session.user_id,
            role=role,
            content=content,
            extraction_status=status,
            created_at=sent_at,
        )
        results: list[WriteResult] = []
        for extraction in extractions:
            if extraction.action == "forget":
                results += memories_forget(
                    user_id=session.user_id,
                    extraction=extraction,
                    caller=caller,
                    at=message.created_at,
                )
            else:
                results.append(
                    remember(session=session, message=message, extraction=extraction, caller=caller)
                )
        forgets = asks_to_forget(content) or any(e.action == "forget" for e in extractions)
        if role == "user" and not forgets and not content_free(content):
            results.append(
                episode_add(
                    session=session, message=message, replying_to=replying_to, caller=caller
                )
            )
    return message, results


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


def remember(
    *,
    session: ConversationSession,
    message: ConversationMessage,
    extraction: Extraction,
    caller: Caller,
) -> WriteResult:
    """Write one extracted fact; a new value for a slot supersedes the current one."""
    current = (
        Memory.objects.current()
        .filter(user_id=session.user_id, key=extraction.slot)
        .order_by("-created_at")
        .first()
        if extraction.slot
        else None
    )
    if current is not None:
        if current.content_hash == content_md5(extraction.content):
            return WriteResult(Operation.NOOP, current)
        successor = memory_supersede(
            memory=current,
            content=extraction.content,
            caller=caller,
            session_id=session.id,
            conversation_id=message.id,
            valid_at=message.created_at,
            invalid_at=message.created_at,  # the old value stopped being true then
            recorded_at=message.created_at,
        )
        current.refresh_from_db()
        return WriteResult(Operation.UPDATE, successor, superseded=current)
    return memory_add(
        item=MemoryInput(
            user_id=session.user_id,
            content=extraction.content,
            memory_type=MemoryType.FACT,
            importance=extraction.importance,
            valid_at=message.created_at,
            recorded_at=message.created_at,
            key=extraction.slot,
            session_id=session.id,
            conversation_id=message.id,
        ),
        caller=caller,
    )


def memories_forget(
    *, user_id: str, extraction: Extraction, caller: Caller, at: datetime | None = None
) -> list[WriteResult]:
    """Soft-delete the user's current memories about what `extraction` asks to forget.

    With a slot: the slot's facts, the episodes of the messages any version of them came
    from, and whatever mentions one of the topic words. Without: whatever mentions all of the
    topic words ("forget that I love spicy food": the fact and the turns that said it)."""
    words = [Q(content__icontains=word) for word in extraction.topic_words]
    if extraction.slot:
        slot_messages = MemorySource.objects.filter(
            memory_id__in=Memory.objects.filter(user_id=user_id, key=extraction.slot).values("id")
        ).values("conversation_id")
        their_episodes = MemorySource.objects.filter(conversation_id__in=slot_messages).values(
            "memory_id"
        )
        conditions = [
            Q(key=extraction.slot),
            Q(memory_type=MemoryType.EPISODIC, id__in=their_episodes),
            *words,
        ]
        matching = reduce(or_, conditions)
    elif words:
        matching = reduce(and_, words)
    else:
        return []
    return [
        WriteResult(Operation.DELETE, memory_delete(memory=memory, caller=caller, at=at))
        for memory in Memory.objects.current().filter(matching, user_id=user_id)
    ]
