"""psycopg's own cursor on a Django connection, for the statements Django's cursor cannot send
as they should go: Django's binds values on the client, so it can neither prepare a statement
nor send a vector in binary."""

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from typing import TypeVar

import psycopg
from django.db import connection
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Field, Model
from django.db.models.expressions import Col

M = TypeVar("M", bound=Model)


@contextmanager
def psycopg_cursor(
    database: BaseDatabaseWrapper,
    *,
    adapt: Callable[[psycopg.Connection], None] | None = None,
) -> Iterator[psycopg.Cursor]:
    """A server-side-binding cursor on `database`'s connection (same transaction), made as
    Django makes its own: the connection's health checked first (CONN_HEALTH_CHECKS), and its
    errors raised as Django's, which marks the connection for a check at the request's end.
    Without both, a connection the database ended stays in use: every later statement on it
    fails until it is closed for its age, and never in a process that serves no requests (the
    MCP server over stdio). `adapt`: called with the connection before the cursor is made,
    which takes the connection's adapters as they are then. Unlike Django's, its statements
    pass no execute wrapper (the per-statement metric, `connection.queries`) and get no trace
    span of their own."""
    database.validate_thread_sharing()
    database.close_if_health_check_failed()
    database.ensure_connection()
    with database.wrap_database_errors:
        if adapt is not None:
            adapt(database.connection)
        cursor = psycopg.Cursor(database.connection)
        try:
            yield cursor
        finally:
            cursor.close()


def row_loader(model: type[M], fields: Sequence[Field]) -> Callable[[Sequence], M]:
    """Builds a `model` instance from a row of `fields`' columns, their values converted as the
    ORM converts them. The converters are looked up once, at the first row: made at import, a
    loader needs no database setting yet."""
    names = [field.attname for field in fields]

    @cache
    def conversions() -> list[tuple[int, Col, list]]:
        found = []
        for n, field in enumerate(fields):
            column = field.get_col(model._meta.db_table)
            converters = connection.ops.get_db_converters(column) + column.get_db_converters(
                connection
            )
            if converters:
                found.append((n, column, converters))
        return found

    def load(row: Sequence) -> M:
        values = list(row)
        for n, column, converters in conversions():
            for convert in converters:
                values[n] = convert(values[n], column, connection)
        return model.from_db(connection.alias, names, values)

    return load
