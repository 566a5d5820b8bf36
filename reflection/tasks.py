"""Reflection's Celery tasks: the cycles the services queue, and beat's lifecycle jobs (their
schedules live in the database, seeded by migration 0003; a job's name there is the name its
runs are recorded under in `job_runs`). Each beat job runs once at a time: a run that finds
another in flight answers SKIPPED and is recorded as skipped."""

from dataclasses import asdict

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from core.db.locks import LockNamespace
from core.job_runs import job_run
from memories.tasks import LATE_ACK_LIMITS, SKIPPED
from reflection.services.cycles import reflection_cycle_run, reflection_cycles_recover
from reflection.services.maintenance import (
    consistency_check,
    reflection_due_users,
    trait_view_refresh,
    traits_dissolve_weak,
    trends_expire,
)


@shared_task(acks_late=True, **LATE_ACK_LIMITS)
def run_reflection_cycle(cycle_id: str) -> str:
    """Run a queued cycle (queued by `reflection_cycle_request`); answers its status. Running
    it again changes nothing: a cycle no longer queued is left as it is."""
    return str(reflection_cycle_run(cycle_id=cycle_id).status)


@shared_task(acks_late=True, **LATE_ACK_LIMITS)
def reflect_due_users() -> dict[str, int] | str:
    """Beat, every 5 minutes: queue a cycle for each user a trigger says is due, after
    recovering cycles whose task or worker was lost."""
    with job_run("reflection-triggers", LockNamespace.REFLECTION_TRIGGERS) as run:
        if run is None:
            return SKIPPED
        now = timezone.now()
        queued = {**reflection_cycles_recover(now=now), **reflection_due_users(now=now)}
        run.rows, run.detail = sum(queued.values()), queued
        return queued


@shared_task(bind=True, acks_late=True, **LATE_ACK_LIMITS)
def refresh_trait_view(self, after_change: bool = False) -> int | str:
    """Beat, every 30 minutes, and after a cycle, veto or purge that changed traits
    (`after_change`): the decay view with the configured rates. Answers its row count. A
    refresh in flight may have read the traits before the change committed, so one asked for
    after a change waits its turn (retries) instead of being skipped."""
    with job_run("refresh-trait-decay-view", LockNamespace.TRAIT_VIEW_REFRESH) as run:
        if run is not None:
            run.rows = trait_view_refresh()
            return run.rows
    if after_change:
        raise self.retry(
            countdown=settings.TRAIT_VIEW_REFRESH_RETRY,
            max_retries=settings.TRAIT_VIEW_REFRESH_MAX_RETRIES,
        )
    return SKIPPED


@shared_task(acks_late=True, **LATE_ACK_LIMITS)
def expire_trends() -> dict[str, int] | str:
    """Beat, daily: trends at their window's end become candidates or are dissolved."""
    with job_run("expire-trends", LockNamespace.TRENDS_EXPIRE) as run:
        if run is None:
            return SKIPPED
        expiry = asdict(trends_expire(now=timezone.now()))
        run.rows, run.detail = sum(expiry.values()), expiry
        return expiry


@shared_task(acks_late=True, **LATE_ACK_LIMITS)
def dissolve_weak_traits() -> int | str:
    """Beat, weekly: traits decayed below the floor are dissolved. Answers how many."""
    with job_run("dissolve-weak-traits", LockNamespace.WEAK_TRAITS_DISSOLVE) as run:
        if run is None:
            return SKIPPED
        run.rows = traits_dissolve_weak(now=timezone.now())
        return run.rows


# Acknowledged on delivery: anti-joins over whole tables (memory_history is the biggest) may
# outlast TASK_TIME_LIMIT, and a lost run is redone by beat the next day.
@shared_task(acks_late=False, soft_time_limit=1700, time_limit=1800)
def check_consistency() -> dict[str, int] | str:
    """Beat, daily: dangling references reported in `consistency_issues` (never repaired).
    Answers the open issues per check."""
    with job_run("consistency-check", LockNamespace.CONSISTENCY_CHECK) as run:
        if run is None:
            return SKIPPED
        issues = consistency_check(now=timezone.now())
        run.rows, run.detail = sum(issues.values()), issues
        return issues
