"""Background work handed to the Celery worker once the current transaction commits.

Services enqueue by task name, so they never import task modules (tasks import services). A
publish that fails is logged and dropped: by then the write is committed, and every job
enqueued here is also found again by a beat job (pending embeddings no task holds, within a
minute; the hourly index refresh), so a lost publish delays work, never loses it.
"""

import logging
from collections.abc import Callable
from typing import Any

from celery import current_app
from django.db import transaction

log = logging.getLogger("neuromem.jobs")


def enqueue_on_commit(
    task_name: str,
    *arg_lists: list[Any],
    on_published: Callable[[list[Any]], None] | None = None,
) -> None:
    """After commit, publish `task_name` once per argument list, in order, calling
    `on_published(args)` after each publish that succeeded; stop at the first failed publish
    (the next would only wait out the same broker timeout)."""

    def publish() -> None:
        for done, args in enumerate(arg_lists):
            try:
                current_app.send_task(task_name, args=tuple(args))
            except Exception:  # kombu/redis errors alike: the broker is down or hung
                log.warning(
                    "%s: %d of %d tasks not published (broker unavailable); beat will catch up",
                    task_name,
                    len(arg_lists) - done,
                    len(arg_lists),
                    exc_info=True,
                )
                return
            if on_published is not None:
                on_published(args)

    transaction.on_commit(publish)
