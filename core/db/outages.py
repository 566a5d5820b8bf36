"""Which database errors mean "the database is away" (answered 503 UNAVAILABLE with
Retry-After: trying again later will work) rather than "this statement is wrong" (500).

Away: the server cannot be reached, or closed the connection (psycopg raises these without a
SQLSTATE: refused, reset, "server closed the connection unexpectedly", the connect timeout);
a connection exception (class 08); the server shutting down, restarting after a crash or still
starting (57P01-57P03); an idle session it ended (57P05); too many connections (53300).
A statement timeout or an operator's cancel (57014) counts as away too: NeuroMem sets no
statement_timeout, so one comes from an operator shedding load, and the cancelled statement
rolled back, so the same request later is safe. So is a deadlock or a serialization failure
(40P01, 40001): PostgreSQL rolled the whole transaction back, and the same request a moment
later finds the other transaction done.

Not away: everything else, syntax and constraint errors, bad data, and psycopg's
InterfaceError (misuse of the driver; psycopg 3 reports a closed connection as an
OperationalError).
"""

import psycopg
from django.db import Error as DjangoDatabaseError

UNAVAILABLE_SQLSTATES = frozenset(
    {"57P01", "57P02", "57P03", "57P05", "53300", "57014", "40P01", "40001"}
)


def database_unavailable(error: BaseException) -> bool:
    """Whether `error` (psycopg's, or Django's wrapping of it) says the database is away."""
    if isinstance(error, DjangoDatabaseError) and error.__cause__ is not None:
        error = error.__cause__
    if not isinstance(error, psycopg.OperationalError):
        return False
    sqlstate = error.sqlstate
    return sqlstate is None or sqlstate.startswith("08") or sqlstate in UNAVAILABLE_SQLSTATES
