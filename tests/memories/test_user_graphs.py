"""Per-user HNSW graphs for users with many memories (memories/user_graphs.py).

Transactional tests: CREATE/DROP INDEX CONCURRENTLY cannot run inside a transaction."""

import pytest
from django.conf import settings as django_settings
from django.db import connection

from memories.recall import RecallQuery, recall_plan
from memories.services import user_purge
from memories.tasks import refresh_user_graphs
from memories.user_graphs import (
    NAME_PATTERN,
    UserGraphChanges,
    user_graph_name,
    user_graphs_refresh,
)

BIG = "agent:o'brien"  # a quote, to prove the user id is quoted in the index predicate
SMALL = "agent:alice"


@pytest.fixture
def graphs(transactional_db, settings):
    settings.USER_GRAPH_MIN_MEMORIES = 1000
    yield
    with connection.cursor() as cursor:  # leave no index behind for the other tests
        cursor.execute("SELECT relname FROM pg_class WHERE relname ~ %s", [NAME_PATTERN])
        for (name,) in cursor.fetchall():
            cursor.execute(f'DROP INDEX IF EXISTS "{name}"')


def insert_ready(user_id: str, count: int, memory_type: str = "fact") -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO memories (id, user_id, memory_type, content, embedding, embedding_status,
                                  content_hash, created_at, valid_at)
            SELECT gen_random_uuid(), %s, %s, 'memory ' || n,
                   (SELECT array_agg(random() - 0.5) FROM generate_series(1, 1024)
                    WHERE n > 0)::vector::halfvec,
                   'ready', md5(n::text), now(), now()
            FROM generate_series(1, %s) AS n
            """,
            [user_id, memory_type, count],
        )
        cursor.execute("ANALYZE memories")


def index_definition(name: str) -> str | None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", [name])
        row = cursor.fetchone()
    return row[0] if row else None


def vector_side(user_id: str) -> str:
    query = RecallQuery(user_id=user_id, query="memory 7", memory_types=("fact",))
    plan = recall_plan(request=query)
    return plan.split("CTE vector_hits")[1].split("CTE ")[0]


def test_a_big_user_gets_a_graph_and_recall_uses_it(graphs):
    insert_ready(BIG, 3000)
    insert_ready(SMALL, 200)
    name = user_graph_name(user_id=BIG, memory_type="fact")

    assert user_graphs_refresh() == UserGraphChanges(built=[name], dropped=[])
    assert user_graphs_refresh() == UserGraphChanges(built=[], dropped=[])  # nothing to do

    definition = index_definition(name)
    assert "ON public.memories_fact USING hnsw (embedding halfvec_cosine_ops)" in definition
    assert "m='16'" in definition and "ef_construction='200'" in definition
    assert "(user_id)::text = 'agent:o''brien'::text" in definition
    assert f"Index Scan using {name} on memories_fact" in vector_side(BIG)
    assert name not in vector_side(SMALL)


def test_a_user_who_shrank_below_half_loses_the_graph(graphs):
    insert_ready(BIG, 1200)
    name = user_graph_name(user_id=BIG, memory_type="fact")
    assert user_graphs_refresh().built == [name]
    with connection.cursor() as cursor:  # down to 600: above half the threshold, kept
        cursor.execute(
            "UPDATE memories SET expired_at = now() WHERE id IN "
            "(SELECT id FROM memories WHERE user_id = %s LIMIT 600)",
            [BIG],
        )
    assert user_graphs_refresh() == UserGraphChanges(built=[], dropped=[])
    with connection.cursor() as cursor:  # down to 400: dropped
        cursor.execute(
            "UPDATE memories SET expired_at = now() WHERE id IN "
            "(SELECT id FROM memories WHERE user_id = %s AND expired_at IS NULL LIMIT 200)",
            [BIG],
        )
    assert user_graphs_refresh() == UserGraphChanges(built=[], dropped=[name])
    assert index_definition(name) is None


def test_an_interrupted_build_is_dropped_and_built_again(graphs):
    insert_ready(BIG, 1200)
    name = user_graph_name(user_id=BIG, memory_type="fact")
    user_graphs_refresh()
    with connection.cursor() as cursor:  # what a CONCURRENTLY build that failed leaves behind
        cursor.execute(
            "UPDATE pg_index SET indisvalid = false WHERE indexrelid = %s::regclass", [name]
        )
    assert user_graphs_refresh() == UserGraphChanges(built=[name], dropped=[name])
    with connection.cursor() as cursor:
        cursor.execute("SELECT indisvalid FROM pg_index WHERE indexrelid = %s::regclass", [name])
        assert cursor.fetchone() == (True,)


def test_purging_a_big_user_schedules_the_drop_of_their_graph(graphs, monkeypatch):
    insert_ready(BIG, 1200)
    name = user_graph_name(user_id=BIG, memory_type="fact")
    user_graphs_refresh()
    scheduled = []
    monkeypatch.setattr(refresh_user_graphs, "delay", lambda: scheduled.append(True))
    user_purge(user_id=BIG)
    assert scheduled == [True]  # after commit: the graph names the user in its predicate
    assert user_graphs_refresh() == UserGraphChanges(built=[], dropped=[name])


def test_beat_refreshes_the_graphs_hourly():
    entry = django_settings.CELERY_BEAT_SCHEDULE["refresh-user-graphs"]
    assert (entry["task"], entry["schedule"]) == ("memories.tasks.refresh_user_graphs", 3600)
