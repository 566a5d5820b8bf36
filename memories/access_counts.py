"""Access tracking: every memory recall returns counts as an access, every memory a bulk read
reaches through a link as a traversal (both inputs of the activity score, docs/decay.md).

Reads must stay reads, so the counts collect in one Redis hash (`<id>` → accesses by HINCRBY,
`<id>@` → the last access, epoch seconds; `~<id>` and `~<id>@` the same for traversals) and
beat flushes them into `access_count`/`last_accessed_at` and `traverse_count`/`last_linked_at`
every ACCESS_FLUSH_INTERVAL. The flush first RENAMEs the hash (atomic):
increments that arrive during the flush go to a fresh hash and wait for the next one. A
renamed hash is deleted only after the database committed; one left behind by a crash is
applied by the next flush (at least once).
"""

import logging
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime

import redis
from django.db import connection, transaction

from core.after_response import after_response
from core.redis_client import app_redis

log = logging.getLogger("neuromem.access")

PENDING_KEY = "neuromem:access"
FLUSHING_PREFIX = "neuromem:access:flushing:"


TRAVERSAL = "~"  # the field prefix of traversals


def accesses_record(
    *, memory_ids: list[uuid.UUID], traversed_ids: Sequence[uuid.UUID] = ()
) -> None:
    """Count one access to each of `memory_ids` and one traversal to each of
    `traversed_ids`, at this instant; inside a request, written once its answer is out (the
    answer does not depend on it). Best effort: if Redis is down, the read still answers and
    nothing is counted (logged)."""
    if not memory_ids and not traversed_ids:
        return
    now = time.time()
    fields = [str(memory_id) for memory_id in memory_ids]
    fields += [f"{TRAVERSAL}{memory_id}" for memory_id in traversed_ids]
    after_response(lambda: _counted(fields, now))


def _counted(fields: list[str], now: float) -> None:
    try:
        pipe = app_redis().pipeline(transaction=True)
        for name in fields:
            pipe.hincrby(PENDING_KEY, name, 1)
        pipe.hset(PENDING_KEY, mapping={f"{name}@": now for name in fields})
        pipe.execute()
    except redis.RedisError:
        log.warning("%d accesses not counted: Redis unavailable", len(fields), exc_info=True)


def accesses_flush() -> int:
    """Write the counted accesses into the memories; answers how many memories were updated.
    One flush at a time (the beat task runs it under single_flight): a second one would apply
    the hashes left behind by an interrupted flush while the first still works on them."""
    client = app_redis()
    updated = 0
    for key in client.scan_iter(match=f"{FLUSHING_PREFIX}*"):
        updated += _apply(client, key)  # left behind by an interrupted flush
    flushing = f"{FLUSHING_PREFIX}{uuid.uuid4()}"
    try:
        client.rename(PENDING_KEY, flushing)
    except redis.ResponseError:
        return updated  # no access since the last flush
    return updated + _apply(client, flushing)


def _counts(fields: dict[str, str], prefix: str) -> tuple[list, list, list]:
    """The ids, counts and last times of the fields named `<prefix><id>`."""
    ids, increments, times = [], [], []
    for name, value in fields.items():
        if name.endswith("@") or not name.startswith(prefix):
            continue
        try:
            memory_id = uuid.UUID(name.removeprefix(prefix))
        except ValueError:
            continue
        ids.append(memory_id)
        increments.append(int(value))
        times.append(datetime.fromtimestamp(float(fields.get(f"{name}@", time.time())), tz=UTC))
    return ids, increments, times


# Bookkeeping columns only: the audit trigger writes no history for these.
COUNTS_ADD_SQL = """
UPDATE memories m
SET {count} = m.{count} + a.increment, {last} = greatest(m.{last}, a.at)
FROM unnest(%s::uuid[], %s::int[], %s::timestamptz[]) AS a(id, increment, at)
WHERE m.id = a.id
"""
# Field prefix in the hash → the columns its counts go to.
COUNTED = {
    "": ("access_count", "last_accessed_at"),
    TRAVERSAL: ("traverse_count", "last_linked_at"),
}


def _apply(client: redis.Redis, key: bytes | str) -> int:
    fields = {name.decode(): value.decode() for name, value in client.hgetall(key).items()}
    updated = 0
    with transaction.atomic(), connection.cursor() as cursor:
        for prefix, (count, last) in COUNTED.items():
            cursor.execute(
                COUNTS_ADD_SQL.format(count=count, last=last), list(_counts(fields, prefix))
            )
            updated += cursor.rowcount
    client.delete(key)
    return updated
