"""Access tracking: every memory recall returns counts as an access.

Recall must stay a read, so the counts collect in one Redis hash (`<id>` → count by HINCRBY,
`<id>@` → the last access, epoch seconds) and beat flushes them into `access_count` and
`last_accessed_at` every ACCESS_FLUSH_INTERVAL. The flush first RENAMEs the hash (atomic):
increments that arrive during the flush go to a fresh hash and wait for the next one. A
renamed hash is deleted only after the database committed; one left behind by a crash is
applied by the next flush (at least once).
"""

import logging
import time
import uuid
from datetime import UTC, datetime

import redis
from django.db import connection, transaction

from neuromem_site.redis_client import app_redis

log = logging.getLogger("neuromem.access")

PENDING_KEY = "neuromem:access"
FLUSHING_PREFIX = "neuromem:access:flushing:"


def accesses_record(*, memory_ids: list[uuid.UUID]) -> None:
    """Count one access to each memory. Best effort: if Redis is down, recall still answers
    and the access is not counted (logged)."""
    if not memory_ids:
        return
    now = time.time()
    try:
        pipe = app_redis().pipeline(transaction=True)
        for memory_id in memory_ids:
            pipe.hincrby(PENDING_KEY, str(memory_id), 1)
            pipe.hset(PENDING_KEY, f"{memory_id}@", now)
        pipe.execute()
    except redis.RedisError:
        log.warning("%d accesses not counted: Redis unavailable", len(memory_ids), exc_info=True)


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


def _apply(client: redis.Redis, key: bytes | str) -> int:
    fields = {name.decode(): value.decode() for name, value in client.hgetall(key).items()}
    counts = {name: int(value) for name, value in fields.items() if not name.endswith("@")}
    ids, increments, times = [], [], []
    for name, count in counts.items():
        try:
            ids.append(uuid.UUID(name))
        except ValueError:
            continue
        increments.append(count)
        times.append(datetime.fromtimestamp(float(fields.get(f"{name}@", time.time())), tz=UTC))
    with transaction.atomic(), connection.cursor() as cursor:
        # Bookkeeping columns only: the audit trigger writes no history for these.
        cursor.execute(
            """
            UPDATE memories m
            SET access_count = m.access_count + a.increment,
                last_accessed_at = greatest(m.last_accessed_at, a.accessed_at)
            FROM unnest(%s::uuid[], %s::int[], %s::timestamptz[]) AS a(id, increment, accessed_at)
            WHERE m.id = a.id
            """,
            [ids, increments, times],
        )
        updated = cursor.rowcount
    client.delete(key)
    return updated
