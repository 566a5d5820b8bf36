"""Vectors in bulk: binary halfvec parameters and results, for the few queries that move
many vectors at once (Django's client-side-binding cursor would format every float as text)."""

import re
from collections.abc import Iterator
from contextlib import contextmanager
from weakref import WeakSet

import numpy as np
import psycopg
from django.conf import settings
from django.db import connection
from django.db.models import JSONField
from pgvector import HalfVector
from pgvector.django import HalfVectorField
from pgvector.psycopg.halfvec import register_halfvec_info
from psycopg.types import TypeInfo
from psycopg.types.json import Jsonb

from core.db.cursors import psycopg_cursor
from core.db.replicas import read_connection
from memories.models import Memory

_halfvec_registered: WeakSet[psycopg.Connection] = WeakSet()


def _halfvec_register(raw: psycopg.Connection) -> None:
    if raw not in _halfvec_registered:  # once per database connection: a catalog round trip
        register_halfvec_info(raw, TypeInfo.fetch(raw, "halfvec"))
        _halfvec_registered.add(raw)


@contextmanager
def vector_cursor() -> Iterator[psycopg.Cursor]:
    """psycopg's cursor (core/db/cursors.py) sending and receiving halfvec in binary, on the
    primary's connection, or a replica's inside a lagging read."""
    with psycopg_cursor(read_connection(), adapt=_halfvec_register) as cursor:
        yield cursor


# For the rest of the transaction: HNSW scans go on past other users' rows until they have k
# of this user's (pgvector 0.8 iterative scan), with RECALL_EF_SEARCH candidates. A SELECT list
# fragment, so that recall sets them in the round trip it makes anyway.
ITERATIVE_SCAN_SQL = (
    "set_config('hnsw.iterative_scan', 'relaxed_order', true),"
    " set_config('hnsw.ef_search', %(ef_search)s, true)"
)


def iterative_scan_params() -> dict[str, str]:
    return {"ef_search": str(settings.RECALL_EF_SEARCH)}


def iterative_hnsw_scan(cursor: psycopg.Cursor) -> None:
    cursor.execute(f"SELECT {ITERATIVE_SCAN_SQL}", iterative_scan_params())


def copy_memories(memories: list[Memory]) -> None:
    """Insert many memories with COPY (row triggers, the audit log among them, still fire):
    several times faster than a multi-row INSERT of forty columns. Binary, so a vector is
    2 KB of float16 rather than 1,024 numbers formatted as text."""
    if not memories:
        return
    fields = [field for field in Memory._meta.concrete_fields if not field.generated]
    columns = ", ".join(connection.ops.quote_name(field.column) for field in fields)
    with (
        vector_cursor() as cursor,
        cursor.copy(f"COPY memories ({columns}) FROM STDIN (FORMAT BINARY)") as copy,
    ):
        copy.set_types([_copy_type(field) for field in fields])
        for memory in memories:
            copy.write_row([_copy_value(field, getattr(memory, field.attname)) for field in fields])


def _copy_type(field) -> str:
    """The column's type as psycopg names it: `varchar(255)` → varchar."""
    db_type = re.sub(r"\(\d+\)", "", field.db_type(connection))
    return {"timestamp with time zone": "timestamptz"}.get(db_type, db_type)


def _copy_value(field, value):
    if value is None:
        return None
    if isinstance(field, JSONField):
        return Jsonb(value)
    if isinstance(field, HalfVectorField):
        return HalfVector(value)
    return value


def halfvecs(vectors: list[np.ndarray]) -> list[HalfVector]:
    return [HalfVector(vector) for vector in vectors]
