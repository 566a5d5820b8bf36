"""A scheduled job's run, recorded: one `JobRun` row per run (the admin dashboard and the
health endpoint read the last ones), and one run at a time (`single_flight`).

    with job_run("expire-trends", LockNamespace.TRENDS_EXPIRE) as run:
        if run is None:
            return SKIPPED  # another run holds the lock; recorded as `skipped`
        run.rows = ...
        run.detail = {...}

The row is written in autocommit, before and after the job's own transaction, so a job that
fails (and rolls its work back) still leaves a `failed` row with the error.
"""

import logging
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection
from django.utils import timezone

from core.db.locks import LockNamespace, single_flight
from core.metrics import JOB_DURATION, JOB_RUNS
from core.models import JobRun, JobStatus

log = logging.getLogger("neuromem.jobs")

ERROR_MAX_CHARS = 2000


@dataclass
class JobRunRecord:
    """What the job reports about its run: rows it touched and a small JSON-able detail."""

    id: int
    rows: int | None = None
    detail: dict[str, Any] = field(default_factory=dict)


@contextmanager
def job_run(job: str, namespace: LockNamespace) -> Iterator[JobRunRecord | None]:
    """Run `job` once at a time under `namespace`'s advisory lock, recorded in `job_runs`.
    Yields None (and records `skipped`) when another run holds the lock; else the record the
    job fills in, stored as `done` when the block ends, or `failed` with the error's last
    traceback line when it raises (the error is raised again)."""
    if connection.in_atomic_block:
        raise RuntimeError(
            f"job_run({job!r}) inside a transaction: its record would not survive a failure"
        )
    with single_flight(namespace) as running:
        if not running:
            now = timezone.now()
            JobRun.objects.create(
                job=job, status=JobStatus.SKIPPED, started_at=now, finished_at=now
            )
            JOB_RUNS.labels(job, JobStatus.SKIPPED).inc()
            yield None
            return
        record = JobRunRecord(id=JobRun.objects.create(job=job, status=JobStatus.RUNNING).pk)
        started = time.perf_counter()
        try:
            yield record
        except BaseException as error:
            _finish(record, JobStatus.FAILED, error=_last_line(error))
            JOB_RUNS.labels(job, JobStatus.FAILED).inc()
            raise
        _finish(record, JobStatus.DONE)
        JOB_RUNS.labels(job, JobStatus.DONE).inc()
        JOB_DURATION.labels(job).observe(time.perf_counter() - started)
        # The record is for operations, not history: runs older than JOB_RUNS_KEEP_DAYS go.
        JobRun.objects.filter(
            job=job, started_at__lt=timezone.now() - timedelta(days=settings.JOB_RUNS_KEEP_DAYS)
        ).delete()


def _finish(record: JobRunRecord, status: str, *, error: str = "") -> None:
    try:
        JobRun.objects.filter(pk=record.id).update(
            status=status,
            finished_at=timezone.now(),
            rows=record.rows,
            detail=record.detail,
            error=error,
        )
    except DatabaseError:
        if status != JobStatus.FAILED:
            raise
        # Never hide the job's own error behind the record's (a lost connection, say).
        log.warning("job run %s: recording the failure failed", record.id, exc_info=True)


def _last_line(error: BaseException) -> str:
    """The error as a traceback's last line shows it: `ValueError: the message`."""
    text = "".join(traceback.format_exception_only(type(error), error)).strip()
    return (text or type(error).__name__)[:ERROR_MAX_CHARS]
