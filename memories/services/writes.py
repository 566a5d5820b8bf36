"""Writes to memories: the operation model, versions, optimistic locking.

A write is a NOOP when the user already has a current memory of that type with the same
content, an UPDATE (supersede) when a current one is more similar than DEDUP_SIMILARITY,
otherwise an ADD. Writes for one user and memory type are serialised by a transaction-scoped
advisory lock, so concurrent identical writes make one row. Every service takes the Caller it
acts for: it decides which end users the write may touch, and names the audit log's actor.
"""

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.db.models.functions import Greatest
from django.utils import timezone

from core.access import SYSTEM, Caller, user_access_check
from core.db.actor import audit_actor
from core.db.locks import LockNamespace, xact_lock
from core.errors import Conflict, DomainError, Forbidden, Invalid, NotFound
from core.validation import (
    embedding_problem,
    json_problem,
    text_problem,
    user_id_problem,
    validated,
)
from memories.models import (
    ConversationMessage,
    ConversationSession,
    EmbeddingStatus,
    Memory,
    MemoryLink,
    MemorySource,
    MemoryType,
)
from memories.predicates import latest_q
from memories.redaction import redact, redact_json
from memories.services.dedup import (
    Candidate,
    near_duplicates,
    near_duplicates_by_meaning,
    near_duplicates_in_batch,
    with_lexical_vectors,
)
from memories.services.embedding_rebuild import embeddings_rebuild_unfinished
from memories.services.keys import key_problem, keys_taken, lock_keys
from memories.services.rows import content_md5, memory_rows_insert
from memories.traits import TRAIT_METADATA, normalised_type, trait_fields


class Operation(StrEnum):
    ADD = "ADD"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    NOOP = "NOOP"


@dataclass(frozen=True)
class MemoryInput:
    user_id: str
    content: str
    memory_type: str
    metadata: dict[str, Any] = field(default_factory=dict)
    importance: float | None = None
    valid_at: datetime | None = None
    # When it stopped being true, for a fact learnt after its end (a statement older than the
    # value held now): not current from the start, its key conflicts with no current holder
    # and it supersedes nothing.
    invalid_at: datetime | None = None
    # When the service learnt it (`created_at`): now, or an imported message's time.
    recorded_at: datetime | None = None
    key: str | None = None
    embedding: list[float] | None = None
    session_id: uuid.UUID | None = None
    conversation_id: uuid.UUID | None = None
    source_episode_ids: list[uuid.UUID] | None = None


@dataclass(frozen=True)
class WriteResult:
    operation: Operation
    memory: Memory
    superseded: Memory | None = None


# The score job flags only current memories and rescores only them: a memory that stops being
# current drops its flags at once (docs/decay.md).
SCORE_FLAGS_CLEARED = {"eligible_for_delete": False, "merge_candidate_of": None}


def lock_memory_writes(pairs: set[tuple[str, str]]) -> None:
    """Serialise writes per (user, memory type) until commit."""
    xact_lock(
        LockNamespace.MEMORY_WRITES, (f"{user}\x1f{memory_type}" for user, memory_type in pairs)
    )


def foreign_references(items: dict[int, MemoryInput]) -> dict[int, Invalid]:
    """The items citing a session, message or episode (a session or a memory) that is not
    their own end user's: index → error. Otherwise one client could attach its memories to
    another's end users, whose export would then show them and whose purge delete them."""
    sessions = {item.session_id for item in items.values() if item.session_id}
    episodes = {episode for item in items.values() for episode in item.source_episode_ids or ()}
    messages = {item.conversation_id for item in items.values() if item.conversation_id}
    if not (sessions or episodes or messages):
        return {}
    session_owners = dict(
        ConversationSession.objects.filter(pk__in=sessions | episodes).values_list("id", "user_id")
    )
    episode_owners = session_owners | dict(
        Memory.objects.filter(pk__in=episodes - session_owners.keys()).values_list("id", "user_id")
    )
    message_sessions = dict(
        ConversationMessage.objects.filter(pk__in=messages).values_list("id", "session_id")
    )
    errors = {}
    for index, item in items.items():
        if item.session_id and session_owners.get(item.session_id) != item.user_id:
            problem = ("session_id", f"No session '{item.session_id}' for this user.")
        elif any(episode_owners.get(e) != item.user_id for e in item.source_episode_ids or ()):
            problem = ("source_episode_ids", "Each must be a session or memory of this user.")
        elif item.conversation_id and message_sessions.get(item.conversation_id) != (
            item.session_id
        ):
            problem = ("conversation_id", "Must be a message of the session.")
        else:
            continue
        errors[index] = Invalid(problem[1], field=problem[0])
    return errors


def _memory_row(*, item: MemoryInput, memory_type: str, metadata: dict, version: int = 1) -> Memory:
    """An unsaved memory (validated) for `item`."""
    validated(
        user_id=user_id_problem(item.user_id),
        content=text_problem(item.content),
        key=key_problem(item.key),
        metadata=json_problem(metadata),
        embedding=None
        if item.embedding is None
        else embedding_problem(item.embedding, dimensions=settings.EMBEDDING_DIM),
    )
    episodes = list(item.source_episode_ids or [])
    if item.session_id and item.session_id not in episodes:
        episodes.append(item.session_id)
    # Secrets are never stored (docs/privacy.md): the row holds placeholders and the counts.
    content = redact(item.content)
    metadata, metadata_redactions = redact_json(metadata)
    redactions = content.counts + metadata_redactions if metadata_redactions else content.counts
    return Memory(
        id=uuid.uuid4(),
        user_id=item.user_id,
        memory_type=memory_type,
        content=content.text,
        content_hash=content_md5(content.text),
        redactions=dict(redactions) or None,
        metadata=metadata,
        importance=0.5 if item.importance is None else item.importance,
        valid_at=item.valid_at or timezone.now(),
        invalid_at=item.invalid_at,
        created_at=item.recorded_at or timezone.now(),
        key=item.key,
        version=version,
        embedding=item.embedding,
        embedding_status=(
            EmbeddingStatus.READY if item.embedding is not None else EmbeddingStatus.PENDING
        ),
        source_episode_ids=episodes or None,
        **trait_fields(memory_type=memory_type, metadata=metadata),
    )


def _save_new(rows: list[tuple[Memory, MemoryInput]]) -> None:
    memory_rows_insert(
        [memory for memory, _ in rows],
        sources=[
            MemorySource(
                memory_id=memory.id,
                session_id=item.session_id,
                conversation_id=item.conversation_id,
            )
            for memory, item in rows
            if item.session_id
        ],
    )


def write_target(memory: Memory, caller: Caller, *, moving_to: str | None = None) -> Memory:
    """The memory's row as stored, once `caller` may write it, locked against other writes
    for its user and type (and `moving_to`, the type it moves to: one sorted go) until commit.
    The check is made on the row that will change, never on the object handed in (a stale or
    hand-built one could name another user)."""
    stored = Memory.objects.filter(pk=memory.pk).values_list("user_id", "memory_type").first()
    if stored is None:
        raise NotFound(f"Memory '{memory.pk}' not found.")
    user_access_check(caller=caller, user_id=stored[0], write=True)
    lock_memory_writes({stored, (stored[0], moving_to or stored[1])})
    return Memory.objects.get(pk=memory.pk)


def _handover(older: Memory, successor: Memory) -> datetime:
    """When the older version stops being current: the instant its successor is recorded, so
    that "as of" any time sees one of them, never both; never before the older one was recorded
    itself (a successor dated earlier: an imported older message saying the same)."""
    return max(older.created_at, successor.created_at)


def _supersede(
    memory: Memory,
    *,
    successor: Memory,
    expected_version: int | None = None,
    invalid_at: datetime | None = None,
    expired_at: datetime | None = None,
) -> None:
    """Stamp a current memory replaced by `successor` (optimistically: a stale version is a
    Conflict). It keeps its version number: the successor carries the next one, and an expired
    row takes no more changes, so nothing needs the bump."""
    current = Memory.objects.filter(latest_q(), pk=memory.pk)
    if expected_version is not None:
        current = current.filter(version=expected_version)
    now = timezone.now()
    stamps = {"invalid_at": invalid_at} if invalid_at is not None else {}
    if not current.update(
        expired_at=expired_at or now,
        updated_at=now,
        superseded_by=successor.id,
        **stamps,
        **SCORE_FLAGS_CLEARED,
    ):
        raise stale(memory)
    links_follow(old_id=memory.id, new_id=successor.id)


def links_follow(*, old_id: uuid.UUID, new_id: uuid.UUID) -> None:
    """Move a superseded memory's links to its successor. The successor is new, so no pair it
    holds can collide; a link between the two versions would become a self-link: dropped.
    The rows are locked in id order first: two memories linked both ways and superseded at
    once would otherwise each lock one link and wait for the other's."""
    list(
        MemoryLink.objects.filter(Q(source_id=old_id) | Q(target_id=old_id))
        .order_by("id")
        .select_for_update()
        .values_list("id", flat=True)
    )
    MemoryLink.objects.filter(
        Q(source_id=old_id, target_id=new_id) | Q(source_id=new_id, target_id=old_id)
    ).delete()
    MemoryLink.objects.filter(source_id=old_id).update(source_id=new_id)
    MemoryLink.objects.filter(target_id=old_id).update(target_id=new_id)


def stale(memory: Memory) -> Conflict:
    row = Memory.objects.filter(pk=memory.pk).values("version", "expired_at").first()
    if row and row["expired_at"] is not None:
        return Conflict(
            "This memory is no longer current (superseded or deleted).",
            current_version=row["version"],
        )
    return Conflict(
        "The memory changed since you read it; read it again and retry.",
        field="version",
        current_version=row["version"] if row else None,
    )


def memory_add(*, item: MemoryInput, caller: Caller) -> WriteResult:
    (result,) = memory_add_many(items=[item], caller=caller)
    if isinstance(result, DomainError):
        raise result
    return result


def memory_add_many(*, items: list[MemoryInput], caller: Caller) -> list[WriteResult | DomainError]:
    """Write a batch with the operation model, set-based: one query finds the NOOPs, one the
    near duplicates, one inserts. A rejected item (Invalid, or Forbidden outside the caller's
    end users) is returned as its error, in its place, and writes nothing; any other failure
    rolls the whole batch back."""
    with audit_actor(caller.name):
        return _add_many(items=items, caller=caller)


def _add_many(*, items: list[MemoryInput], caller: Caller) -> list[WriteResult | DomainError]:
    results: dict[int, WriteResult | DomainError] = {}
    prepared: dict[int, Memory] = {}
    for index, item in enumerate(items):
        try:
            user_access_check(caller=caller, user_id=item.user_id, write=True)
            memory_type, metadata = normalised_type(item.memory_type, dict(item.metadata or {}))
            prepared[index] = _memory_row(item=item, memory_type=memory_type, metadata=metadata)
        except (Invalid, Forbidden) as error:
            results[index] = error
    for index, error in foreign_references({i: items[i] for i in prepared}).items():
        del prepared[index]
        results[index] = error
    lock_memory_writes({(memory.user_id, memory.memory_type) for memory in prepared.values()})
    current = {index: memory for index, memory in prepared.items() if memory.invalid_at is None}
    for index, error in keys_taken(current).items():
        del prepared[index]
        results[index] = error

    # NOOP: the user already holds this content as a current memory of this type (or an
    # earlier item of this batch does).
    existing = {
        (memory.user_id, memory.memory_type, memory.content_hash): memory
        for memory in Memory.objects.current().filter(
            content_hash__in={memory.content_hash for memory in prepared.values()},
            user_id__in={memory.user_id for memory in prepared.values()},
        )
    }
    new: dict[int, Memory] = {}
    for index, memory in prepared.items():
        if memory.invalid_at is not None:
            new[index] = memory  # ended already: it repeats no current memory
            continue
        identity = (memory.user_id, memory.memory_type, memory.content_hash)
        held = existing.get(identity)
        if held is not None and memory.key is not None and held.key != memory.key:
            # The content is held under another key (or none): a NOOP would drop the key.
            results[index] = Conflict(
                f"This content is already held by the current memory '{held.id}'"
                + (f" under the key '{held.key}'." if held.key is not None else ", without a key."),
                field="key",
                memory_id=str(held.id),
            )
        elif held is not None:
            results[index] = WriteResult(Operation.NOOP, held)
        else:
            existing[identity] = new[index] = memory

    # UPDATE: a current memory this similar (by words; by meaning too when the client sent the
    # embedding: memories/services/dedup.py) is superseded by the new one, be it stored
    # already or an earlier item of this batch.
    with_lexical_vectors(list(new.values()))
    candidates = [
        Candidate(
            index,
            memory.user_id,
            memory.memory_type,
            memory.content_hash,
            memory.lexical_vector,
            embedding=memory.embedding,
        )
        for index, memory in new.items()
        if memory.invalid_at is None
    ]
    stored_ids = near_duplicates(candidates)
    in_batch = near_duplicates_in_batch(candidates)
    stored = Memory.objects.in_bulk(set(stored_ids.values()))
    replaces: dict[int, Memory] = {}  # new item's index → the memory it supersedes
    replaced: set[uuid.UUID] = set()
    for index in new:  # in order, so a chain within the batch gets consecutive versions
        # The nearest earlier item of the batch, else the stored memory, unless an earlier
        # item superseded it already.
        candidates = [
            *([new[in_batch[index]]] if index in in_batch else []),
            *([stored[stored_ids[index]]] if index in stored_ids else []),
        ]
        older = next((c for c in candidates if c.id not in replaced), None)
        if older is None:
            continue
        if older.key is not None:
            # A restatement of a keyed memory keeps its key; one under another key is another
            # memory (an ADD), not a new version of this one.
            if new[index].key is None:
                new[index].key = older.key
            elif new[index].key != older.key:
                continue
        replaces[index] = older
        replaced.add(older.id)
        new[index].version = older.version + 1
        new[index].reflected_at = older.reflected_at  # a restatement: reflected once

    _save_new([(memory, items[index]) for index, memory in new.items()])
    for index, older in replaces.items():
        _supersede(older, successor=new[index], expired_at=_handover(older, new[index]))
    superseded = Memory.objects.in_bulk([older.id for older in replaces.values()])
    for index, memory in new.items():
        if index in replaces:
            results[index] = WriteResult(Operation.UPDATE, memory, superseded[replaces[index].id])
        else:
            results[index] = WriteResult(Operation.ADD, memory)
    return [results[index] for index in range(len(items))]


def memory_supersede(
    *,
    memory: Memory,
    content: str,
    caller: Caller,
    expected_version: int | None = None,
    metadata: dict[str, Any] | None = None,
    session_id: uuid.UUID | None = None,
    conversation_id: uuid.UUID | None = None,
    valid_at: datetime | None = None,
    invalid_at: datetime | None = None,
    recorded_at: datetime | None = None,
    unique_content: bool = True,
) -> Memory:
    """A new version with new content; the old one gets expired_at and superseded_by. A new
    value that replaces the old one in the world (a slot's: "I moved to Denver") passes
    `invalid_at`, when the old value stopped being true, and `valid_at` for the new one: "as
    of" an instant before it, the old value is still found. `recorded_at` dates the change
    itself (an imported message's time: the successor's created_at, the old row's
    expired_at); default now. With `unique_content` (every edit but a slot's new value),
    content another current memory of the user holds as the same type is a Conflict, as
    writing it anew is: two current memories would say the same."""
    with audit_actor(caller.name):
        memory = write_target(memory, caller)
        metadata = memory.metadata if metadata is None else metadata
        item = MemoryInput(
            user_id=memory.user_id,
            content=content,
            memory_type=memory.memory_type,
            metadata=metadata,
            importance=memory.importance,
            key=memory.key,
            source_episode_ids=memory.source_episode_ids,
            session_id=session_id,
            conversation_id=conversation_id,
            valid_at=valid_at,
            # New words for what had ended (an imported past value, a value said wrong) end
            # when it did: the successor holds the key against no current memory.
            invalid_at=memory.invalid_at,
            recorded_at=recorded_at,
        )
        successor = _memory_row(
            item=item, memory_type=memory.memory_type, metadata=metadata, version=memory.version + 1
        )
        # New words for what was said: a reflection cycle that read it does not count it again.
        successor.reflected_at = memory.reflected_at
        if unique_content:
            content_held_check(memory, successor.content_hash)
        if memory.memory_type == MemoryType.TRAIT:
            # New words for the same trait: its lifecycle (stage, confidence, counters, parent)
            # carries over, except what the new metadata states.
            for key, (column, _) in TRAIT_METADATA.items():
                if metadata.get(key) is None:
                    setattr(successor, column, getattr(memory, column))
        _save_new([(successor, item)])
        _supersede(
            memory,
            successor=successor,
            expected_version=expected_version,
            invalid_at=invalid_at,
            expired_at=_handover(memory, successor),
        )
        return successor


def content_held_check(
    memory: Memory, content_hash: str, *, memory_type: str | None = None
) -> None:
    """Conflict when another current memory of `memory`'s user holds the content of
    `content_hash` (stored content's: redacted) as its type (or `memory_type`, the type it is
    moving to)."""
    held = (
        Memory.objects.current()
        .filter(
            user_id=memory.user_id,
            memory_type=memory_type or memory.memory_type,
            content_hash=content_hash,
        )
        .exclude(pk=memory.pk)
        .first()
    )
    if held is not None:
        raise Conflict(
            f"This content is already held by the current memory '{held.id}'.",
            field="content",
            memory_id=str(held.id),
        )


def duplicates_by_meaning_supersede(*, memory_ids: list[uuid.UUID]) -> int:
    """The write path's UPDATE by meaning, for memories the worker has just embedded
    (memories/services/dedup.py says why here): of each such memory and its near duplicate by
    meaning, the later (by `created_at`) supersedes the earlier, as `memory_add_many` does —
    the earlier gets `expired_at` and `superseded_by`, its links move to the later, which
    carries the next version and, when it has none, the earlier one's key (a restatement
    under another key is another memory: left alone). Under the same per-user locks as
    writes, on the rows as they are once locked; the audit log's actor is `system`. Not with
    the `hashing` provider (its vectors are lexical, as the write compared already), nor
    while an embeddings rebuild is unfinished (what it left pending was written before).
    Answers how many were superseded."""
    if not memory_ids or settings.EMBEDDING_PROVIDER == "hashing":
        return 0
    pairs = near_duplicates_by_meaning(memory_ids)
    if not pairs or embeddings_rebuild_unfinished():
        return 0
    ids = {memory_id for pair in pairs for memory_id in pair}
    superseded = 0
    with transaction.atomic(), audit_actor(SYSTEM.name):
        lock_memory_writes(
            set(Memory.objects.filter(pk__in=ids).values_list("user_id", "memory_type"))
        )
        rows = Memory.objects.current().in_bulk(ids)  # as they are now, locked
        for pair in pairs:
            if not all(memory_id in rows for memory_id in pair):
                continue  # superseded meanwhile, here or by a write
            if len({rows[i].memory_type for i in pair}) > 1:
                continue  # one moved to another type meanwhile: no longer alike
            earlier, later = sorted((rows[i] for i in pair), key=lambda m: (m.created_at, m.id))
            key = later.key if later.key is not None else earlier.key
            if earlier.key is not None and key != earlier.key:
                continue  # another key: another memory
            _supersede(earlier, successor=later)
            if later.key != key:
                lock_keys({(later.user_id, key)})
            Memory.objects.filter(pk=later.pk).update(
                key=key, version=Greatest(F("version"), earlier.version + 1)
            )
            later.key, later.version = key, max(later.version, earlier.version + 1)
            del rows[earlier.id]
            superseded += 1
    return superseded
