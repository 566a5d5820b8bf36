"""Edits of a stored memory: a PATCH (new content supersedes; other fields change in place),
a key renamed, a soft delete, an invalidation. Each acts on the row as stored, under the
write path's per-user locks (memories/services/writes.py)."""

from collections import Counter
from datetime import datetime
from typing import Any

from django.db.models import F
from django.utils import timezone

from core.access import Caller
from core.db.actor import audit_actor
from core.errors import Conflict, Invalid
from core.validation import json_problem, validated
from memories.models import Memory
from memories.predicates import current_q, latest_q
from memories.redaction import redact, redact_json
from memories.services.keys import key_conflict, key_problem, lock_keys
from memories.services.writes import (
    SCORE_FLAGS_CLEARED,
    content_held_check,
    memory_supersede,
    stale,
    write_target,
)
from memories.traits import normalised_type, trait_fields

UPDATABLE_IN_PLACE = {"metadata", "importance", "key", "valid_at", "memory_type"}


def memory_update(
    *, memory: Memory, version: int, changes: dict[str, Any], caller: Caller
) -> Memory:
    """PATCH: new content makes a new version (supersede); other fields change in place.
    Either way `version` must be the current one (optimistic lock)."""
    with audit_actor(caller.name):
        moving_to = None
        if changes.get("memory_type"):  # the row moves into the other type's writes
            moving_to, _ = normalised_type(changes["memory_type"], {})
        memory = write_target(memory, caller, moving_to=moving_to)
        changes = dict(changes)
        content = changes.pop("content", None)
        # The words as they would be stored: sent again with the secret they held, they are
        # no new content (the stored ones hold its placeholder).
        if content is not None and redact(content).text != memory.content:
            memory = memory_supersede(
                memory=memory,
                content=content,
                caller=caller,
                expected_version=version,
                metadata=changes.pop("metadata", None),
            )
            if not changes:
                return memory
            version = memory.version
        return _update_in_place(memory, version=version, changes=changes)


def _update_in_place(memory: Memory, *, version: int, changes: dict[str, Any]) -> Memory:
    fields = {name: value for name, value in changes.items() if name in UPDATABLE_IN_PLACE}
    validated(
        key=key_problem(fields.get("key")),
        metadata=json_problem(fields["metadata"]) if "metadata" in fields else None,
    )
    if "metadata" in fields:
        fields["metadata"], found = redact_json(fields["metadata"])
        if found:
            fields["redactions"] = dict(Counter(memory.redactions or {}) + found)
    memory_type, metadata = normalised_type(
        fields.get("memory_type", memory.memory_type), fields.get("metadata", memory.metadata)
    )
    if memory_type != memory.memory_type:
        content_held_check(memory, memory.content_hash, memory_type=memory_type)
    if {"memory_type", "metadata"} & fields.keys():
        fields.update(memory_type=memory_type, metadata=metadata)
        fields.update(trait_fields(memory_type=memory_type, metadata=metadata))
    if fields.get("key") is not None and fields["key"] != memory.key:
        lock_keys({(memory.user_id, fields["key"])})
        holder = (
            Memory.objects.current()
            .filter(user_id=memory.user_id, key=fields["key"])
            .exclude(pk=memory.pk)
            .first()
        )
        if holder is not None:
            raise key_conflict(fields["key"], holder)
    # What already holds is no change: no new version (another client's next write, made
    # against the version it read, still matches), no redaction counted twice.
    fields = {name: value for name, value in fields.items() if getattr(memory, name) != value}
    if "metadata" not in fields:
        fields.pop("redactions", None)
    target = Memory.objects.filter(latest_q(), pk=memory.pk, version=version)
    if not fields:
        if not target.exists():
            raise stale(memory)
        return memory
    if not target.update(**fields, version=F("version") + 1, updated_at=timezone.now()):
        raise stale(memory)
    return Memory.objects.get(pk=memory.pk)


def memory_key_rename(*, memory: Memory, key: str, caller: Caller) -> Memory:
    """Give the current memory another key, unique among its user's current memories (taken:
    Conflict). Acts on the memory as stored now: no version to match."""
    with audit_actor(caller.name):
        memory = write_target(memory, caller)
        if memory.expired_at is not None:
            raise stale(memory)
        return _update_in_place(memory, version=memory.version, changes={"key": key})


def memory_delete(*, memory: Memory, caller: Caller, at: datetime | None = None) -> Memory:
    """Soft delete: the row and its history stay; recall no longer sees it. `at` dates the
    deletion (an imported "forget" message's time); default now."""
    with audit_actor(caller.name):
        memory = write_target(memory, caller)
        now = timezone.now()
        Memory.objects.filter(latest_q(), pk=memory.pk).update(
            expired_at=at or now, updated_at=now, version=F("version") + 1, **SCORE_FLAGS_CLEARED
        )
        return Memory.objects.get(pk=memory.pk)


def memory_invalidate(
    *, memory: Memory, caller: Caller, invalid_at: datetime | None = None
) -> Memory:
    """The fact stopped being true at `invalid_at` (not in the future): it leaves current
    reads, and "as of" any instant from then on no longer sees it. One already ended is a
    Conflict: its end stays what it was."""
    with audit_actor(caller.name):
        memory = write_target(memory, caller)
        now = timezone.now()
        if invalid_at is not None and invalid_at > now:
            raise Invalid("May not be in the future: invalidate it then.", field="invalid_at")
        updated = Memory.objects.filter(current_q(), pk=memory.pk).update(
            invalid_at=invalid_at or now,
            expired_at=now,
            updated_at=now,
            version=F("version") + 1,
            **SCORE_FLAGS_CLEARED,
        )
        if not updated:
            if memory.expired_at is None and memory.invalid_at is not None:
                raise Conflict(
                    "This memory has already ended; its end stays what it was.",
                    current_version=memory.version,
                )
            raise stale(memory)
        return Memory.objects.get(pk=memory.pk)
