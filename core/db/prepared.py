"""How many prepared statements a database connection keeps: recall prepares its statement
(memories/recall.py), one for the users without indexes of their own and one for each user
with, per statement shape, the user's entities (memories/graph/answering.py) and the believed
traits' (reflection/selectors.py); every request, the API token's lookup
(neuromem_site/api/selectors.py). Each holds its generic plan in the PostgreSQL backend, over a
megabyte for recall's (docs/recall.md): psycopg keeps the most recently used ones and
deallocates the others."""

from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.signals import connection_created
from django.dispatch import receiver

PREPARED_STATEMENTS_MAX = 16


@receiver(connection_created)
def prepared_statements_limit(sender: Any, connection: BaseDatabaseWrapper, **kwargs: Any) -> None:
    connection.connection.prepared_max = PREPARED_STATEMENTS_MAX
