"""Background work handed to the Celery worker once the current transaction commits.

Services enqueue by task name, so they never import task modules (tasks import services). A
publish that fails is logged and dropped: by then the write is committed, and every job
enqueued here is also found again by a beat job (pending embeddings no task holds, within a
minute; the hourly index refresh), so a lost publish delays work, never loses it.
"""

import json
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


def task_queued_or_unacknowledged(task_name: str) -> bool:
    """Whether the broker holds a `task_name` message: anything queued at all (not looked
    into: a queue may be long), or a `task_name` message delivered and not acknowledged yet
    (running, reserved, or waiting for its retry). For kombu's Redis transport, whose keys its
    channel names: a list per priority step of the default queue, and the `unacked` hash. When
    the broker cannot be asked, True: the caller then waits, as if a task held the work."""
    try:
        with current_app.connection_for_read() as connection:
            channel = connection.default_channel
            client = channel.client
            queue = current_app.conf.task_default_queue
            lists = [channel._q_for_pri(queue, step) for step in channel.priority_steps]
            if any(client.llen(name) for name in lists):
                return True
            for raw in client.hvals(channel.unacked_key):
                message = json.loads(raw)[0]
                if message.get("headers", {}).get("task") == task_name:
                    return True
            return False
    except Exception:  # kombu/redis errors alike: the broker is down or hung
        log.warning("could not ask the broker for %s tasks", task_name, exc_info=True)
        return True
