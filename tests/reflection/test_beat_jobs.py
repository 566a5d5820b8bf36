"""Beat's reflection jobs, sent by name to a real Celery worker process: what they change in
the database, the `job_runs` row each run leaves (done, skipped while another run holds the
job's lock, failed with its error), and the schedules migration 0003 seeds."""

import importlib
import time
import uuid
from datetime import timedelta

import psycopg
import pytest
from celery.app.backends import by_url
from django.apps import apps as django_apps
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from core.db.locks import LockNamespace, single_flight
from core.job_runs import job_run
from core.models import JobRun, JobStatus
from memories.models import Memory
from memories.tasks import SKIPPED
from neuromem_site.celery import app as celery_app
from reflection.models import (
    ConsistencyIssue,
    ReflectionCycle,
    ReflectionStatus,
    TraitDecayed,
    TraitEvidence,
)
from tests.memories.scratch import server_url
from tests.worker import celery_worker, worker_hostname

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
DAY = timedelta(days=1)
WORKER = worker_hostname("test-beat")
beat_schedules = importlib.import_module("reflection.migrations.0003_beat_schedules")

# Beat entry (the job's name in job_runs) → (task, the lock of its single flight).
JOBS = {
    "reflection-triggers": (
        "reflection.tasks.reflect_due_users",
        LockNamespace.REFLECTION_TRIGGERS,
    ),
    "refresh-trait-decay-view": (
        "reflection.tasks.refresh_trait_view",
        LockNamespace.TRAIT_VIEW_REFRESH,
    ),
    "expire-trends": ("reflection.tasks.expire_trends", LockNamespace.TRENDS_EXPIRE),
    "dissolve-weak-traits": (
        "reflection.tasks.dissolve_weak_traits",
        LockNamespace.WEAK_TRAITS_DISSOLVE,
    ),
    "consistency-check": ("reflection.tasks.check_consistency", LockNamespace.CONSISTENCY_CHECK),
}


@pytest.fixture(scope="module")
def results():
    """The worker stores results here (the project ignores them): the broker's Redis."""
    backend_cls, url = by_url(settings.CELERY_BROKER_URL, celery_app.loader)
    return backend_cls(app=celery_app, url=url)


@pytest.fixture(scope="module")
def worker(django_db_setup, results):
    """One worker for the module, on the test database (tables are emptied between tests)."""
    with celery_worker(
        hostname=WORKER,
        EMBEDDING_PROVIDER="hashing",
        EMBEDDING_DIM=str(settings.EMBEDDING_DIM),
        CELERY_RESULT_BACKEND=settings.CELERY_BROKER_URL,
    ) as process:
        yield process


@pytest.fixture
def run(worker, results):
    """`run("reflection.tasks.expire_trends")`: send the task by name, wait for its answer."""

    def send(task: str, *args):
        sent = celery_app.send_task(task, args=args, ignore_result=False)
        return celery_app.AsyncResult(sent.id, backend=results).get(timeout=60)

    return send


def last_run(job: str) -> JobRun:
    return JobRun.objects.filter(job=job).latest("id")


def make_trait(user_id: str = "u1", **fields) -> Memory:
    values = {
        "content": f"trait {uuid.uuid4().hex[:8]}",
        "trait_subtype": "behavior",
        "trait_stage": "emerging",
        "trait_confidence": 0.4,
        "trait_reinforcement_count": 0,
        **fields,
    }
    return Memory.objects.create(user_id=user_id, memory_type="trait", **values)


def test_the_worker_runs_each_beat_job_and_records_it(run):
    now = timezone.now()
    promoted = make_trait(
        trait_stage="trend", trait_reinforcement_count=2, trait_window_end=now - DAY
    )
    ended = make_trait(trait_stage="trend", trait_reinforcement_count=0, trait_window_end=now - DAY)
    weak = make_trait(trait_last_reinforced=now - 500 * DAY)
    kept = make_trait(trait_last_reinforced=now - 10 * DAY)
    dangling = TraitEvidence.objects.create(
        trait_id=kept.id, memory_id=uuid.uuid4(), evidence_type="supporting", quality="B"
    )

    assert run("reflection.tasks.expire_trends") == {"promoted": 1, "dissolved": 1}
    job = last_run("expire-trends")
    assert (job.status, job.rows, job.detail) == (
        JobStatus.DONE,
        2,
        {"promoted": 1, "dissolved": 1},
    )
    assert job.finished_at >= job.started_at and job.error == ""
    stages = Memory.objects.filter(pk__in=[promoted.pk, ended.pk]).values_list("pk", "trait_stage")
    assert dict(stages) == {promoted.pk: "candidate", ended.pk: "dissolved"}

    assert run("reflection.tasks.dissolve_weak_traits") == 1
    assert Memory.objects.get(pk=weak.pk).trait_stage == "dissolved"
    assert (last_run("dissolve-weak-traits").status, last_run("dissolve-weak-traits").rows) == (
        JobStatus.DONE,
        1,
    )

    # The candidate and the kept trait are believed; trends and dissolved traits are not.
    assert run("reflection.tasks.refresh_trait_view") == 2
    assert set(TraitDecayed.objects.values_list("id", flat=True)) == {promoted.pk, kept.pk}
    assert last_run("refresh-trait-decay-view").rows == 2

    issues = run("reflection.tasks.check_consistency")
    assert issues["evidence_memory"] == 1 and sum(issues.values()) == 1
    issue = ConsistencyIssue.objects.get()
    assert (issue.row_id, issue.missing_id) == (str(dangling.id), str(dangling.memory_id))
    assert TraitEvidence.objects.filter(pk=dangling.pk).exists()  # reported, not deleted
    assert (last_run("consistency-check").rows, last_run("consistency-check").detail) == (
        1,
        issues,
    )


def test_the_trigger_job_queues_a_cycle_the_worker_then_runs(run):
    for n in range(4):
        Memory.objects.create(
            user_id="u1", memory_type="fact", content=f"went running, day {n}", importance=0.8
        )
    queued = run("reflection.tasks.reflect_due_users")
    assert queued == {
        "failed": 0,
        "republished": 0,
        "importance_accumulated": 1,
        "idle": 0,
        "scheduled": 0,
    }
    job = last_run("reflection-triggers")
    assert (job.status, job.rows, job.detail) == (JobStatus.DONE, 1, queued)
    cycle = ReflectionCycle.objects.get(user_id="u1")
    assert cycle.trigger_type == "importance_accumulated"
    # Published after commit, run by the same worker: it leaves `queued`, then `running`.
    deadline = time.monotonic() + 60
    while cycle.status in (ReflectionStatus.QUEUED, ReflectionStatus.RUNNING):
        assert time.monotonic() < deadline, f"the cycle stayed {cycle.status}"
        time.sleep(0.2)
        cycle.refresh_from_db()
    assert cycle.status == ReflectionStatus.COMPLETED, cycle.error_message
    # Running a cycle again changes nothing: it is no longer queued.
    assert run("reflection.tasks.run_reflection_cycle", str(cycle.id)) == "completed"


@pytest.mark.parametrize("entry", list(JOBS))
def test_a_job_whose_lock_is_held_answers_skipped_and_is_recorded(run, entry):
    task, namespace = JOBS[entry]
    with psycopg.connect(server_url(connection.settings_dict["NAME"])) as other:
        other.execute("SELECT pg_advisory_lock(%s, hashtext(''))", [int(namespace)])
        assert run(task) == SKIPPED
    job = last_run(entry)
    assert (job.status, job.rows) == (JobStatus.SKIPPED, None)
    assert job.finished_at == job.started_at
    # The lock went with the other connection: the next run runs.
    assert run(task) != SKIPPED
    assert last_run(entry).status == JobStatus.DONE


def test_beat_schedules_the_jobs_by_the_task_names_the_worker_knows(worker):
    # Seeded by migration 0003; seeded again here, since a transactional test before this one
    # may have flushed them (seeding leaves existing entries alone).
    beat_schedules.schedules_seed(django_apps, None)
    entries = {
        task.name: task
        for task in PeriodicTask.objects.filter(name__in=JOBS).select_related("crontab", "interval")
    }
    assert {name: task.task for name, task in entries.items()} == {
        name: task for name, (task, _) in JOBS.items()
    }
    crontabs = {
        name: (t.crontab.minute, t.crontab.hour, t.crontab.day_of_week, str(t.crontab.timezone))
        for name, t in entries.items()
        if t.crontab is not None
    }
    assert crontabs == {
        "refresh-trait-decay-view": ("*/30", "*", "*", "UTC"),
        "expire-trends": ("0", "3", "*", "UTC"),
        "dissolve-weak-traits": ("0", "4", "1", "UTC"),
        "consistency-check": ("0", "5", "*", "UTC"),
    }
    triggers = entries["reflection-triggers"].interval
    assert (triggers.every, triggers.period) == (300, "seconds")
    assert all(task.enabled for task in entries.values())
    inspect = celery_app.control.inspect(destination=[WORKER], limit=1, timeout=10)
    registered = set(inspect.registered()[WORKER])
    expected = {task for task, _ in JOBS.values()} | {"reflection.tasks.run_reflection_cycle"}
    assert expected <= registered


# --- job_run ---------------------------------------------------------------------------------


def test_a_failed_job_is_recorded_with_its_error_and_its_work_rolled_back():
    with (
        pytest.raises(ValueError, match="boom"),
        job_run("test-job", LockNamespace.CONSISTENCY_CHECK) as record,
    ):
        record.rows, record.detail = 3, {"step": "writing"}
        with transaction.atomic():
            Memory.objects.create(user_id="u1", memory_type="fact", content="rolled back")
            raise ValueError("boom")
    job = last_run("test-job")
    assert (job.status, job.rows, job.detail, job.error) == (
        JobStatus.FAILED,
        3,
        {"step": "writing"},
        "ValueError: boom",
    )
    assert job.finished_at is not None
    assert not Memory.objects.exists()
    with single_flight(LockNamespace.CONSISTENCY_CHECK) as running:
        assert running  # the failed run let go of the lock


def test_a_job_run_refuses_to_start_inside_a_transaction():
    with (
        transaction.atomic(),
        pytest.raises(RuntimeError, match="inside a transaction"),
        job_run("test-job", LockNamespace.CONSISTENCY_CHECK),
    ):
        pass
    assert not JobRun.objects.exists()
