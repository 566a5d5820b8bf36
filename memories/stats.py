"""Memory statistics: how many memories are in each state, and how their activity scores are
spread, for what a caller may see.

- **Scope**: the memories `caller` may read (memories_visible_to), of one end user when
  `user_id` is given (NOT_FOUND outside the caller's prefixes), else of every end user the
  caller reaches (staff: the whole system).
- **Window**: `created_from` ≤ created_at ≤ `created_to`, either end open when None.
- **Counts**: per state of memories.predicates (`deleted` = expired: deleted, superseded or
  invalidated versions); `total` is the memories that are not deleted
  (active + cold + deprecated).
- **Redactions**: what was redacted from the memories and the conversation messages written in
  the window (kind → count; docs/privacy.md).
- **Histogram**: the `total` memories by score, in bins `bin_size` wide from 0:
  [0, bin_size), [bin_size, 2·bin_size), …; the last bin is closed and ends at 100, so a score
  of 100 falls in it (and a last bin may be narrower when bin_size does not divide 100). The
  bins' counts add up to `total`.
- **One statement**: states and bins grouped by PostgreSQL in one query; `query_duration_ms`
  is that query's own time (of the query that made a cached answer, when cached).
- **Cache**: Redis (Django's cache), keyed by scope and parameters. `cache_ttl_ms` is the
  oldest answer the caller accepts: a cached answer younger than that is returned (`cached`
  true, `generated_at` when it was computed), else the statistics are computed and stored.
  0 neither reads nor writes the cache. With Redis failing, statistics are computed anyway.
  A purge makes every answer cached before it stale (`stats_cache_outdate`): one might count
  the purged user's memories, or be theirs alone.
"""

import hashlib
import json
import logging
import math
import time
from collections import Counter
from datetime import datetime, timedelta
from typing import Any

import redis
from django.core.cache import cache
from django.db import connection
from django.db.models import QuerySet
from django.utils import timezone

from core.access import Caller, user_access_check
from core.errors import Invalid
from memories.models import ConversationMessage
from memories.predicates import STATE_THRESHOLDS, STATES, latest_sql, state_sql
from memories.selectors import memories_visible_to

log = logging.getLogger("neuromem.stats")

SCORE_MAX = 100
BIN_SIZE_MAX = SCORE_MAX
# Cache keys: `<namespace>:<sha256 of scope and parameters>`. Bump the version when the
# cached shape changes.
CACHE_NAMESPACE = "memory-stats:v2"
CACHE_TTL_MS_MAX = 86_400_000  # a day


def _outdated_before_key() -> str:
    """Where the time the last purge committed is: an answer cached before it is not read."""
    return f"{CACHE_NAMESPACE}:outdated-before"


def histogram_bins(bin_size: int) -> list[tuple[int, int]]:
    """The bins' (from, to) for `bin_size`: [from, to), the last one [from, 100]."""
    return [
        (start, min(start + bin_size, SCORE_MAX))
        for start in range(0, math.ceil(SCORE_MAX / bin_size) * bin_size, bin_size)
    ]


def memory_stats(
    *,
    caller: Caller,
    user_id: str | None,
    created_from: datetime | None,
    created_to: datetime | None,
    bin_size: int,
    cache_ttl_ms: int,
) -> dict[str, Any]:
    """`{generated_at, cached, counts: {total, active, cold, deprecated, deleted}, bin_size,
    histogram: [{from, to, count}], redactions: {memories, messages}, query_duration_ms}` for
    the scope and window (see the module's docstring)."""
    if user_id is not None:
        user_access_check(caller=caller, user_id=user_id, write=False)
    if not 1 <= bin_size <= BIN_SIZE_MAX:
        raise Invalid(f"bin_size must be 1–{BIN_SIZE_MAX}.", field="bin_size")
    if created_from is not None and created_to is not None and created_from > created_to:
        raise Invalid("The window's start is after its end.", field="created_from")
    scope = {
        "caller": caller,
        "user_id": user_id,
        "created_from": created_from,
        "created_to": created_to,
        "bin_size": bin_size,
    }
    key = stats_cache_key(**scope)
    if cache_ttl_ms > 0:
        held = cache_read(key)
        if held is not None and timezone.now() - held["generated_at"] < timedelta(
            milliseconds=cache_ttl_ms
        ):
            return {**held, "cached": True}
    stats = stats_query(**scope)
    if cache_ttl_ms > 0:
        cache_write(key, stats, timeout=math.ceil(cache_ttl_ms / 1000))
    return {**stats, "cached": False}


def stats_query(
    *,
    caller: Caller,
    user_id: str | None,
    created_from: datetime | None,
    created_to: datetime | None,
    bin_size: int,
) -> dict[str, Any]:
    window = {"user_id": user_id, "created_from": created_from, "created_to": created_to}
    memories = _in_scope(memories_visible_to(caller), **window)
    messages = _in_scope(ConversationMessage.objects.filter(caller.users_q()), **window)
    scope_sql, scope_params = (
        memories.order_by().values("score", "expired_at").query.sql_with_params()
    )
    bins = histogram_bins(bin_size)
    # Deleted rows have no bin; the others one from the score, 100 in the last.
    statement = f"""
        SELECT {state_sql("m")} AS state,
               CASE WHEN {latest_sql("m")}
                    THEN least(floor(m.score::float8 / %s)::int, %s) END AS bin,
               count(*)
        FROM ({scope_sql}) m
        GROUP BY 1, 2
    """
    generated_at = timezone.now()
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(statement, (bin_size, len(bins) - 1, *scope_params))
        rows = cursor.fetchall()
    duration_ms = (time.perf_counter() - started) * 1000
    by_state = dict.fromkeys(STATES, 0)
    by_bin = [0] * len(bins)
    for state, bin_index, count in rows:
        by_state[state] += count
        if bin_index is not None:
            by_bin[bin_index] += count
    return {
        "generated_at": generated_at,
        "redactions": {
            "memories": _redactions(memories),
            "messages": _redactions(messages),
        },
        "counts": {
            "total": sum(count for state, count in by_state.items() if state != "deleted"),
            **by_state,
        },
        "bin_size": bin_size,
        "histogram": [
            {"from": start, "to": end, "count": count}
            for (start, end), count in zip(bins, by_bin, strict=True)
        ],
        "query_duration_ms": round(duration_ms, 3),
    }


def _redactions(rows: QuerySet) -> dict[str, int]:
    """What was redacted from these rows, kind → count (the rows with a redaction, through the
    partial indexes of memories 0016)."""
    counts: Counter[str] = Counter()
    for redactions in rows.filter(redactions__isnull=False).values_list("redactions", flat=True):
        counts.update(redactions)
    return dict(sorted(counts.items()))


def _in_scope(
    rows: QuerySet,
    *,
    user_id: str | None,
    created_from: datetime | None,
    created_to: datetime | None,
) -> QuerySet:
    """`rows` (memories or messages, already limited to what the caller may read) of the
    statistics' user and window."""
    if user_id is not None:
        rows = rows.filter(user_id=user_id)
    if created_from is not None:
        rows = rows.filter(created_at__gte=created_from)
    if created_to is not None:
        rows = rows.filter(created_at__lte=created_to)
    return rows


def stats_cache_key(
    *,
    caller: Caller,
    user_id: str | None,
    created_from: datetime | None,
    created_to: datetime | None,
    bin_size: int,
) -> str:
    """The scope (staff: everything; else the caller's prefixes), the parameters, and the state
    thresholds (a changed threshold must not answer from before the change)."""
    scope = "staff" if caller.is_staff else sorted(caller.user_prefixes)
    parts = [
        scope,
        user_id,
        created_from.isoformat() if created_from else None,
        created_to.isoformat() if created_to else None,
        bin_size,
        STATE_THRESHOLDS,
    ]
    digest = hashlib.sha256(json.dumps(parts).encode()).hexdigest()
    return f"{CACHE_NAMESPACE}:{digest}"


def cache_read(key: str) -> dict[str, Any] | None:
    """The answer cached under `key`, unless a purge committed after it was made."""
    mark = _outdated_before_key()
    try:
        held = cache.get_many([key, mark])
    except redis.RedisError:
        log.warning("memory stats: the cache could not be read", exc_info=True)
        return None
    stats, outdated_before = held.get(key), held.get(mark)
    if stats is None or (outdated_before is not None and stats["generated_at"] <= outdated_before):
        return None
    return stats


def stats_cache_outdate() -> None:
    """Every answer cached until now is stale (after a purge); best effort: they expire within
    a day anyway."""
    try:
        cache.set(_outdated_before_key(), timezone.now(), timeout=CACHE_TTL_MS_MAX // 1000)
    except redis.RedisError:
        log.warning("memory stats: cached answers not outdated: Redis unavailable", exc_info=True)


def cache_write(key: str, stats: dict[str, Any], *, timeout: int) -> None:
    try:
        cache.set(key, stats, timeout=timeout)
    except redis.RedisError:
        log.warning("memory stats: the cache could not be written", exc_info=True)
