"""GET /api/health/memory-system (seed 004) from real data: beat's heartbeat, the beat schedules
(the score job's seeded by memories/migrations/0010), recorded job runs, the caller's memories."""

import time
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.core.cache import cache
from django.db import OperationalError
from django.utils import timezone
from django_celery_beat.models import CrontabSchedule, IntervalSchedule, PeriodicTask

import neuromem_site.api.memory_health
from core.models import JobRun, JobStatus
from memories.models import Memory
from neuromem_site.beat import BEAT_HEARTBEAT_KEY, beat_heartbeat_write

pytestmark = pytest.mark.django_db

HEALTH = "/api/health/memory-system"
SCORE_JOB = "score-memories"
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def ms(instant: datetime) -> int:
    return (instant - EPOCH) // timedelta(milliseconds=1)


def run(job: str, status: str, started_at: datetime) -> JobRun:
    finished = None if status == JobStatus.RUNNING else started_at + timedelta(seconds=5)
    return JobRun.objects.create(
        job=job, status=status, started_at=started_at, finished_at=finished
    )


def memory(user_id: str, score: float, **fields) -> Memory:
    tag = uuid.uuid4().hex
    content = f"{user_id} {score} {tag}"
    return Memory.objects.create(
        user_id=user_id,
        memory_type="fact",
        content=content,
        content_hash=tag,
        score=score,
        **fields,
    )


@pytest.fixture
def beat_alive():
    beat_heartbeat_write(now=time.time())
    yield
    cache.delete(BEAT_HEARTBEAT_KEY)


@pytest.fixture
def beat_gone():
    cache.delete(BEAT_HEARTBEAT_KEY)


@pytest.fixture
def staff(make_client):
    return make_client("ops", staff=True)[0]


def health(http, **params) -> tuple[int, dict]:
    response = http.get(HEALTH, params)
    return response.status_code, response.json()


def test_no_token_is_401(anon):
    response = anon.get(HEALTH)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "UNAUTHORIZED"


def test_healthy_with_beat_alive_and_the_score_job_on_time(staff, beat_alive):
    started = timezone.now() - timedelta(minutes=1)
    run(SCORE_JOB, JobStatus.DONE, started)
    status, body = health(staff)
    assert status == 200
    data = body["data"]
    assert (data["status"], data["reasons"]) == ("healthy", [])
    scheduler = data["scheduler"]
    assert scheduler["available"] is True
    assert (scheduler["lastRunAt"], scheduler["lastRunStatus"]) == (ms(started), "done")
    # The seeded schedule: every 900 s after the last run.
    assert scheduler["nextRunAt"] == ms(started + timedelta(seconds=900))
    assert data["performance"]["schedulerFailureRate"] == 0
    assert data["performance"]["statisticsQueryDurationMs"] >= 0


def test_a_failed_score_run_degrades_with_a_failure_rate(staff, beat_alive):
    now = timezone.now()
    failed = run(SCORE_JOB, JobStatus.FAILED, now - timedelta(minutes=2))
    run("expire-trends", JobStatus.DONE, now - timedelta(minutes=10))
    run("expire-trends", JobStatus.SKIPPED, now - timedelta(minutes=9))  # not finished work
    run(SCORE_JOB, JobStatus.FAILED, now - timedelta(hours=3))  # outside the hour
    status, body = health(staff)
    data = body["data"]
    assert status == 200
    assert data["status"] == "degraded"
    assert data["reasons"] == ["1 of 2 scheduled job runs in the last 1 h failed"]
    assert data["performance"]["schedulerFailureRate"] == 0.5
    assert data["scheduler"]["recentRuns"] == {"windowMs": 3_600_000, "finished": 2, "failed": 1}
    assert data["scheduler"]["lastRunAt"] == ms(failed.started_at)
    assert data["scheduler"]["lastRunStatus"] == "failed"


def test_next_run_counts_from_beats_own_record_when_later(staff, beat_alive):
    now = timezone.now()
    run(SCORE_JOB, JobStatus.DONE, now - timedelta(minutes=3))
    dispatched = now - timedelta(minutes=1)
    PeriodicTask.objects.filter(name=SCORE_JOB).update(last_run_at=dispatched)
    scheduler = health(staff)[1]["data"]["scheduler"]
    assert scheduler["nextRunAt"] == ms(dispatched + timedelta(seconds=900))


def test_next_run_of_a_crontab_schedule(staff, beat_alive):
    every_half_hour = CrontabSchedule.objects.create(minute="*/30", hour="*", timezone="UTC")
    PeriodicTask.objects.filter(name=SCORE_JOB).update(interval=None, crontab=every_half_hour)
    run(SCORE_JOB, JobStatus.DONE, datetime(2025, 1, 1, 10, 7, tzinfo=UTC))
    data = health(staff)[1]["data"]
    assert data["scheduler"]["nextRunAt"] == ms(datetime(2025, 1, 1, 10, 30, tzinfo=UTC))
    # Due long ago and nothing ran since: overdue.
    assert data["status"] == "degraded"
    assert data["reasons"] == [
        "the score job has not run since 2025-01-01T10:07:00+00:00; "
        "it was due at 2025-01-01T10:30:00+00:00"
    ]


def test_unknown_next_run_and_no_schedule(staff, beat_alive):
    scheduler = health(staff)[1]["data"]["scheduler"]
    assert (scheduler["lastRunAt"], scheduler["lastRunStatus"], scheduler["nextRunAt"]) == (
        None,
        None,
        None,
    )
    PeriodicTask.objects.filter(name=SCORE_JOB).update(enabled=False)
    data = health(staff)[1]["data"]
    assert data["status"] == "degraded"
    assert data["reasons"] == [
        "the score job (memories.tasks.score_memories) has no enabled schedule"
    ]


def test_task_counts(staff, beat_alive):
    PeriodicTask.objects.exclude(name=SCORE_JOB).delete()
    every_minute, _ = IntervalSchedule.objects.get_or_create(every=60, period="seconds")
    PeriodicTask.objects.create(name="on", task="x.on", interval=every_minute)
    PeriodicTask.objects.create(name="off", task="x.off", interval=every_minute, enabled=False)
    now = timezone.now()
    run("expire-trends", JobStatus.RUNNING, now - timedelta(minutes=1))
    run(SCORE_JOB, JobStatus.RUNNING, now - timedelta(seconds=5))
    run("consistency-check", JobStatus.RUNNING, now - timedelta(hours=2))  # died unrecorded
    scheduler = health(staff)[1]["data"]["scheduler"]
    assert scheduler["totalTaskCount"] == 2  # score-memories and "on"
    assert scheduler["runningTaskCount"] == 2
    assert scheduler["lastRunStatus"] == "running"


def test_beat_without_heartbeat_is_unavailable(staff, beat_gone):
    data = health(staff)[1]["data"]
    assert data["scheduler"]["available"] is False
    assert data["status"] == "degraded"
    assert data["reasons"] == ["scheduler unavailable: Celery beat has written no heartbeat"]


def test_the_overview_is_the_callers(make_client, staff, beat_alive):
    memory("a:1", 80)
    memory("a:2", 20)
    memory("a:2", 50, expired_at=timezone.now())
    memory("b:1", 50)
    agent = make_client("a", ["a:"])[0]
    before = ms(timezone.now())
    overview = health(agent)[1]["data"]["memoryOverview"]
    assert before <= overview["generatedAt"] <= ms(timezone.now())
    assert overview == {
        "generatedAt": overview["generatedAt"],
        "userId": None,
        "totalCount": 2,
        "states": {"active": 1, "cold": 0, "deprecated": 1, "deleted": 1},
    }
    mine = health(agent, user_id="a:2")[1]["data"]["memoryOverview"]
    assert (mine["userId"], mine["totalCount"], mine["states"]["deleted"]) == ("a:2", 1, 1)
    status, body = health(agent, user_id="b:1")
    assert (status, body["error"]["code"]) == (404, "NOT_FOUND")
    overview = health(staff)[1]["data"]["memoryOverview"]
    assert (overview["totalCount"], overview["states"]["cold"]) == (3, 1)


def test_unknown_parameter_is_a_validation_error(staff):
    status, body = health(staff, usr_id="a:1")
    assert status == 400
    assert (body["error"]["code"], body["error"]["field"]) == ("VALIDATION_ERROR", "usr_id")


def test_a_failing_database_is_unhealthy(staff, beat_alive, monkeypatch):
    def fail(**kwargs):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(neuromem_site.api.memory_health, "memory_stats", fail)
    status, body = health(staff)
    assert status == 503
    assert body["ok"] is False
    assert body["error"]["code"] == "UNAVAILABLE"
    assert body["data"]["status"] == "unhealthy"
    assert body["data"]["memoryOverview"] is None
