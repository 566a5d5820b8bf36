"""Weighted links between memories of one end user (read in memories/links.py).

A link is directed (source → target), weighted 0–1, one per pair. Creating one stamps both
memories' `last_linked_at`, an input of the activity score (docs/decay.md). Links follow a
memory's current version: superseding a memory moves them to the successor (in
memories/services/writes.py), so a link never points at a version nobody reads any more.

Seed 004 names link targets by key (`KeyedLink`) and sets a memory's links all at once
with the memory's own write (`memory_add_with_links`, `memory_update_with_links`): one
transaction, the targets looked up in one query, and only the links that change are written
(others removed, new ones made, changed weights set; a link that stays as it was is not
touched, as making a link stamps `last_linked_at`).
"""

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.utils import timezone

from core.access import Caller, user_access_check
from core.db.actor import audit_actor
from core.errors import Conflict, Invalid, NotFound
from memories.models import Memory, MemoryLink
from memories.services.edits import memory_update
from memories.services.writes import (
    MemoryInput,
    Operation,
    WriteResult,
    memory_add,
    write_target,
)


@dataclass(frozen=True)
class KeyedLink:
    """A link to the end user's current memory holding `key`."""

    key: str
    weight: float


def memory_link_set(
    *, source: Memory, target_id: uuid.UUID, weight: float, caller: Caller
) -> tuple[MemoryLink, bool]:
    """Link `source` to the current memory `target_id` of the same end user with `weight`
    (0–1), or change the weight of the link that exists. Answers the link and whether it is
    new."""
    if not 0 <= weight <= 1:
        raise Invalid("Must be between 0 and 1.", field="weight")
    with audit_actor(caller.name):
        (written,) = _links_write(_link_source(source, caller), {target_id: weight})
        return written


def memory_link_remove(*, source: Memory, target_id: uuid.UUID, caller: Caller) -> None:
    with audit_actor(caller.name):
        source = write_target(source, caller)
        deleted, _ = MemoryLink.objects.filter(source_id=source.id, target_id=target_id).delete()
        if not deleted:
            raise NotFound(f"No link from memory '{source.id}' to '{target_id}'.")


def memory_add_with_links(
    *, caller: Caller, item: MemoryInput, links: Sequence[KeyedLink]
) -> WriteResult:
    """memory_add, and `links` made the new memory's links: the memory and its links, or
    nothing. A NOOP changes nothing, links included (memory_update_with_links changes them);
    a key no current memory holds is Invalid either way, before anything is written."""
    with audit_actor(caller.name):  # one transaction
        # Before any key is read: another client's end user is FORBIDDEN, not a missing key.
        user_access_check(caller=caller, user_id=item.user_id, write=True)
        wanted = _targets_by_key(user_id=item.user_id, links=links)
        result = memory_add(item=item, caller=caller)
        if links and result.operation != Operation.NOOP:
            _links_replace(result.memory, wanted)
        return result


def memory_update_with_links(
    *,
    caller: Caller,
    memory: Memory,
    changes: Mapping[str, Any],
    links: Sequence[KeyedLink] | None,
) -> Memory:
    """memory_update with `changes` (when any) at the version `memory` was read at, and (when
    `links` is given) `links` made its links: both, or nothing. A key no current memory of
    the user holds is Invalid (`links[i].key`)."""
    version = memory.version  # changed since it was read: a Conflict, as for any update
    with audit_actor(caller.name):  # one transaction
        wanted = None
        if links is not None:  # checked, and the keys looked up, before anything is written
            memory = _link_source(memory, caller)
            wanted = _targets_by_key(user_id=memory.user_id, links=links, source=memory)
        if changes:
            memory = memory_update(
                memory=memory, version=version, changes=dict(changes), caller=caller
            )
        if wanted is not None:
            _links_replace(memory, wanted)
        return memory


def _link_source(memory: Memory, caller: Caller) -> Memory:
    """The memory as stored, once `caller` may write it (locked), and current."""
    source = write_target(memory, caller)
    if source.expired_at is not None or source.invalid_at is not None:
        raise Conflict("This memory is no longer current (superseded or deleted).")
    return source


def _targets_by_key(
    *, user_id: str, links: Sequence[KeyedLink], source: Memory | None = None
) -> dict[uuid.UUID, float]:
    """target id → weight for `links`, their keys looked up among the user's current memories
    in one query; none may be `source` itself."""
    ids = dict(
        Memory.objects.current()
        .filter(user_id=user_id, key__in={link.key for link in links})
        .values_list("key", "id")
    )
    named: set[str] = set()
    for index, link in enumerate(links):
        if link.key in named:  # one link a pair: which weight was meant cannot be told
            raise Invalid(f"Key '{link.key}' is linked twice.", field=f"links[{index}].key")
        named.add(link.key)
        if link.key not in ids:
            raise Invalid(f"No current memory with key '{link.key}'.", field=f"links[{index}].key")
        if source is not None and ids[link.key] == source.id:
            raise Invalid("A memory cannot link to itself.", field=f"links[{index}].key")
    return {ids[link.key]: link.weight for link in links}


def _links_replace(source: Memory, wanted: Mapping[uuid.UUID, float]) -> None:
    held = dict(MemoryLink.objects.filter(source_id=source.id).values_list("target_id", "weight"))
    dropped = held.keys() - wanted.keys()
    MemoryLink.objects.filter(source_id=source.id, target_id__in=dropped).delete()
    # Compared as the `real` column holds them: an unchanged weight with more digits than it
    # keeps (0.123456789) compares equal.
    changed = {
        target: weight
        for target, weight in wanted.items()
        if target not in held or np.float32(held[target]) != np.float32(weight)
    }
    if changed:
        _links_write(source, changed)


def _links_write(
    source: Memory, weights: Mapping[uuid.UUID, float]
) -> list[tuple[MemoryLink, bool]]:
    """Make or re-weigh the links from `source` (current, locked) to `weights`' targets:
    current memories of the same end user. Answers each link and whether it is new."""
    if source.id in weights:
        raise Invalid("A memory cannot link to itself.", field="target_id")
    # One message whether a target is another user's, gone, or never existed. Locked (before
    # any link row, as a supersede locks it): a supersede of a target under way finishes
    # first, and then the target is no longer current.
    current = set(
        Memory.objects.current()
        .select_for_update()
        .filter(pk__in=list(weights), user_id=source.user_id)
        .order_by("id")  # one lock order for concurrent writes of several links
        .values_list("id", flat=True)
    )
    for target_id in weights:
        if target_id not in current:
            raise Invalid(
                f"No current memory '{target_id}' of user '{source.user_id}'.", field="target_id"
            )
    written = [
        MemoryLink.objects.update_or_create(
            source_id=source.id,
            target_id=target_id,
            defaults={"weight": weight},
            create_defaults={"weight": weight, "user_id": source.user_id},
        )
        for target_id, weight in weights.items()
    ]
    # Bookkeeping columns: the audit trigger writes no history for them.
    Memory.objects.filter(pk__in=[source.id, *weights]).update(last_linked_at=timezone.now())
    return written
