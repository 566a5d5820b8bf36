"""Reflection cycles: queued by a trigger, run by the worker, one per user at a time.

A cycle plans with no transaction open (embeddings, or an LLM when configured), then writes
everything it decided in one transaction: traits, evidence, scan marks, the sessions'
watermarks and its own completion. A trait changed meanwhile (a veto) fails the optimistic
lock; the cycle then reads again and plans again, and never overwrites. A failed cycle leaves
traits and marks as they were and records the error. What a cycle did not see (written while
it ran, or beyond its limit) gets a follow-up cycle.
"""

import logging
import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.db import OperationalError, transaction
from django.utils import timezone
from psycopg.errors import DeadlockDetected

from core.access import SYSTEM, Caller, user_access_check
from core.db.locks import LockNamespace, single_flight, xact_lock
from core.errors import Conflict, Invalid
from core.jobs import enqueue_on_commit
from core.metrics import REFLECTION_CYCLES
from core.validation import user_id_problem, validated
from reflection.cycle.apply import cycle_apply
from reflection.cycle.plan import cycle_plan
from reflection.cycle.state import StaleTrait, cycle_state_load, unreflected_memories
from reflection.models import ReflectionCycle, ReflectionStatus, ReflectionTrigger
from reflection.services.maintenance import trait_view_refresh_after_commit

log = logging.getLogger("neuromem.reflection")

RUN_TASK = "reflection.tasks.run_reflection_cycle"
# A cycle that keeps meeting changed traits gives up after this many plans.
PLAN_ATTEMPTS = 3


def reflection_cycle_request(
    *,
    caller: Caller,
    user_id: str,
    trigger_type: str = ReflectionTrigger.MANUAL,
    trigger_value: float | None = None,
) -> tuple[ReflectionCycle, bool]:
    """Queue a cycle for the user (run by the worker after commit). A cycle already queued for
    them is answered instead of a second one: (cycle, created)."""
    validated(user_id=user_id_problem(user_id, new=False))
    user_access_check(caller=caller, user_id=user_id, write=True)
    if trigger_type not in ReflectionTrigger.values:
        raise Invalid(
            f"Unknown trigger '{trigger_type}'; use {', '.join(ReflectionTrigger.values)}.",
            field="trigger_type",
        )
    with transaction.atomic():
        xact_lock(LockNamespace.REFLECTION_REQUESTS, [user_id])
        queued = ReflectionCycle.objects.filter(
            user_id=user_id, status=ReflectionStatus.QUEUED
        ).first()
        if queued is not None:
            return queued, False
        cycle = ReflectionCycle.objects.create(
            user_id=user_id,
            trigger_type=trigger_type,
            trigger_value=trigger_value,
            status=ReflectionStatus.QUEUED,
            requested_by=caller.name,
            started_at=timezone.now(),
        )
        enqueue_on_commit(RUN_TASK, [str(cycle.id)])
        return cycle, True


def reflection_cycle_run(*, cycle_id: uuid.UUID | str) -> ReflectionCycle:
    """Run a queued cycle (the worker's task). Another cycle of the same user in flight: this
    one is `skipped` (the one in flight queues a follow-up for whatever it did not see).
    Running a cycle that is no longer queued changes nothing."""
    claimed = ReflectionCycle.objects.filter(pk=cycle_id, status=ReflectionStatus.QUEUED)
    cycle = claimed.first()
    if cycle is None:
        return ReflectionCycle.objects.get(pk=cycle_id)
    with single_flight(LockNamespace.REFLECTION, cycle.user_id) as running:
        if not running:
            claimed.update(
                status=ReflectionStatus.SKIPPED,
                completed_at=timezone.now(),
                error_message="another cycle for this user is in flight",
            )
            REFLECTION_CYCLES.labels(ReflectionStatus.SKIPPED).inc()
            return ReflectionCycle.objects.get(pk=cycle_id)
        if not claimed.update(status=ReflectionStatus.RUNNING, started_at=timezone.now()):
            return ReflectionCycle.objects.get(pk=cycle_id)  # taken by another worker
        try:
            _plan_and_apply(cycle)
        except Exception as error:
            log.exception("reflection cycle %s for %s failed", cycle_id, cycle.user_id)
            ReflectionCycle.objects.filter(pk=cycle_id).update(
                status=ReflectionStatus.FAILED,
                completed_at=timezone.now(),
                error_message=f"{type(error).__name__}: {error}"[:2000],
            )
            REFLECTION_CYCLES.labels(ReflectionStatus.FAILED).inc()
            return ReflectionCycle.objects.get(pk=cycle_id)
        REFLECTION_CYCLES.labels(ReflectionStatus.COMPLETED).inc()
    if unreflected_memories(user_id=cycle.user_id).exists():
        # Written while the cycle ran, or beyond its REFLECTION_MAX_MEMORIES: next cycle.
        reflection_cycle_request(
            caller=SYSTEM, user_id=cycle.user_id, trigger_type=cycle.trigger_type
        )
    return ReflectionCycle.objects.get(pk=cycle_id)


def _plan_and_apply(cycle: ReflectionCycle) -> None:
    """Plan and write the cycle, and record it `completed` in the same transaction (a cycle
    whose writes committed is never left looking failed). A trait changed meanwhile, or a
    deadlock with a beat job's update, means planning again from what is stored."""
    for _ in range(PLAN_ATTEMPTS):
        now = timezone.now()
        plan = cycle_plan(cycle_state_load(user_id=cycle.user_id, now=now), now=now)
        try:
            with transaction.atomic():
                cycle_apply(plan)
                ReflectionCycle.objects.filter(pk=cycle.pk).update(
                    status=ReflectionStatus.COMPLETED,
                    completed_at=timezone.now(),
                    memories_scanned=plan.memories_scanned,
                    traits_created=plan.traits_created,
                    traits_updated=plan.traits_updated,
                    traits_dissolved=plan.traits_dissolved,
                )
                if plan.changes_traits:
                    trait_view_refresh_after_commit()
            return
        except StaleTrait as stale:
            log.info("reflection for %s: %s; planning again", cycle.user_id, stale)
        except OperationalError as error:
            if not isinstance(error.__cause__, DeadlockDetected):
                raise
            log.info("reflection for %s: deadlock; planning again", cycle.user_id)
    raise Conflict(f"Traits of '{cycle.user_id}' kept changing during the cycle; try again.")


def reflection_cycles_recover(*, now: datetime) -> dict[str, int]:
    """Beat (with the triggers): a cycle queued longer than EMBEDDING_REQUEUE_AFTER is
    published again (its task was never published, or was lost); one running longer than twice
    the task time limit has lost its worker and is marked failed, so its user is not stuck."""
    lost = ReflectionCycle.objects.filter(
        status=ReflectionStatus.RUNNING,
        started_at__lt=now - timedelta(seconds=2 * settings.TASK_TIME_LIMIT),
    ).update(
        status=ReflectionStatus.FAILED,
        completed_at=now,
        error_message="the worker running this cycle stopped before it ended",
    )
    stale = ReflectionCycle.objects.filter(
        status=ReflectionStatus.QUEUED,
        started_at__lt=now - timedelta(seconds=settings.EMBEDDING_REQUEUE_AFTER),
    )
    waiting = [[str(cycle_id)] for cycle_id in stale.values_list("id", flat=True)[:1000]]
    with transaction.atomic():
        # Stamped, so each is published again once per EMBEDDING_REQUEUE_AFTER, not every run.
        ReflectionCycle.objects.filter(pk__in=[ids[0] for ids in waiting]).update(started_at=now)
        enqueue_on_commit(RUN_TASK, *waiting)
    return {"failed": lost, "republished": len(waiting)}
