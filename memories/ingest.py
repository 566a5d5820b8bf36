"""Conversation sessions and their messages; memories extracted from what users say."""

import uuid
from functools import reduce
from operator import or_
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
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
from neuromem_site.api.envelope import Conflict, NotFound
from neuromem_site.api.models import ApiClient
from neuromem_site.validation import json_problem, user_id_problem


def session_open(*, user_id: str, metadata: dict[str, Any] | None = None) -> ConversationSession:
    problems = {"user_id": user_id_problem(user_id), "metadata": json_problem(metadata or {})}
    for name, problem in problems.items():
        if problem is not None:
            raise ValidationError({name: [problem]})
    return ConversationSession.objects.create(user_id=user_id, metadata=metadata or {})


def session_get_for_client(*, client: ApiClient, session_id: uuid.UUID) -> ConversationSession:
    session = ConversationSession.objects.filter(pk=session_id).first()
    if session is None or not client.may_access_user(session.user_id):
        raise NotFound(f"Session '{session_id}' not found.")
    return session


def session_end(*, session: ConversationSession) -> ConversationSession:
    """Close the session. (Reflection on `session_end` arrives with the reflection engine.)"""
    ConversationSession.objects.filter(pk=session.pk, ended_at__isnull=True).update(
        ended_at=timezone.now()
    )
    session.refresh_from_db()
    return session


@transaction.atomic
def session_message_add(
    *, session: ConversationSession, role: str, content: str, actor: str
) -> tuple[ConversationMessage, list[WriteResult]]:
    """Store a message; for a user's message, write what it says worth remembering, with
    provenance (memory_sources, source_episode_ids), corrections and forget requests."""
    if session.ended_at is not None:
        raise Conflict("This session has ended; open a new one.", field="session_id")
    message = ConversationMessage.objects.create(
        session=session,
        user_id=session.user_id,
        role=role,
        content=content,
        extraction_status="done" if role == "user" else "skipped",
    )
    results: list[WriteResult] = []
    if role == "user":
        try:
            extractions = extractor().extract(content)
        except ExtractionError:
            # The message is kept either way; a failed extraction is visible on it.
            message.extraction_status = "failed"
            message.save(update_fields=["extraction_status"])
            return message, results
        for extraction in extractions:
            if extraction.action == "forget":
                results += memories_forget(
                    user_id=session.user_id, extraction=extraction, actor=actor
                )
            else:
                results.append(
                    remember(session=session, message=message, extraction=extraction, actor=actor)
                )
    return message, results


def remember(
    *,
    session: ConversationSession,
    message: ConversationMessage,
    extraction: Extraction,
    actor: str,
) -> WriteResult:
    """Write one extracted memory; a new value for a slot supersedes the current one."""
    current = (
        Memory.objects.filter(user_id=session.user_id, key=extraction.slot, expired_at__isnull=True)
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
            actor=actor,
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
        actor=actor,
    )


def memories_forget(*, user_id: str, extraction: Extraction, actor: str) -> list[WriteResult]:
    """Soft-delete the user's current memories in the slot or mentioning the topic."""
    conditions = [Q(content__icontains=word) for word in extraction.topic_words]
    if extraction.slot:
        conditions.append(Q(key=extraction.slot))
    if not conditions:
        return []
    matching = Memory.objects.filter(
        reduce(or_, conditions), user_id=user_id, expired_at__isnull=True
    )
    return [
        WriteResult(Operation.DELETE, memory_delete(memory=memory, actor=actor))
        for memory in matching
    ]
