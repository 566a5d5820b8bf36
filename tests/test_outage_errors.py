"""Which real database errors mean "the database is away" (503 UNAVAILABLE) and which stay
errors of the statement (500): core/db/outages.py, on errors PostgreSQL and psycopg raise."""

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest
from django.db import connection

from core.db.outages import database_unavailable
from tests.memories.scratch import server_url


def raised(action: Callable[[], object]) -> BaseException:
    with pytest.raises(Exception) as caught:
        action()
    return caught.value


def terminate(pid: int) -> None:
    with psycopg.connect(server_url("postgres"), autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [pid])


@pytest.fixture
def conn() -> Iterator[psycopg.Connection]:
    with psycopg.connect(server_url("postgres"), autocommit=True) as connection:
        yield connection


def test_a_server_that_cannot_be_reached_is_away(tmp_path: Path):
    error = raised(lambda: psycopg.connect(f"host={tmp_path} dbname=postgres connect_timeout=2"))
    assert database_unavailable(error)


def test_a_connection_the_server_ended_is_away(conn: psycopg.Connection):
    terminate(conn.info.backend_pid)
    assert database_unavailable(raised(lambda: conn.execute("SELECT 1")))
    assert database_unavailable(raised(lambda: conn.execute("SELECT 1")))  # closed since


def test_a_statement_timeout_is_away(conn: psycopg.Connection):
    conn.execute("SET statement_timeout = 10")
    error = raised(lambda: conn.execute("SELECT pg_sleep(1)"))
    assert isinstance(error, psycopg.errors.QueryCanceled)
    assert database_unavailable(error)


def test_a_deadlock_rolled_back_is_away_for_a_moment():
    """Two transactions each waiting for the other's lock: PostgreSQL rolls one back, and the
    same request again finds the other done."""
    errors: list[BaseException] = []
    both_hold = threading.Barrier(2)

    def take(held: int, wanted: int) -> None:
        with psycopg.connect(server_url("postgres")) as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", [held])
            both_hold.wait(timeout=30)
            try:
                conn.execute("SELECT pg_advisory_xact_lock(%s)", [wanted])
            except psycopg.Error as error:
                errors.append(error)
                conn.rollback()  # its locks go: the other transaction goes on

    sides = [threading.Thread(target=take, args=pair) for pair in ((1, 2), (2, 1))]
    for side in sides:
        side.start()
    for side in sides:
        side.join(timeout=60)
    (deadlock,) = errors
    assert isinstance(deadlock, psycopg.errors.DeadlockDetected)
    assert database_unavailable(deadlock)


def test_errors_of_the_statement_are_not(conn: psycopg.Connection):
    conn.execute("CREATE TEMPORARY TABLE t (id int PRIMARY KEY)")
    conn.execute("INSERT INTO t VALUES (1)")
    errors = [
        raised(lambda: conn.execute("SELEC 1")),
        raised(lambda: conn.execute("SELECT 1 / 0")),
        raised(lambda: conn.execute("INSERT INTO t VALUES (1)")),
        raised(lambda: conn.execute("SELECT * FROM no_such_table")),
    ]
    cursor = conn.cursor()
    cursor.close()
    errors.append(raised(lambda: cursor.execute("SELECT 1")))  # InterfaceError: misuse
    assert [database_unavailable(error) for error in errors] == [False] * 5


@pytest.mark.django_db(transaction=True)
def test_django_wrapped_errors_are_told_apart_alike():
    with connection.cursor() as cursor:
        assert not database_unavailable(raised(lambda: cursor.execute("SELECT 1 / 0")))
    terminate(connection.connection.info.backend_pid)
    try:
        with connection.cursor() as cursor:
            error = raised(lambda: cursor.execute("SELECT 1"))
        assert type(error).__module__ == "django.db.utils"
        assert database_unavailable(error)
    finally:
        connection.close()
