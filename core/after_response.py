"""Bookkeeping a request does that its answer does not depend on (counting the accesses of the
memories it read): inside a request it runs once the answer has gone out, so the client does
not wait for it; anywhere else (a Celery task, the MCP server over stdio, a shell) at once.

Django sends `request_finished` when the server closes the response, after writing it
(gunicorn, the test client alike); the calls are kept per thread, as a worker serves one
request at a time in its thread. A call runs in the context it was made in (its request id in
the logs) but after the request's middleware: no database work here, which would open a
connection the request's timing and outage handling no longer see.
"""

import contextvars
import logging
import threading
from collections.abc import Callable
from typing import Any

from django.core.signals import request_finished, request_started
from django.dispatch import receiver

log = logging.getLogger("neuromem.after_response")

_requests = threading.local()


def after_response(call: Callable[[], None]) -> None:
    """Run `call` once the current request's answer is sent, or now outside a request."""
    pending: list[tuple[contextvars.Context, Callable[[], None]]] | None = getattr(
        _requests, "pending", None
    )
    if pending is None:
        call()
    else:
        pending.append((contextvars.copy_context(), call))


def _run(calls: list[tuple[contextvars.Context, Callable[[], None]]]) -> None:
    for context, call in calls:
        try:
            context.run(call)
        except Exception:  # the answer is out: nobody to tell but the log
            log.exception("Work after a response failed")


@receiver(request_started)
def _request_started(**_: Any) -> None:
    # A response no server closed left its calls behind: they run before this request's.
    _run(getattr(_requests, "pending", None) or [])
    _requests.pending = []


@receiver(request_finished)
def _request_finished(**_: Any) -> None:
    calls = getattr(_requests, "pending", None) or []
    _requests.pending = None
    _run(calls)
