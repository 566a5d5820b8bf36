"""Reads that may lag, from a read replica (DATABASE_REPLICA_URLS; docs/scaling.md).

Recall, search, listing and export run their reads through `lagging_read`. It reads from a
replica when one is configured, answers, is at most REPLICA_READ_AFTER_WRITE_S behind the
primary, and the caller has not written within that time (a caller reads its own recent
writes from the primary). Otherwise, and when the replica fails during the read, the read runs
on the primary. Every other read, and every write, uses the primary.

A write is noted when the access check lets a caller write (`write_noted`), once its
transaction commits: a key in Redis per caller, living REPLICA_READ_AFTER_WRITE_S. With Redis
away every caller counts as having written: reads go to the primary.
"""

import logging
import random
import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import TypeVar

import redis
from django.conf import settings
from django.db import (
    DEFAULT_DB_ALIAS,
    DatabaseError,
    InterfaceError,
    OperationalError,
    connections,
    transaction,
)
from django.db.backends.base.base import BaseDatabaseWrapper

from core.metrics import LAGGING_READS
from core.redis_client import app_redis

log = logging.getLogger("neuromem.replicas")

T = TypeVar("T")

REPLICA_PREFIX = "replica_"
# How far the replica's replay is behind what it received, in seconds: 0 when it has applied
# all it received (or is not a replica at all), else the age of the last transaction replayed.
LAG_SQL = """
SELECT CASE
    WHEN NOT pg_is_in_recovery() THEN 0
    WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
    ELSE coalesce(
        extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp()), 'Infinity')
END
"""

_read_from: ContextVar[str] = ContextVar("read_from", default=DEFAULT_DB_ALIAS)
# Per process: replica alias → (when it was last looked at, whether it was usable then).
_checked: dict[str, tuple[float, bool]] = {}
# Per process: caller → when this process last noted a write of theirs (fewer Redis calls for
# a batch whose every item passes the access check).
_noted: dict[str, float] = {}


def read_alias() -> str:
    """The database this read goes to: a replica inside `lagging_read`, else the primary."""
    return _read_from.get()


def read_connection() -> BaseDatabaseWrapper:
    return connections[read_alias()]


class ReplicaRouter:
    """ORM reads go where `lagging_read` sends them (the primary outside it); writes and
    migrations to the primary only."""

    def db_for_read(self, model, **hints) -> str:
        return _read_from.get()

    def db_for_write(self, model, **hints) -> str:
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1, obj2, **hints) -> bool:
        return True  # a replica holds the primary's very rows

    def allow_migrate(self, db: str, app_label: str, **hints) -> bool:
        return db == DEFAULT_DB_ALIAS


def replica_aliases() -> list[str]:
    return [alias for alias in settings.DATABASES if alias.startswith(REPLICA_PREFIX)]


def wrote_key(caller_name: str) -> str:
    return f"neuromem:replicas:wrote:{caller_name}"


def write_noted(caller_name: str) -> None:
    """Once the current transaction commits: the caller's reads go to the primary for the
    next REPLICA_READ_AFTER_WRITE_S."""
    if replica_aliases():
        transaction.on_commit(lambda: _write_note(caller_name))


def _write_note(caller_name: str) -> None:
    window = settings.REPLICA_READ_AFTER_WRITE_S
    # Writes within a tenth of the window need no note of their own: the key outlives them.
    skip = window / 10
    now = time.monotonic()
    if now - _noted.get(caller_name, -skip) < skip:
        return
    try:
        app_redis().set(wrote_key(caller_name), 1, px=int((window + skip) * 1000))
        _noted[caller_name] = now
    except redis.RedisError:
        # Unnoted: while Redis stays away lagging_read reads the primary for everyone.
        log.warning("write of %s not noted for the replicas: Redis unavailable", caller_name)


def wrote_recently(caller_name: str) -> bool:
    try:
        return bool(app_redis().exists(wrote_key(caller_name)))
    except redis.RedisError:
        return True


def replica_lag(alias: str) -> float:
    with connections[alias].cursor() as cursor:
        cursor.execute(LAG_SQL)
        (lag,) = cursor.fetchone()
    return float(lag)


def usable(alias: str) -> bool:
    """Whether the replica answers and is close enough behind; looked at again at most every
    REPLICA_CHECK_SECONDS."""
    now = time.monotonic()
    checked_at, ok = _checked.get(alias, (float("-inf"), False))
    if now - checked_at < settings.REPLICA_CHECK_SECONDS:
        return ok
    try:
        lag = replica_lag(alias)
        ok = lag <= settings.REPLICA_READ_AFTER_WRITE_S
        if not ok:
            log.warning("replica %s is %.1f s behind: reading from the primary", alias, lag)
    except DatabaseError as error:
        connections[alias].close()
        ok = False
        log.warning("replica %s is unavailable (%s): reading from the primary", alias, error)
    _checked[alias] = (now, ok)
    return ok


def replica_for(caller_name: str) -> str:
    """Where a lagging read of this caller goes: a usable replica, else the primary."""
    replicas = replica_aliases()
    if not replicas or wrote_recently(caller_name):
        return DEFAULT_DB_ALIAS
    candidates = [alias for alias in random.sample(replicas, len(replicas)) if usable(alias)]
    return candidates[0] if candidates else DEFAULT_DB_ALIAS


def lagging_read(*, caller_name: str, read: Callable[[], T]) -> T:
    """`read()` on a replica where allowed (above), else on the primary. Reads have no effect
    of their own in the database, so one the replica could not answer (away, or a query
    cancelled by its recovery) is run again on the primary."""
    alias = replica_for(caller_name)
    if alias == DEFAULT_DB_ALIAS:
        LAGGING_READS.labels("primary").inc()
        return read()
    token = _read_from.set(alias)
    try:
        result = read()
        LAGGING_READS.labels("replica").inc()
        return result
    except (OperationalError, InterfaceError) as error:
        connections[alias].close()
        _checked[alias] = (time.monotonic(), False)
        log.warning("replica %s failed a read (%s): reading from the primary", alias, error)
    finally:
        _read_from.reset(token)
    LAGGING_READS.labels("primary").inc()
    return read()
