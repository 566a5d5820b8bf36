"""PostgreSQL advisory locks, in one place: every namespace NeuroMem locks under is named in
`LockNamespace`, so two subjects can never collide on a key by accident.

- `xact_lock`: serialise writes until the transaction ends (refuses to run outside one).
- `single_flight`: one run of a job at a time across workers and beats. A session-level lock:
  released when the job ends, or by PostgreSQL when a crashed holder's connection closes, so a
  crash never blocks the next run. (Behind a transaction-pooling PgBouncer, session locks
  need a direct connection.)
"""

import logging
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from enum import IntEnum

from django.db import DatabaseError, connection

log = logging.getLogger("neuromem.locks")


class LockNamespace(IntEnum):
    """The first key of every advisory lock (the second is a hash of the subject)."""

    MEMORY_WRITES = 1  # one end user's memories of one type: "<user_id>\x1f<memory_type>"
    ACCESS_FLUSH = 2  # beat: access counts from Redis into the memories
    USER_INDEXES = 3  # beat (or a purge): per-user HNSW and text indexes
    EMBEDDING_REQUEUE = 4  # beat: re-queue stale pending embeddings
    EMBEDDING_REBUILD = 5  # manage.py embeddings_rebuild: one at a time
    REFLECTION = 6  # one reflection cycle per end user at a time: "<user_id>"
    REFLECTION_REQUESTS = 7  # queuing a cycle for an end user: "<user_id>"
    REFLECTION_TRIGGERS = 8  # beat: which users are due a cycle
    TRAIT_VIEW_REFRESH = 9  # beat (or after a cycle): REFRESH mv_trait_decayed
    TRENDS_EXPIRE = 10  # beat: trends at their window's end
    WEAK_TRAITS_DISSOLVE = 11  # beat: traits decayed below the floor
    CONSISTENCY_CHECK = 12  # beat: dangling references between the tables
    SOUL = 13  # SOUL versions: numbering and the one active version
    MEMORY_KEYS = 14  # a memory key, unique among a user's current memories: "<user_id>\x1f<key>"
    SCORE = 15  # beat: the activity score job


def xact_lock(namespace: LockNamespace, keys: Iterable[str]) -> None:
    """Lock `keys` until the current transaction ends, in sorted order (so two callers
    locking overlapping sets cannot deadlock)."""
    if not connection.in_atomic_block:
        raise RuntimeError(f"{namespace.name} lock taken outside a transaction: it would not hold")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(%s, hashtext(k))"
            " FROM unnest(%s::text[]) WITH ORDINALITY AS u(k, n) ORDER BY n",
            [int(namespace), sorted(set(keys))],
        )


@contextmanager
def single_flight(namespace: LockNamespace, key: str = "") -> Iterator[bool]:
    """`with single_flight(LockNamespace.ACCESS_FLUSH) as running:` — `running` is True for
    the one run holding the lock, False (logged) for a run that found another in flight."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))", [int(namespace), key])
        (acquired,) = cursor.fetchone()
    if not acquired:
        log.info("%s%s: skipped, another run is in flight", namespace.name, f" {key}" * bool(key))
        yield False
        return
    try:
        yield True
    finally:
        _unlock(namespace, key)


def _unlock(namespace: LockNamespace, key: str) -> None:
    if connection.connection is None:
        return  # a lost connection took the lock with it
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", [int(namespace), key])
    except DatabaseError:
        # Never hide the job's own error; closing the connection releases the lock, so a
        # reused connection cannot carry it into the next run.
        log.warning("%s: unlock failed; closing the connection", namespace.name, exc_info=True)
        connection.close()
