"""Conversation sessions and their messages; memories extracted from what users say."""

import uuid
from functools import reduce
from operator import or_
from typing import Any

from django.db.models import Q
from django.utils import timezone

from memories.extraction import Extraction, ExtractionError, extractor
from memories.models import ConversationMessage, ConversationSession, Memory
from memories.services import (
    MemoryInput,
    Operation,
    WriteResult,
    content_md5,
    memory_add,
    memory_delete,
    memory_supersede,
)
from neuromem_site.access import Caller, user_access_check
from neuromem_site.db.actor import audit_actor
from neuromem_site.errors import Conflict, NotFound
from neuromem_site.validation import json_problem, user_id_problem, validated


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
    """Close the session. (Reflection on `session_end` is planned, with the reflection engine.)"""
    user_access_check(caller=caller, user_id=session.user_id, write=True)
    ConversationSession.objects.filter(pk=session.pk, ended_at__isnull=True).update(
        ended_at=timezone.now()
    )
    session.refresh_from_db()
    return session


def session_message_add(
    *, session: ConversationSession, role: str, content: str, caller: Caller
) -> tuple[ConversationMessage, list[WriteResult]]:
    """Store a message; for a user's message, write what it says worth remembering, with
    provenance (memory_sources, source_episode_ids), corrections and forget requests.

    The extractor (an LLM, for EXTRACTOR=llm) is asked first, with no transaction open; then
    the message and its memories are written in one."""
    user_access_check(caller=caller, user_id=session.user_id, write=True)
    if session.ended_at is not None:
        raise Conflict("This session has ended; open a new one.", field="session_id")
    extractions: list[Extraction] = []
    status = "skipped"
    if role == "user":
        try:
            extractions, status = extractor().extract(content), "done"
        except ExtractionError:
            status = "failed"  # the message is kept either way; the failure shows on it
    with audit_actor(caller.name):
        message = ConversationMessage.objects.create(
            session=session,
            user_id=session.user_id,
            role=role,
            content=content,
            extraction_status=status,
        )
        results: list[WriteResult] = []
        for extraction in extractions:
            if extraction.action == "forget":
                results += memories_forget(
                    user_id=session.user_id, extraction=extraction, caller=caller
                )
            else:
                results.append(
                    remember(session=session, message=message, extraction=extraction, caller=caller)
                )
    return message, results


def remember(
    *,
    session: ConversationSession,
    message: ConversationMessage,
    extraction: Extraction,
    caller: Caller,
) -> WriteResult:
    """Write one extracted memory; a new value for a slot supersedes the current one."""
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
        )
        current.refresh_from_db()
        return WriteResult(Operation.UPDATE, successor, superseded=current)
    return memory_add(
        item=MemoryInput(
            user_id=session.user_id,
            content=extraction.content,
            memory_type=extraction.memory_type,
            importance=extraction.importance,
            key=extraction.slot,
            session_id=session.id,
            conversation_id=message.id,
        ),
        caller=caller,
    )


def memories_forget(*, user_id: str, extraction: Extraction, caller: Caller) -> list[WriteResult]:
    """Soft-delete the user's current memories in the slot or mentioning the topic."""
    conditions = [Q(content__icontains=word) for word in extraction.topic_words]
    if extraction.slot:
        conditions.append(Q(key=extraction.slot))
    if not conditions:
        return []
    matching = Memory.objects.current().filter(reduce(or_, conditions), user_id=user_id)
    return [
        WriteResult(Operation.DELETE, memory_delete(memory=memory, caller=caller))
        for memory in matching
    ]
