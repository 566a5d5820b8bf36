"""The one Celery app: configured from Django settings (CELERY_*), tasks found in each app.

Its processes log as the settings say (LOG_FORMAT, the request id), not in Celery's own format,
and a task carries the id of the request that queued it (a `request_id` header), set again
around its run in the worker: the task's log lines name the request (docs/operations.md)."""

import os
from logging.config import dictConfig

from celery import Celery
from celery.signals import (
    before_task_publish,
    setup_logging,
    task_postrun,
    task_prerun,
    worker_process_init,
)

from core.logs import REQUEST_ID
from neuromem_site import broker

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "neuromem_site.settings")
broker.install()

app = Celery("neuromem")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@setup_logging.connect
def log_as_the_settings_say(**_) -> None:
    from django.conf import settings

    dictConfig(settings.LOGGING)


@worker_process_init.connect
def trace_when_configured(**_) -> None:
    from neuromem_site.tracing import tracing_configure

    tracing_configure()


@before_task_publish.connect
def carry_the_request_id(headers: dict | None = None, **_) -> None:
    request_id = REQUEST_ID.get()
    if request_id and headers is not None:
        headers.setdefault("request_id", request_id)


@task_prerun.connect
def run_under_the_request_id(task=None, **_) -> None:
    REQUEST_ID.set(getattr(task.request, "request_id", None) or "")


@task_postrun.connect
def forget_the_request_id(**_) -> None:
    REQUEST_ID.set("")
