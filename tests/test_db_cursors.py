"""psycopg's own cursor on a Django connection (core/db/cursors.py) behaves as Django's: a
connection the database ended is replaced before the statement, and a failed statement
raises Django's error and marks the connection for its check at the request's end."""

from collections.abc import Iterator

import psycopg
import pytest
from django.db import DEFAULT_DB_ALIAS, OperationalError, connections
from django.db.backends.base.base import BaseDatabaseWrapper

from core.db.cursors import psycopg_cursor
from tests.test_outage_errors import terminate

pytestmark = pytest.mark.django_db


@pytest.fixture
def database() -> Iterator[BaseDatabaseWrapper]:
    """A Django connection of its own to the test database: ending the test's own would end
    the transaction the test runs in."""
    own = connections.create_connection(DEFAULT_DB_ALIAS)
    own.ensure_connection()
    try:
        yield own
    finally:
        own.close()


def ended(database: BaseDatabaseWrapper) -> int:
    pid = database.connection.info.backend_pid
    terminate(pid)
    return pid


def test_a_connection_the_database_ended_is_replaced_at_a_request_s_first_statement(database):
    before = ended(database)
    database.health_check_done = False  # as at a request's start (close_old_connections)
    with psycopg_cursor(database) as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        assert cursor.fetchone()[0] != before


def test_a_statement_that_fails_raises_django_s_error_and_the_request_s_end_closes_it(database):
    ended(database)
    database.health_check_done = True  # checked by an earlier statement of the request
    with pytest.raises(OperationalError) as raised, psycopg_cursor(database) as cursor:
        cursor.execute("SELECT 1")
    assert isinstance(raised.value.__cause__, psycopg.OperationalError)
    assert database.errors_occurred
    database.close_if_unusable_or_obsolete()  # as at the request's end
    assert database.connection is None
