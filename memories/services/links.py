"""Weighted links between memories of one end user (read in memories/links.py).

A link is directed (source → target), weighted 0–1, one per pair. Creating one stamps both
memories' `last_linked_at`, an input of the activity score (docs/decay.md). Links follow a
memory's current version: superseding a memory moves them to the successor (in
memories/services/writes.py), so a link never points at a version nobody reads any more.
"""

import uuid

from django.utils import timezone

from core.access import Caller
from core.db.actor import audit_actor
from core.errors import Conflict, Invalid, NotFound
from memories.models import Memory, MemoryLink
from memories.services.writes import write_target


def memory_link_set(
    *, source: Memory, target_id: uuid.UUID, weight: float, caller: Caller
) -> tuple[MemoryLink, bool]:
    """Link `source` to the current memory `target_id` of the same end user with `weight`
    (0–1), or change the weight of the link that exists. Answers the link and whether it is
    new."""
    if not 0 <= weight <= 1:
        raise Invalid("Must be between 0 and 1.", field="weight")
    with audit_actor(caller.name):
        source = write_target(source, caller)
        if source.expired_at is not None or source.invalid_at is not None:
            raise Conflict("This memory is no longer current (superseded or deleted).")
        if target_id == source.id:
            raise Invalid("A memory cannot link to itself.", field="target_id")
        # One message whether the target is another user's, gone, or never existed. Locked
        # (before any link row, as a supersede locks it): a supersede of the target under way
        # finishes first, and then the target is no longer current.
        target = (
            Memory.objects.current()
            .select_for_update()
            .filter(pk=target_id, user_id=source.user_id)
            .values_list("id", flat=True)
        )
        if not list(target):
            raise Invalid(
                f"No current memory '{target_id}' of user '{source.user_id}'.", field="target_id"
            )
        link, created = MemoryLink.objects.update_or_create(
            source_id=source.id,
            target_id=target_id,
            defaults={"weight": weight},
            create_defaults={"weight": weight, "user_id": source.user_id},
        )
        # Bookkeeping columns: the audit trigger writes no history for them.
        Memory.objects.filter(pk__in=[source.id, target_id]).update(last_linked_at=timezone.now())
        return link, created


def memory_link_remove(*, source: Memory, target_id: uuid.UUID, caller: Caller) -> None:
    with audit_actor(caller.name):
        source = write_target(source, caller)
        deleted, _ = MemoryLink.objects.filter(source_id=source.id, target_id=target_id).delete()
        if not deleted:
            raise NotFound(f"No link from memory '{source.id}' to '{target_id}'.")
