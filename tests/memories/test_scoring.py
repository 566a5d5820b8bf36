"""The activity score job (memories/scoring.py, docs/decay.md): scores by hand at fixed
timestamps, the map, idempotency, elapsed time over run count, the flags it sets and clears,
what it leaves alone, batching and its deadline, and the beat task on a real worker.

Expected scores are worked out here from the formula with the default rules
(A 1.0, B 0.8, C 1.2, D 0.8, E 1.5, F 1.0, G 0.3, T_access 24 h, T_link 72 h, T_age 30 days,
S 2; one decimal): score = 100 / (1 + e^(−raw/2)).
"""

import importlib
import math
import time
import uuid
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from celery.app.backends import by_url
from django.apps import apps as django_apps
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django_celery_beat.models import PeriodicTask

from core.db.locks import LockNamespace
from core.models import JobRun, JobStatus
from memories.embeddings import lexical_provider
from memories.models import Memory, MemoryHistory, MemoryLink
from memories.predicates import state_sql
from memories.scoring import memories_score, score_resume_point, score_rules
from memories.selectors import memory_state
from memories.tasks import SKIPPED
from neuromem_site.celery import app as celery_app
from tests.memories.scratch import server_url
from tests.worker import celery_worker, worker_hostname

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
HOUR, DAY = timedelta(hours=1), timedelta(days=1)
OLD = NOW - 400 * DAY  # raw −0.3·400/30 = −4 → 11.9, deprecated

score_schedule = importlib.import_module("memories.migrations.0010_activity_score_links")


@pytest.fixture(autouse=True)
def default_rules():
    score_rules.cache_clear()
    yield
    score_rules.cache_clear()


def make(content: str = "", *, user_id: str = "u1", memory_type: str = "fact", **fields) -> Memory:
    values = {"created_at": NOW, **fields}
    if "lexical_vector" not in values and content:
        values["lexical_vector"] = lexical_provider().embed([content])[0]
    return Memory.objects.create(
        user_id=user_id,
        memory_type=memory_type,
        content=content or f"memory {uuid.uuid4().hex[:8]}",
        **values,
    )


def link(source: Memory, target: Memory) -> None:
    MemoryLink.objects.create(
        user_id=source.user_id, source_id=source.id, target_id=target.id, weight=0.5
    )


def score(memory: Memory) -> float:
    return Memory.objects.values_list("score", flat=True).get(pk=memory.pk)


def logistic(raw: float) -> float:
    return 100 / (1 + math.exp(-raw / 2))


def flags(memory: Memory) -> tuple[bool, uuid.UUID | None]:
    return Memory.objects.values_list("eligible_for_delete", "merge_candidate_of").get(pk=memory.pk)


def snapshot() -> dict:
    return {
        pk: (round(s, 3), e, m)
        for pk, s, e, m in Memory.objects.values_list(
            "pk", "score", "eligible_for_delete", "merge_candidate_of"
        )
    }


# --- The score ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_scores_match_the_formula_worked_by_hand():
    memory = make(
        created_at=NOW - 10 * DAY,
        access_count=3,
        last_accessed_at=NOW - 12 * HOUR,
        traverse_count=1,
        last_linked_at=NOW - 36 * HOUR,
    )
    sources = [make(), make()]
    target = make()
    for source in sources:
        link(source, memory)
    link(memory, target)
    old = make(created_at=NOW - 90 * DAY)

    run = memories_score(now=NOW)

    # in 2, out 1, 3 accesses, 1 traversal, accessed 12 h and linked 36 h ago, 10 days old:
    raw = (
        1.0 * math.log(1 + 2)
        + 0.8 * math.log(1 + 1)
        + 1.2 * math.log(1 + 3)
        + 0.8 * math.log(1 + 1)
        + 1.5 * math.exp(-12 / 24)
        + 1.0 * math.exp(-36 / 72)
        - 0.3 * 10 / 30
    )
    assert raw == pytest.approx(5.28753, abs=1e-5)
    assert logistic(raw) == pytest.approx(93.363, abs=1e-3)
    assert score(memory) == pytest.approx(93.4, abs=1e-4)
    # A source: out 1, nothing else (0.8·ln 2 = 0.5545 → 56.887).
    assert [score(s) for s in sources] == pytest.approx([56.9, 56.9], abs=1e-4)
    # The target: in 1 (ln 2 = 0.6931 → 58.579).
    assert score(target) == pytest.approx(58.6, abs=1e-4)
    # 90 days old, nothing else: −0.3·90/30 = −0.9 → 38.936.
    assert logistic(-0.9) == pytest.approx(38.936, abs=1e-3)
    assert score(old) == pytest.approx(38.9, abs=1e-4)
    assert (run.scored, run.changed, run.batches) == (5, 5, 1)


@pytest.mark.django_db
def test_the_map_is_50_for_a_new_memory_monotone_and_bounded():
    new = make()
    by_accesses = [make(access_count=n) for n in (0, 1, 5, 50, 5000)]
    by_age = [make(created_at=NOW - days * DAY) for days in (0, 1, 30, 365, 3650)]
    busiest = make(access_count=2_000_000_000, traverse_count=2_000_000_000)
    # Accessed and linked a century ago: exp(−876,000/24) would underflow unguarded.
    oldest = make(
        created_at=datetime(1900, 1, 1, tzinfo=UTC),
        last_accessed_at=datetime(1900, 1, 1, tzinfo=UTC),
        last_linked_at=datetime(1900, 1, 1, tzinfo=UTC),
    )

    memories_score(now=NOW)

    assert score(new) == 50.0
    accesses = [score(m) for m in by_accesses]
    assert accesses == sorted(accesses) and len(set(accesses)) == len(accesses)
    ages = [score(m) for m in by_age]
    assert ages == sorted(ages, reverse=True) and len(set(ages)) == len(ages)
    # 1.2·ln(2·10⁹+1) + 0.8·ln(2·10⁹+1) = 42.9 → 99.9999995, rounds to the bound.
    assert score(busiest) == 100.0
    assert score(oldest) == 0.0  # −0.3·46,000/30 days ≈ −460
    assert Memory.objects.filter(score__gt=100).count() == 0
    assert Memory.objects.filter(score__lt=0).count() == 0


@pytest.mark.django_db
def test_what_a_client_sets_does_not_move_the_score():
    plain = make(created_at=NOW - 5 * DAY)
    dressed = make(
        created_at=NOW - 5 * DAY, importance=1.0, key="k", metadata={"score": 100}, score=99.0
    )
    memories_score(now=NOW)
    # −0.3·5/30 = −0.05 → 49.375
    assert score(plain) == score(dressed) == pytest.approx(49.4, abs=1e-4)


@pytest.mark.django_db
def test_link_degrees_count_both_directions():
    hub = make()
    leaves = [make() for _ in range(3)]
    for leaf in leaves:
        link(leaf, hub)
    fan = make()
    ends = [make(), make()]
    for end in ends:
        link(fan, end)

    memories_score(now=NOW)

    assert score(hub) == pytest.approx(66.7, abs=1e-4)  # in 3: ln 4 = 1.3863 → 66.667
    assert score(fan) == pytest.approx(60.8, abs=1e-4)  # out 2: 0.8·ln 3 = 0.8789 → 60.813
    assert [score(m) for m in leaves] == pytest.approx([56.9] * 3, abs=1e-4)  # out 1
    assert [score(m) for m in ends] == pytest.approx([58.6] * 2, abs=1e-4)  # in 1

    MemoryLink.objects.filter(target_id=hub.id).delete()
    memories_score(now=NOW)
    assert score(hub) == 50.0


# --- Idempotency and time --------------------------------------------------------------------


def varied() -> list[Memory]:
    memories = [
        make("The user's favourite colour is blue", created_at=OLD),
        make("The user's favourite colour is green"),
        make(created_at=NOW - 3 * DAY, access_count=4, last_accessed_at=NOW - 2 * HOUR),
        make(created_at=NOW - 50 * DAY, traverse_count=2, last_linked_at=NOW - 20 * HOUR),
        make(created_at=OLD),
    ]
    link(memories[2], memories[3])
    return memories


@pytest.mark.django_db
def test_a_second_run_at_the_same_now_changes_nothing_and_writes_no_history():
    varied()
    history = MemoryHistory.objects.count()

    first = memories_score(now=NOW)
    after_first = snapshot()
    second = memories_score(now=NOW)

    # The new "green" memory stays at 50; the two old ones are idle and unlinked.
    assert first.changed == 4 and (first.eligible_for_delete, first.merge_candidates) == (2, 1)
    assert (second.scored, second.changed) == (5, 0)
    assert (second.eligible_for_delete, second.merge_candidates) == (2, 1)
    assert snapshot() == after_first
    # Bookkeeping columns: the audit trigger writes no history for the job's updates.
    assert MemoryHistory.objects.count() == history


@pytest.mark.django_db
def test_scores_depend_on_elapsed_time_not_on_how_often_the_job_ran():
    varied()
    t1, t2 = NOW + 6 * HOUR, NOW + 9 * DAY

    memories_score(now=t1)
    memories_score(now=t2)
    twice = snapshot()
    Memory.objects.update(score=50, eligible_for_delete=False, merge_candidate_of=None)
    memories_score(now=t2)

    assert snapshot() == twice
    assert len({s for s, _, _ in twice.values()}) > 1


# --- States and flags ------------------------------------------------------------------------


@pytest.mark.django_db
def test_states_follow_the_thresholds():
    active = make(
        access_count=10, last_accessed_at=NOW - HOUR
    )  # 1.2·ln 11 + 1.5·e^(−1/24) = 4.32 → 89.6
    cold = make()  # 50
    deprecated = make(created_at=OLD)  # 11.9
    deleted = make(expired_at=NOW)

    memories_score(now=NOW)

    with connection.cursor() as cursor:
        cursor.execute(f"SELECT m.id, {state_sql('m')} FROM memories m")
        states = dict(cursor.fetchall())
    expected = {active.id: "active", cold.id: "cold", deprecated.id: "deprecated"}
    assert states == {**expected, deleted.id: "deleted"}
    for memory in Memory.objects.all():
        assert memory_state(memory) == states[memory.id]
    assert score(active) >= settings.SCORE_ACTIVE_FROM > score(cold) >= settings.SCORE_COLD_FROM
    assert score(deprecated) < settings.SCORE_COLD_FROM


@pytest.mark.django_db
def test_eligible_for_delete_is_set_and_cleared_and_nothing_is_deleted():
    idle = make(created_at=OLD)
    linked_to = make(created_at=OLD)  # in 1: −4 + ln 2 → 16.1, deprecated but linked
    link(make(), linked_to)
    read_lately = make(created_at=OLD, access_count=1, last_accessed_at=NOW - 10 * DAY)  # 17.0
    reached_lately = make(created_at=OLD, traverse_count=1, last_linked_at=NOW - 5 * DAY)  # 16.4
    read_long_ago = make(created_at=OLD, access_count=1, last_accessed_at=NOW - 40 * DAY)  # 17.0
    cold = make(created_at=NOW - 60 * DAY)  # −0.6 → 42.6: not low enough

    run = memories_score(now=NOW)

    flagged = set(Memory.objects.filter(eligible_for_delete=True).values_list("pk", flat=True))
    assert flagged == {idle.pk, read_long_ago.pk}
    assert run.eligible_for_delete == 2
    assert score(read_lately) < settings.SCORE_COLD_FROM
    assert score(reached_lately) < settings.SCORE_COLD_FROM
    assert score(cold) >= settings.SCORE_COLD_FROM

    link(make(), idle)  # linked now: no longer eligible
    Memory.objects.filter(pk=read_long_ago.pk).update(access_count=2, last_accessed_at=NOW)
    run = memories_score(now=NOW)

    assert run.eligible_for_delete == 0
    assert not Memory.objects.filter(eligible_for_delete=True).exists()
    assert Memory.objects.count() == 8
    assert not Memory.objects.filter(expired_at__isnull=False).exists()


@pytest.mark.django_db
def test_a_deprecated_restatement_points_at_the_better_memory_until_it_goes():
    # Lexical similarity 0.92 (≥ merge_similarity 0.9, < DEDUP_SIMILARITY 0.95).
    old = make("The user's favourite colour is blue", created_at=OLD)
    better = make("The user's favourite colour is green")
    other_user = make("The user's favourite colour is blue", user_id="u2")
    other_type = make("The user's favourite colour is blue", memory_type="episodic")
    unrelated = make("Meeting with Bob on Tuesday about the budget", created_at=OLD)
    # Two equally old restatements: neither is better scored than the other.
    twins = [
        make("The user's home town is Leeds", created_at=OLD, user_id="u3"),
        make("The user's home town is Leeds!", created_at=OLD, user_id="u3"),
    ]

    run = memories_score(now=NOW)

    assert flags(old) == (True, better.id)
    assert run.merge_candidates == 1
    for memory in (better, other_user, other_type, unrelated, *twins):
        assert flags(memory)[1] is None
    assert score(better) > score(old)

    Memory.objects.filter(pk=better.pk).update(expired_at=NOW)  # deleted: nothing to merge into
    run = memories_score(now=NOW)

    assert flags(old) == (True, None) and run.merge_candidates == 0
    assert Memory.objects.count() == 7


@pytest.mark.django_db
def test_the_merge_lookup_reads_only_the_users_most_recent_memories(settings):
    old = make("The user's favourite colour is blue", created_at=OLD)
    better = make("The user's favourite colour is green", created_at=NOW - DAY)
    make("Lunch with the new team at the Thai place", created_at=NOW)
    settings.SCORE_RULES = {"merge_window": 1}  # the lunch only

    memories_score(now=NOW)
    assert flags(old)[1] is None

    settings.SCORE_RULES = {}
    score_rules.cache_clear()
    memories_score(now=NOW)
    assert flags(old)[1] == better.id


def test_rules_are_overridden_by_name_and_checked(settings):
    settings.SCORE_RULES = {"T_access_hours": 12, "merge_similarity": 0.92}
    rules = score_rules()
    assert (rules.T_access_hours, rules.merge_similarity, rules.A) == (12, 0.92, 1.0)
    for bad, message in (({"H": 1.0}, "unknown rule"), ({"S": 0}, "S must be positive")):
        settings.SCORE_RULES = bad
        score_rules.cache_clear()
        with pytest.raises(ImproperlyConfigured, match=message):
            score_rules()


@pytest.mark.django_db
def test_expired_and_invalidated_memories_are_left_alone():
    expired = make(created_at=OLD, expired_at=NOW - DAY, eligible_for_delete=True)
    invalid = make(created_at=OLD, invalid_at=NOW - DAY)
    current = make(created_at=OLD)

    run = memories_score(now=NOW)

    assert run.scored == 1
    assert (score(expired), flags(expired)) == (50.0, (True, None))
    assert (score(invalid), flags(invalid)) == (50.0, (False, None))
    assert score(current) == pytest.approx(11.9, abs=1e-4)


# --- Batches and the deadline ----------------------------------------------------------------


@pytest.mark.django_db
def test_batches_by_id_cover_every_memory(settings):
    settings.SCORE_BATCH_SIZE = 3
    memories = [make(created_at=OLD) for _ in range(10)]

    run = memories_score(now=NOW)

    assert (run.scored, run.changed, run.batches, run.stopped_early) == (10, 10, 4, False)
    assert [score(m) for m in memories] == pytest.approx([11.9] * 10, abs=1e-4)
    assert memories_score(now=NOW, batch_size=5).batches == 2  # 5, 5


@pytest.mark.django_db
def test_a_run_stops_between_batches_at_its_deadline_and_the_next_continues():
    memories = sorted((make(created_at=OLD) for _ in range(5)), key=lambda m: m.id)
    passed = time.monotonic()

    first = memories_score(now=NOW, batch_size=2, deadline=passed)

    assert (first.scored, first.batches, first.stopped_early) == (2, 1, True)
    assert first.resume_after == memories[1].id
    assert [score(m) for m in memories] == pytest.approx([11.9] * 2 + [50.0] * 3, abs=1e-4)

    second = memories_score(now=NOW, batch_size=2, deadline=passed, after=first.resume_after)
    third = memories_score(now=NOW, batch_size=2, deadline=passed, after=second.resume_after)

    assert (second.scored, second.resume_after) == (2, memories[3].id)
    assert (third.scored, third.stopped_early, third.resume_after) == (1, False, None)
    assert [score(m) for m in memories] == pytest.approx([11.9] * 5, abs=1e-4)


@pytest.mark.django_db
def test_the_next_run_resumes_where_the_last_completed_run_stopped():
    job = "score-memories"
    assert score_resume_point(job=job) is None
    stopped = uuid.uuid4()
    JobRun.objects.create(
        job=job, status=JobStatus.DONE, detail={"stopped_early": True, "resume_after": str(stopped)}
    )
    JobRun.objects.create(job=job, status=JobStatus.SKIPPED)
    JobRun.objects.create(job=job, status=JobStatus.FAILED, error="SoftTimeLimitExceeded")
    assert score_resume_point(job=job) == stopped
    JobRun.objects.create(job=job, status=JobStatus.DONE, detail={"resume_after": None})
    assert score_resume_point(job=job) is None


# --- The beat task on a real worker ----------------------------------------------------------

WORKER = worker_hostname("test-score")


@pytest.fixture(scope="module")
def results():
    """The worker stores results here (the project ignores them): the broker's Redis."""
    backend_cls, url = by_url(settings.CELERY_BROKER_URL, celery_app.loader)
    return backend_cls(app=celery_app, url=url)


@pytest.fixture(scope="module")
def worker(django_db_setup, results):
    with celery_worker(
        hostname=WORKER,
        EMBEDDING_PROVIDER="hashing",
        EMBEDDING_DIM=str(settings.EMBEDDING_DIM),
        CELERY_RESULT_BACKEND=settings.CELERY_BROKER_URL,
        SCORE_BATCH_SIZE="2",
    ) as process:
        yield process


def run_task(results) -> dict | str:
    sent = celery_app.send_task("memories.tasks.score_memories", ignore_result=False)
    return celery_app.AsyncResult(sent.id, backend=results).get(timeout=60)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_worker_runs_the_score_job_and_records_it(worker, results):
    old = [make(created_at=datetime(2020, 1, 1, tzinfo=UTC)) for _ in range(3)]
    gone = make(created_at=datetime(2020, 1, 1, tzinfo=UTC), expired_at=NOW)

    answer = run_task(results)

    job = JobRun.objects.filter(job="score-memories").latest("id")
    assert (job.status, job.rows, job.error) == (JobStatus.DONE, 3, "")
    assert job.detail == answer
    assert answer["scored"] == 3 and answer["batches"] == 2  # SCORE_BATCH_SIZE 2 in the worker
    assert (answer["eligible_for_delete"], answer["stopped_early"]) == (3, False)
    assert all(score(m) < settings.SCORE_COLD_FROM for m in old)
    assert score(gone) == 50.0

    with psycopg.connect(server_url(connection.settings_dict["NAME"])) as other:
        other.execute("SELECT pg_advisory_lock(%s, hashtext(''))", [int(LockNamespace.SCORE)])
        assert run_task(results) == SKIPPED
    assert JobRun.objects.filter(job="score-memories").latest("id").status == JobStatus.SKIPPED

    # Beat's entry (seeded by migration 0010; seeded again here, since a transactional test
    # may have flushed it) names the task the worker knows.
    score_schedule.score_schedule_seed(django_apps, None)
    entry = PeriodicTask.objects.select_related("interval").get(name="score-memories")
    assert (entry.task, entry.interval.every, entry.interval.period) == (
        "memories.tasks.score_memories",
        900,
        "seconds",
    )
    inspect = celery_app.control.inspect(destination=[WORKER], limit=1, timeout=10)
    assert entry.task in inspect.registered()[WORKER]


@pytest.mark.django_db
def test_links_from_or_to_deleted_memories_do_not_count():
    source, target = make("Linked from a memory later deleted"), make("The target of the link")
    link(source, target)
    memories_score(now=NOW)
    # A = 1.0, B = 0.8: one link each way is ln 2 of raw (no last_linked_at set here).
    assert (score(target), score(source)) == (
        round(logistic(math.log(2)), 1),
        round(logistic(0.8 * math.log(2)), 1),
    )
    Memory.objects.filter(pk=source.pk).update(expired_at=NOW)
    memories_score(now=NOW)
    assert score(target) == 50.0


@pytest.mark.django_db
def test_a_batch_size_below_one_is_refused(settings):
    settings.SCORE_BATCH_SIZE = 0
    with pytest.raises(ImproperlyConfigured, match="SCORE_BATCH_SIZE"):
        memories_score(now=NOW)
