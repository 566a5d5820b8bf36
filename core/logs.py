"""Log lines that follow a request: its id on every line written while it is served, and while
the worker runs a task it queued; one JSON object a line with LOG_FORMAT=json, a readable line
otherwise (docs/operations.md, "Logs").

The id lives in a context variable: the request middleware sets it (neuromem_site/metrics.py),
the Celery app carries it in the headers of every task published meanwhile and sets it again
in the worker around the task (neuromem_site/celery.py).
"""

import json
import logging
from contextvars import ContextVar
from datetime import UTC, datetime

REQUEST_ID: ContextVar[str] = ContextVar("request_id", default="")
# Security events (authentication failures, refusals, purges): never a secret nor content.
security_log = logging.getLogger("neuromem.security")

# What every LogRecord has: anything else on a record came as `extra` and is logged as a field.
_RECORD_ATTRIBUTES = {
    *vars(logging.LogRecord("", 0, "", 0, "", None, None)),
    "message",
    "asctime",
    # Django's request logger attaches the request: its repr holds the query string (a
    # search's words), which is never logged.
    "request",
}


class RequestIdFilter(logging.Filter):
    """Puts the current request id on every record (`-` outside of one)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = REQUEST_ID.get() or "-"
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time (UTC, ISO 8601), level, logger, message, then the record's
    extra fields (request_id, client, route, status, duration_ms, event, …), and the exception's
    traceback when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update(
            (name, value)
            for name, value in vars(record).items()
            if name not in _RECORD_ATTRIBUTES and not name.startswith("_")
        )
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str, ensure_ascii=False)
