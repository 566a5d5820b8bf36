from django.db import connection

ACTOR_SYSTEM = "system"
ACTOR_REFLECTION = "reflection"
ACTOR_USER = "user"


def set_actor(actor: str) -> None:
    """Name who is changing memories in this transaction; the audit trigger records it.

    Transaction-local (set_config(..., true)), so call it inside the service's atomic block.
    """
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('neuromem.actor', %s, true)", [actor[:50]])
