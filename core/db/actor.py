"""Who changes memories, and why: the audit trigger records the actor of the transaction, and
logs a forget (without content) while a forget request is being applied."""

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection, transaction


@contextmanager
def _transaction_setting(name: str, value: str) -> Iterator[None]:
    """Set the transaction-local `name` for the block; give the previous value back at its end,
    so a nested call does not relabel what follows. (On an error the block's savepoint rolls
    the setting back by itself.)"""
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT current_setting(%s, true), set_config(%s, %s, true)", [name, name, value]
            )
            previous = cursor.fetchone()[0] or ""
        yield
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config(%s, %s, true)", [name, previous])


@contextmanager
def audit_actor(actor: str) -> Iterator[None]:
    """`with audit_actor("reflection"): ...` — changes inside the block are recorded as made
    by `actor`. Opens an atomic block (the setting is transaction-local)."""
    with _transaction_setting("neuromem.actor", actor[:50]):
        yield


@contextmanager
def forgetting(request_id: str) -> Iterator[None]:
    """Changes of content inside the block erase it for the forget request `request_id`: the
    audit trigger logs them as FORGET events naming the request, without the content."""
    with _transaction_setting("neuromem.forgetting", request_id):
        yield
