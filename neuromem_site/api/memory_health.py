"""`GET /api/health/memory-system`: seed 004's health of the memory system, from real data.

Unlike `/api/v1/health/` it needs an API token, like every other route: the memory overview
is the caller's (one end user with `user_id`, NOT_FOUND outside its prefixes; without it,
every end user the client reaches: its prefixes, or the whole system for staff).

- `scheduler.available`: Celery beat's heartbeat is fresh (BEAT_HEARTBEAT_MAX_AGE).
- `scheduler.totalTaskCount`: enabled beat schedules (django-celery-beat's PeriodicTask).
- `scheduler.runningTaskCount`: job runs (`job_runs`) still `running` that started within
  RECENT_RUNS (an hour: longer than any job's time limit, so older ones died unrecorded).
- `scheduler.lastRunAt`, `lastRunStatus`: the score job's (`score-memories`) last recorded run,
  skipped runs aside. `nextRunAt`: its schedule (interval, or crontab) after the later of
  beat's record of its last dispatch and the job's last recorded run; in the past when the job
  is overdue; null without an enabled schedule or any run. Epoch milliseconds.
- `memoryOverview`: memories.stats.memory_stats, computed afresh (not cached).
- `performance.statisticsQueryDurationMs`: that statistics query's own duration.
- `performance.schedulerFailureRate`: failed / finished (done or failed) runs of every
  scheduled job that started within RECENT_RUNS; 0 with none finished.

`status` is `healthy`; `degraded` when anything in `reasons` holds: beat unavailable, a recent
job run failed, the score job has no enabled schedule, or no run of it is recorded since it was
due (OVERDUE_GRACE aside); `unhealthy` (503 UNAVAILABLE, the same `data` beside `error`) when
the database fails under these reads.
"""

import logging
from datetime import datetime, timedelta
from typing import Any

from celery.utils.time import remaining
from django.conf import settings
from django.db import DatabaseError
from django.db.models import Count, Q
from django.utils import timezone
from django_celery_beat.models import PeriodicTask
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.access import Caller
from core.models import JobRun, JobStatus
from memories.api.stats import EpochMsField, KnownQueryInput
from memories.stats import memory_stats
from memories.tasks import SCORE_JOB, score_memories
from neuromem_site.api.envelope import error_body
from neuromem_site.api.health import check_beat
from neuromem_site.api.permissions import user_ids_agree
from neuromem_site.api.schema import OUTSIDE_PREFIXES
from neuromem_site.api.serializers import UserIdLookupField, validated_input

log = logging.getLogger("neuromem.health")

# The score job: its job_runs name and its beat schedule's task (memories/migrations/0010).
SCORE_TASK = score_memories.name
RECENT_RUNS = timedelta(hours=1)
# A run of the score job may start this late after it was due before the job is overdue.
OVERDUE_GRACE = timedelta(minutes=10)


def next_run_after(task: PeriodicTask, last_run_at: datetime) -> datetime:
    """When beat runs `task` next, given its last run: what beat itself would compute."""
    if task.interval is not None:
        return last_run_at + timedelta(**{task.interval.period: task.interval.every})
    if task.crontab is not None:
        start, delta, now = task.crontab.schedule.remaining_delta(last_run_at)
        return now + remaining(start, delta, now)
    return timezone.now() + task.schedule.remaining_estimate(last_run_at)  # solar, clocked


def scheduler_state(*, now: datetime) -> tuple[dict[str, Any], float, list[str]]:
    """The scheduler block, the failure rate and the reasons it gives to be degraded."""
    reasons = []
    try:
        check_beat()
        available = True
    except RuntimeError as error:  # check_beat's own words: no heartbeat, or a stale one
        available = False
        reasons.append(f"scheduler unavailable: {error}")
    except Exception as error:  # Redis failing: beat cannot be shown alive
        # The error's own text may name hosts and ports: logged, not answered.
        log.warning("memory-system health: the beat check failed", exc_info=True)
        available = False
        reasons.append(f"scheduler unavailable: {type(error).__name__}")
    runs = JobRun.objects.filter(started_at__gte=now - RECENT_RUNS).aggregate(
        finished=Count("id", filter=Q(status__in=[JobStatus.DONE, JobStatus.FAILED])),
        failed=Count("id", filter=Q(status=JobStatus.FAILED)),
        running=Count("id", filter=Q(status=JobStatus.RUNNING)),
    )
    if runs["failed"]:
        reasons.append(
            f"{runs['failed']} of {runs['finished']} scheduled job runs in the last "
            f"{RECENT_RUNS.total_seconds() / 3600:g} h failed"
        )
    score_runs = JobRun.objects.filter(job=SCORE_JOB).order_by("-started_at")
    last_run = score_runs.exclude(status=JobStatus.SKIPPED).first()
    last_seen = score_runs.first()  # a skipped run too: the worker took the job then
    task = (
        PeriodicTask.objects.filter(task=SCORE_TASK, enabled=True)
        .select_related("interval", "crontab", "solar", "clocked")
        .order_by("name")
        .first()
    )
    next_run_at = None
    if task is None:
        reasons.append(f"the score job ({SCORE_TASK}) has no enabled schedule")
    else:
        known = [at for at in (task.last_run_at, last_seen and last_seen.started_at) if at]
        if known:
            next_run_at = next_run_after(task, max(known))
        if last_seen is not None:
            due = next_run_after(task, last_seen.started_at)
            if due < now - OVERDUE_GRACE:
                reasons.append(
                    f"the score job has not run since {last_seen.started_at.isoformat()}; "
                    f"it was due at {due.isoformat()}"
                )
    scheduler = {
        "available": available,
        "total_task_count": PeriodicTask.objects.filter(enabled=True).count(),
        "running_task_count": runs["running"],
        "last_run_at": last_run and last_run.started_at,
        "last_run_status": last_run and last_run.status,
        "next_run_at": next_run_at,
        "recent_runs": {
            "window_ms": int(RECENT_RUNS.total_seconds() * 1000),
            "finished": runs["finished"],
            "failed": runs["failed"],
        },
    }
    failure_rate = round(runs["failed"] / runs["finished"], 4) if runs["finished"] else 0.0
    return scheduler, failure_rate, reasons


def memory_system_health(*, caller: Caller, user_id: str | None) -> dict[str, Any]:
    now = timezone.now()
    try:
        overview = memory_stats(
            caller=caller,
            user_id=user_id,
            created_from=None,
            created_to=None,
            bin_size=settings.STATS_HISTOGRAM_BIN_SIZE,
            cache_ttl_ms=0,
        )
        scheduler, failure_rate, reasons = scheduler_state(now=now)
    except DatabaseError as error:
        log.warning("memory-system health: the database failed", exc_info=True)
        return {
            "status": "unhealthy",
            # The error's own text may name the server: logged above, not answered.
            "reasons": [f"database unavailable ({type(error).__name__})"],
            "scheduler": None,
            "memory_overview": None,
            "performance": None,
        }
    counts = overview["counts"]
    return {
        "status": "degraded" if reasons else "healthy",
        "reasons": reasons,
        "scheduler": scheduler,
        "memory_overview": {
            "generated_at": overview["generated_at"],
            "user_id": user_id,
            "total_count": counts["total"],
            "states": {state: count for state, count in counts.items() if state != "total"},
        },
        "performance": {
            "statistics_query_duration_ms": overview["query_duration_ms"],
            "scheduler_failure_rate": failure_rate,
        },
    }


# --- HTTP (seed 004's camelCase) -------------------------------------------------------------


class MemoryHealthInput(KnownQueryInput):
    user_id = UserIdLookupField(
        required=False,
        help_text="The overview of one end user; without it, of every end user the client "
        "reaches (staff: the whole system).",
    )


class MemoryHealthRecentRunsOutput(serializers.Serializer):
    windowMs = serializers.IntegerField(source="window_ms")
    finished = serializers.IntegerField(help_text="Runs done or failed.")
    failed = serializers.IntegerField()


class MemoryHealthSchedulerOutput(serializers.Serializer):
    available = serializers.BooleanField(help_text="Celery beat's heartbeat is fresh.")
    totalTaskCount = serializers.IntegerField(
        source="total_task_count", help_text="Enabled beat schedules."
    )
    runningTaskCount = serializers.IntegerField(
        source="running_task_count", help_text="Job runs still running, started within the hour."
    )
    lastRunAt = EpochMsField(source="last_run_at", allow_null=True)
    lastRunStatus = serializers.ChoiceField(
        JobStatus.values, source="last_run_status", allow_null=True
    )
    nextRunAt = EpochMsField(source="next_run_at", allow_null=True)
    recentRuns = MemoryHealthRecentRunsOutput(source="recent_runs")


class MemoryHealthStatesOutput(serializers.Serializer):
    active = serializers.IntegerField()
    cold = serializers.IntegerField()
    deprecated = serializers.IntegerField()
    deleted = serializers.IntegerField()


class MemoryHealthOverviewOutput(serializers.Serializer):
    generatedAt = EpochMsField(source="generated_at")
    userId = serializers.CharField(source="user_id", allow_null=True)
    totalCount = serializers.IntegerField(source="total_count", help_text="Not deleted.")
    states = MemoryHealthStatesOutput()


class MemoryHealthPerformanceOutput(serializers.Serializer):
    statisticsQueryDurationMs = serializers.FloatField(source="statistics_query_duration_ms")
    schedulerFailureRate = serializers.FloatField(
        source="scheduler_failure_rate",
        help_text="Failed / finished runs of the scheduled jobs started within the hour.",
    )


class MemorySystemHealthOutput(serializers.Serializer):
    status = serializers.ChoiceField(["healthy", "degraded", "unhealthy"])
    reasons = serializers.ListField(
        child=serializers.CharField(), help_text="Why it is not healthy; empty when it is."
    )
    scheduler = MemoryHealthSchedulerOutput(allow_null=True)
    memoryOverview = MemoryHealthOverviewOutput(source="memory_overview", allow_null=True)
    performance = MemoryHealthPerformanceOutput(allow_null=True)


class MemorySystemHealthApi(APIView):
    """The scheduler, the memory overview and the statistics query's performance."""

    @extend_schema(
        operation_id="seed_memory_system_health",
        parameters=[MemoryHealthInput],
        responses={
            200: MemorySystemHealthOutput,
            404: OUTSIDE_PREFIXES,
            503: OpenApiResponse(
                description="Unhealthy: the database failed (UNAVAILABLE); `data` beside "
                "`error` as on a 200"
            ),
        },
    )
    def get(self, request: Request) -> Response:
        user_id = validated_input(MemoryHealthInput, request.query_params).get("user_id")
        if user_id is not None:
            user_ids_agree(request, user_id)
        health = memory_system_health(caller=request.user.caller, user_id=user_id)
        data = MemorySystemHealthOutput(health).data
        if health["status"] != "unhealthy":
            return Response(data)
        body = error_body("UNAVAILABLE", f"The memory system is unhealthy: {health['reasons'][0]}")
        body["data"] = data
        return Response(body, status=503)
