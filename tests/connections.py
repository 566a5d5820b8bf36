"""Work on a database connection of its own, for tests that look at what one connection holds
(its prepared statements) or that change the database from elsewhere as another process would."""

import threading
from collections.abc import Callable
from typing import TypeVar

from django.db import connection

T = TypeVar("T")
WAIT_SECONDS = 120


def on_a_connection_of_its_own(work: Callable[[], T]) -> T:
    """`work`'s result, run on a new connection (Django's are per thread) that is closed after;
    what it raised is raised here."""
    outcome: list[tuple[T | None, BaseException | None]] = []

    def run() -> None:
        try:
            outcome.append((work(), None))
        except BaseException as error:  # raised again in the caller's thread
            outcome.append((None, error))
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(WAIT_SECONDS)
    assert not thread.is_alive(), f"still at work after {WAIT_SECONDS} s"
    [(result, error)] = outcome
    if error is not None:
        raise error
    return result  # type: ignore[return-value]


def prepared_statements() -> list[str]:
    """The statements this thread's connection holds prepared."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [statement for (statement,) in cursor.fetchall()]
