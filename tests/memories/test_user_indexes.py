"""Per-user HNSW graphs and text indexes for users with many memories (memories/user_indexes.py).

Transactional tests: CREATE/DROP INDEX CONCURRENTLY cannot run inside a transaction."""

import importlib
from datetime import datetime

import pytest
from django.apps import apps as django_apps
from django.conf import settings as django_settings
from django.db import connection, transaction
from django.utils import timezone
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from core import jobs
from core.access import SYSTEM
from core.db.prepared import PREPARED_STATEMENTS_MAX
from memories.predicates import ActivityFilter
from memories.recall import RecallQuery, memories_recall, recall_plan
from memories.services import user_purge
from memories.user_indexes import (
    NAME_PATTERN,
    UserIndexChanges,
    user_index_name,
    user_indexes_refresh,
)
from tests.memories.bulk import insert_facts

BIG = "agent:o'brien%"  # a quote and a %: the user id is quoted in index predicates and SQL
SMALL = "agent:alice"
beat_entry_migration = importlib.import_module("memories.migrations.0005_user_indexes_beat_entry")


@pytest.fixture
def user_indexes(transactional_db, settings):
    settings.USER_INDEX_MIN_MEMORIES = 1000
    yield
    with connection.cursor() as cursor:  # leave no index behind for the other tests
        cursor.execute("SELECT relname FROM pg_class WHERE relname ~ %s", [NAME_PATTERN])
        for (name,) in cursor.fetchall():
            cursor.execute(f'DROP INDEX IF EXISTS "{name}"')


def index_definition(name: str) -> str | None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", [name])
        row = cursor.fetchone()
    return row[0] if row else None


def names(user_id: str) -> tuple[str, str]:
    return (
        user_index_name(user_id=user_id, memory_type="fact", kind="embedding"),
        user_index_name(user_id=user_id, memory_type="fact", kind="search"),
    )


def plan(user_id: str, query: str) -> str:
    return recall_plan(request=RecallQuery(user_id=user_id, query=query, memory_types=("fact",)))


def vector_side(user_id: str) -> str:
    return plan(user_id, "memory 7").split("CTE vector_hits")[1].split("CTE ")[0]


def test_a_big_user_gets_indexes_of_their_own_and_recall_uses_them(user_indexes):
    insert_facts(BIG, 3000)
    insert_facts(SMALL, 200)
    graph, search = names(BIG)

    assert user_indexes_refresh() == UserIndexChanges(built=[graph, search], dropped=[])
    assert user_indexes_refresh() == UserIndexChanges(built=[], dropped=[])  # nothing to do

    definition = index_definition(graph)
    assert "ON public.memories_fact USING hnsw (embedding halfvec_cosine_ops)" in definition
    assert "m='16'" in definition and "ef_construction='200'" in definition
    assert "embedding_status)::text = 'ready'" in definition
    assert "(user_id)::text = 'agent:o''brien%'::text" in definition
    definition = index_definition(search)
    assert "ON public.memories_fact USING gin (search_vector)" in definition
    assert definition.endswith("WHERE ((user_id)::text = 'agent:o''brien%'::text)")

    assert f"Index Scan using {graph} on memories_fact" in vector_side(BIG)
    assert graph not in vector_side(SMALL)
    assert f"Bitmap Index Scan on {search}" in plan(BIG, "1234")
    assert search not in plan(SMALL, "123")


def text_side(user_id: str, query: str) -> str:
    """The plan of the text side's matches (recall's text_found CTE)."""
    return plan(user_id, query).split("CTE text_found")[1].split("CTE ")[0]


def recalled(user_id: str, query: str, *, as_of: datetime | None = None) -> list[str]:
    request = RecallQuery(user_id=user_id, query=query, memory_types=("fact",), as_of=as_of)
    return [hit.memory.content for hit in memories_recall(caller=SYSTEM, request=request)]


def test_the_text_side_uses_the_users_own_text_index_or_none(user_indexes, settings):
    """The shared GIN index would check the query against every user's rows; a user's own
    index, or their own rows one by one, answer the same."""
    settings.RECALL_MIN_SIMILARITY = 1.01  # the vectors are random: only the text side answers
    insert_facts(BIG, 3000)
    insert_facts(SMALL, 200)
    _, search = names(BIG)
    query = "memory 1234 12"
    unindexed = recalled(BIG, query)
    assert sorted(unindexed) == ["memory 12", "memory 1234"]
    for user_id in (BIG, SMALL):
        side = text_side(user_id, query)
        assert "ts_match_vq(search_vector" in side and "memories_fact_search_vector_idx" not in side

    user_indexes_refresh()
    side = text_side(BIG, query)
    assert f"Bitmap Index Scan on {search}" in side and "ts_match_vq" not in side
    assert recalled(BIG, query) == unindexed
    assert "ts_match_vq(search_vector" in text_side(SMALL, query)


def prepared_recall_runs(user_id: str | None = None) -> tuple[int, int]:
    """How many times this connection ran recall's statement prepared: with a generic plan, and
    with a plan made for the run. The statement shared by the users without indexes of their
    own, or `user_id`'s own (their id written into it)."""
    named = "AND statement LIKE '%%user_id = ' || quote_literal(%s) || '%%'"
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(sum(generic_plans), 0), coalesce(sum(custom_plans), 0)"
            " FROM pg_prepared_statements WHERE statement LIKE '%%WITH vector_hits%%' "
            + (named if user_id else "AND statement NOT LIKE '%%user_id = ''%%'"),
            [user_id] if user_id else [],
        )
        return cursor.fetchone()


def index_scans(name: str) -> int:
    """The index's scans so far, this connection's included (its counts are sent to the
    statistics when it is next idle)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush()")
    with connection.cursor() as cursor:
        cursor.execute("SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = %s", [name])
        return cursor.fetchone()[0]


def plan_cache_mode() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW plan_cache_mode")
        return cursor.fetchone()[0]


def test_one_plan_serves_the_users_without_indexes_of_their_own_among_many(user_indexes, settings):
    """A plan made once per connection for a small user among many, with the same hits as a
    plan made for each recall; not while the mean user is big (a plan for no one in particular
    would take the small user for a big one). A user with indexes of their own: a statement of
    their own, whose plan made once reads them."""
    settings.RECALL_PLAN_STATISTICS_SECONDS = 0  # each recall reads them: they change below
    insert_facts(BIG, 3000)
    insert_facts(SMALL, 200)
    user_indexes_refresh()
    queries = [f"memory {n}" for n in (3, 14, 15, 92, 65, 35, 89, 79)]
    settings.DATABASE_PREPARED_STATEMENTS = False
    planned_each_time = {
        user_id: [recalled(user_id, q) for q in queries] for user_id in (BIG, SMALL)
    }
    assert prepared_recall_runs() == (0, 0)

    settings.DATABASE_PREPARED_STATEMENTS = True
    assert [recalled(SMALL, q) for q in queries] == planned_each_time[SMALL]
    assert prepared_recall_runs() == (0, 0)  # two users: the mean one holds 1,600 facts

    insert_facts("crowd", 4000, users=800)
    assert [recalled(SMALL, q) for q in queries] == planned_each_time[SMALL]
    generic, custom = prepared_recall_runs()
    assert generic + custom == len(queries) and generic >= 1
    graph_scans = index_scans(names(BIG)[0])
    assert [recalled(BIG, q) for q in queries] == planned_each_time[BIG]
    assert prepared_recall_runs() == (generic, custom)  # the shared statement ran no more
    assert prepared_recall_runs(BIG) == (len(queries), 0)  # a generic plan from the first run
    assert index_scans(names(BIG)[0]) >= graph_scans + len(queries)  # on the user's own graph
    assert f"Index Scan using {names(BIG)[0]} on memories_fact" in vector_side(BIG)
    assert connection.connection.prepared_max == PREPARED_STATEMENTS_MAX
    # Its generic plan is asked for until recall's transaction ends: inside a caller's, and
    # as of an instant (its bounds are parameters), a plan made for the run.
    with transaction.atomic():
        assert recalled(BIG, queries[0]) == planned_each_time[BIG][0]
        assert plan_cache_mode() == "auto"
    as_of = timezone.now()
    settings.DATABASE_PREPARED_STATEMENTS = False
    planned_as_of = recalled(BIG, queries[1], as_of=as_of)
    settings.DATABASE_PREPARED_STATEMENTS = True
    assert recalled(BIG, queries[1], as_of=as_of) == planned_as_of
    assert prepared_recall_runs(BIG) == (len(queries), 0)

    scored = RecallQuery(
        user_id=SMALL,
        query="memory 3",
        memory_types=("fact",),
        activity=ActivityFilter(score_min=0.5),
    )
    memories_recall(caller=SYSTEM, request=scored)
    assert prepared_recall_runs() == (generic, custom)  # search's bounds are in its statement


def test_memories_waiting_for_their_embedding_earn_the_text_index_only(user_indexes):
    insert_facts(BIG, 1200, status="pending")
    graph, search = names(BIG)
    assert user_indexes_refresh() == UserIndexChanges(built=[search], dropped=[])
    assert index_definition(graph) is None


def test_a_user_who_shrank_below_half_loses_their_indexes(user_indexes):
    insert_facts(BIG, 1200)
    graph, search = names(BIG)
    assert user_indexes_refresh().built == [graph, search]
    with connection.cursor() as cursor:  # down to 600: above half the threshold, kept
        cursor.execute(
            "UPDATE memories SET expired_at = now() WHERE id IN "
            "(SELECT id FROM memories WHERE user_id = %s LIMIT 600)",
            [BIG],
        )
    assert user_indexes_refresh() == UserIndexChanges(built=[], dropped=[])
    with connection.cursor() as cursor:  # down to 400: dropped
        cursor.execute(
            "UPDATE memories SET expired_at = now() WHERE id IN "
            "(SELECT id FROM memories WHERE user_id = %s AND expired_at IS NULL LIMIT 200)",
            [BIG],
        )
    assert sorted(user_indexes_refresh().dropped) == [graph, search]
    assert index_definition(graph) is None and index_definition(search) is None


def test_an_interrupted_build_is_dropped_and_built_again(user_indexes):
    insert_facts(BIG, 1200)
    graph, _ = names(BIG)
    user_indexes_refresh()
    with connection.cursor() as cursor:  # what a CONCURRENTLY build that failed leaves behind
        cursor.execute(
            "UPDATE pg_index SET indisvalid = false WHERE indexrelid = %s::regclass", [graph]
        )
    assert user_indexes_refresh() == UserIndexChanges(built=[graph], dropped=[graph])
    with connection.cursor() as cursor:
        cursor.execute("SELECT indisvalid FROM pg_index WHERE indexrelid = %s::regclass", [graph])
        assert cursor.fetchone() == (True,)


def test_purging_a_big_user_schedules_the_drop_of_their_indexes(user_indexes, monkeypatch):
    insert_facts(BIG, 1200)
    user_indexes_refresh()
    scheduled = []
    monkeypatch.setattr(
        jobs.current_app, "send_task", lambda name, args: scheduled.append((name, args))
    )
    user_purge(caller=SYSTEM, user_id=BIG)
    # After commit: the indexes name the user in their predicate (and the decay view holds a
    # copy of their traits).
    assert scheduled == [
        ("reflection.tasks.refresh_trait_view", (True,)),
        ("memories.tasks.refresh_user_indexes", ()),
    ]
    assert sorted(user_indexes_refresh().dropped) == sorted(names(BIG))


def test_beat_refreshes_the_indexes_hourly():
    entry = django_settings.CELERY_BEAT_SCHEDULE["refresh-user-indexes"]
    assert (entry["task"], entry["schedule"]) == ("memories.tasks.refresh_user_indexes", 3600)


def test_the_entry_of_the_old_name_is_removed_from_beat(db):
    schedule = IntervalSchedule.objects.create(every=3600, period=IntervalSchedule.SECONDS)
    for name in ("refresh-user-graphs", "flush-memory-accesses"):
        PeriodicTask.objects.create(name=name, task=f"memories.tasks.{name}", interval=schedule)
    beat_entry_migration.remove_old_entry(django_apps, None)
    names = set(PeriodicTask.objects.values_list("name", flat=True))
    assert "refresh-user-graphs" not in names and "flush-memory-accesses" in names
