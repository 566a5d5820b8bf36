"""Who changes memories: the audit trigger records the actor of the transaction."""

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection, transaction


@contextmanager
def audit_actor(actor: str) -> Iterator[None]:
    """`with audit_actor("reflection"): ...` — changes inside the block are recorded as made
    by `actor`. Opens an atomic block (the setting is transaction-local) and gives the previous
    actor back at its end, so a nested call by another actor does not relabel what follows.
    (On an error the block's savepoint rolls the setting back by itself.)"""
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT current_setting('neuromem.actor', true),"
                " set_config('neuromem.actor', %s, true)",
                [actor[:50]],
            )
            previous = cursor.fetchone()[0] or ""
        yield
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config('neuromem.actor', %s, true)", [previous])
