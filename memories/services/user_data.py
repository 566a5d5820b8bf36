"""A user's data rights: the hard purge of everything held about them (export is a read, in
memories/selectors.py)."""

import uuid
from collections.abc import Iterable

import pgtrigger
from django.conf import settings
from django.contrib.admin.models import LogEntry
from django.contrib.contenttypes.models import ContentType
from django.db import transaction

from core.access import Caller, user_access_check
from core.jobs import enqueue_on_commit
from core.logs import security_log
from memories.common_names import common_names_forget
from memories.models import Memory, MemoryType
from memories.selectors import user_held
from memories.services.writes import lock_memory_writes
from memories.signals import user_data_purged
from memories.stats import stats_cache_outdate


def admin_log_redact(
    *, object_ids: Iterable[uuid.UUID], label: str, end_user: str | None = None
) -> int:
    """Staff actions on these objects (memories, sessions, forget requests, entities: ids no
    other row shares) stay on record as actions, but without what their entries quote (the
    memory's text, the staff's reason); with `end_user`, also those on the end user themself
    (an export, a forget), without their id. Answers how many."""
    redacted = LogEntry.objects.filter(object_id__in=[str(i) for i in object_ids]).update(
        object_repr=label, change_message=""
    )
    if end_user is not None:
        redacted += LogEntry.objects.filter(
            content_type=ContentType.objects.get_for_model(Memory), object_id=end_user
        ).update(object_id=None, object_repr=label, change_message="")
    return redacted


@transaction.atomic
def user_purge(*, caller: Caller, user_id: str) -> dict[str, int]:
    """Hard-delete everything held about one user, in every table, in one transaction.

    Auxiliary rows are matched through the user's memory and session ids, so another user's
    rows are never touched even where contents look alike. The one official way past the
    append-only history and graph edges (and the audit trigger, which would log the deletions
    it is erasing).
    """
    user_access_check(caller=caller, user_id=user_id, write=True)
    # Every writer of the user's memories and messages waits for the purge, so the rows listed
    # here are all there are when they are deleted (a write committing meanwhile left its
    # history and its message behind).
    lock_memory_writes({(user_id, kind) for kind in MemoryType.values})
    held = user_held(user_id=user_id)
    memory_ids = held.memory_ids
    logged = [
        *memory_ids,
        *(
            row_id
            for table in ("conversation_sessions", "forget_requests", "graph_nodes", "graph_edges")
            for row_id in held.tables[table].values_list("id", flat=True)
        ),
    ]
    with pgtrigger.ignore(
        "memories.MemoryHistory:history_no_delete",
        "memories.Memory:memories_audit_delete",
        "memories.GraphEdge:graph_edges_no_delete",
    ):
        counts = {}
        for _, rows in user_data_purged.send(sender=Memory, user_id=user_id, memory_ids=memory_ids):
            counts |= rows
        counts |= {table: rows.delete()[0] for table, rows in held.tables.items()}
        counts["django_admin_log_redacted"] = admin_log_redact(
            object_ids=logged, label="(purged)", end_user=user_id
        )
    # Recall's cached verdicts on which names the user's memories hold widely, and the cached
    # statistics: Redis, so after the commit.
    transaction.on_commit(lambda: common_names_forget(user_id=user_id))
    transaction.on_commit(stats_cache_outdate)
    if counts["memories"] >= settings.USER_INDEX_MIN_MEMORIES // 2:
        # The user's own indexes name them in their predicate: beat's refresh drops them
        # (CONCURRENTLY, so not in this transaction), now rather than within the hour.
        enqueue_on_commit("memories.tasks.refresh_user_indexes", [])
    security_log.warning(
        "end user purged",
        extra={"event": "user_purged", "user_id": user_id, "actor": caller.name, **counts},
    )
    return counts
