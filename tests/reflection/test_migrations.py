"""The reflection migrations, forward on a database that already holds memories and traits,
backward, and forward again."""

import importlib

import psycopg
import pytest

from tests.memories.scratch import migrated, scratch_database

marks = importlib.import_module("memories.migrations.0009_reflection_marks_job_runs")

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

TRAITS_SQL = """
INSERT INTO memories (id, user_id, memory_type, content, importance, score, version,
                      access_count, metadata, created_at, embedding_status,
                      trait_subtype, trait_stage, trait_confidence, trait_reinforcement_count,
                      trait_contradiction_count, trait_last_reinforced)
VALUES
  (gen_random_uuid(), 'u:1', 'trait', 'Runs every morning', 0.5, 50, 1, 0, '{}',
   now() - interval '200 days', 'pending', 'behavior', 'established', 0.8, 0, 0,
   now() - interval '100 days'),
  (gen_random_uuid(), 'u:1', 'trait', 'Maybe paints', 0.5, 50, 1, 0, '{}', now(), 'pending',
   'behavior', 'trend', NULL, 0, 0, NULL),
  (gen_random_uuid(), 'u:1', 'fact', 'The user lives in Hangzhou', 0.5, 50, 1, 0, '{}', now(),
   'pending', NULL, NULL, NULL, 0, 0, NULL)
"""


def test_forward_on_data_backward_and_forward_again():
    with scratch_database() as url:
        for app, target in (("reflection", "0001"), ("memories", "0008")):
            migrated(url, app, target)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(TRAITS_SQL)
        migrated(url)
        with psycopg.connect(url, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT content, decayed_confidence FROM mv_trait_decayed"
            ).fetchall()
            # Only the believed trait; decayed as seed 002 §5.1: 0.8 · e^(−0.005 · 100).
            assert [content for content, _ in rows] == ["Runs every morning"]
            assert rows[0][1] == pytest.approx(0.8 * 2.718281828**-0.5, rel=1e-3)
            unmarked = conn.execute(
                "SELECT count(*) FROM memories WHERE reflected_at IS NULL"
            ).fetchone()
            assert unmarked == (3,)  # everything stored before is reflected on from now on
            entries = conn.execute(
                "SELECT name FROM django_celery_beat_periodictask ORDER BY name"
            ).fetchall()
            assert {name for (name,) in entries} >= {
                "reflection-triggers",
                "refresh-trait-decay-view",
                "expire-trends",
                "dissolve-weak-traits",
                "consistency-check",
            }
            conn.execute(
                "INSERT INTO reflection_cycles (id, user_id, trigger_type, status)"
                " VALUES (gen_random_uuid(), 'u:1', 'manual', 'queued')"
            )
        migrated(url, "reflection", "0001")
        with psycopg.connect(url, autocommit=True) as conn:
            view = conn.execute("SELECT to_regclass('mv_trait_decayed')").fetchone()
            assert view == (None,)
            entries = conn.execute(
                "SELECT count(*) FROM django_celery_beat_periodictask"
                " WHERE task LIKE 'reflection.%'"
            ).fetchone()
            assert entries == (0,)
            statuses = conn.execute("SELECT status FROM reflection_cycles").fetchall()
            assert statuses == [("failed",)]  # the old constraint knows no queued cycle
        migrated(url, "memories", "0008")
        with psycopg.connect(url, autocommit=True) as conn:
            # As an interrupted 0009 leaves it: the column, the parent's index, one partition's.
            conn.execute("ALTER TABLE memories ADD COLUMN reflected_at timestamptz")
            index = f"{marks.COLUMNS} WHERE {marks.PREDICATE}"
            conn.execute(f"CREATE INDEX idx_memories_unreflected ON ONLY memories {index}")
            conn.execute(f"CREATE INDEX idx_memories_fact_unreflected ON memories_fact {index}")
        migrated(url)
        with psycopg.connect(url, autocommit=True) as conn:
            count = conn.execute("SELECT count(*) FROM mv_trait_decayed").fetchone()
            assert count == (1,)
            valid = conn.execute(
                "SELECT indisvalid FROM pg_index"
                " WHERE indexrelid = 'idx_memories_unreflected'::regclass"
            ).fetchone()
            assert valid == (True,)  # every partition's index built and attached


# Migrations 0007 (the view carries the embedding; the ELSE decay rate) and 0008 (dissolved
# traits expired), on data, backward to 0006's view exactly, and forward again.
LIFECYCLE_TRAITS_SQL = """
INSERT INTO memories (id, user_id, memory_type, content, importance, score, version,
                      access_count, metadata, created_at, updated_at, embedding_status,
                      trait_subtype, trait_stage, trait_confidence, trait_reinforcement_count,
                      trait_contradiction_count, trait_last_reinforced, invalid_at)
VALUES
  ('00000000-0000-0000-0000-000000000001', 'u:1', 'trait', 'Dissolved by a veto', 0.5, 50, 2,
   0, '{}', now() - interval '10 days', now() - interval '2 days', 'pending', 'behavior',
   'dissolved', 0.8, 0, 0, NULL, now() - interval '2 days'),
  ('00000000-0000-0000-0000-000000000002', 'u:1', 'trait', 'A V1 trait, dissolved', 0.5, 50, 1,
   0, '{"trait_stage": "dissolved"}', now() - interval '10 days', NULL, 'pending', NULL, NULL,
   NULL, 0, 0, NULL, NULL),
  ('00000000-0000-0000-0000-000000000003', 'u:1', 'trait', 'Collects stamps', 0.5, 50, 1, 0,
   '{}', now() - interval '200 days', NULL, 'pending', 'habit', 'established', 0.8, 0, 0,
   now() - interval '100 days', NULL)
"""


def view_definition(conn: psycopg.Connection) -> dict:
    return {
        "view": conn.execute("SELECT pg_get_viewdef('mv_trait_decayed'::regclass)").fetchone(),
        "columns": conn.execute(
            "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute"
            " WHERE attrelid = 'mv_trait_decayed'::regclass AND attnum > 0 ORDER BY attnum"
        ).fetchall(),
        "indexes": conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes"
            " WHERE tablename = 'mv_trait_decayed' ORDER BY 1"
        ).fetchall(),
    }


def test_the_view_with_embeddings_and_expired_dissolved_traits_forward_and_back():
    with scratch_database() as url:
        migrated(url, "reflection", "0006")
        with psycopg.connect(url, autocommit=True) as conn:
            before = view_definition(conn)
            conn.execute(LIFECYCLE_TRAITS_SQL)
            dimensions = conn.execute(
                "SELECT atttypmod FROM pg_attribute"
                " WHERE attrelid = 'memories'::regclass AND attname = 'embedding'"
            ).fetchone()[0]

        migrated(url)
        with psycopg.connect(url, autocommit=True) as conn:
            after = view_definition(conn)
            assert ("embedding", f"halfvec({dimensions})") in after["columns"]
            assert set(after["columns"]) - {("embedding", f"halfvec({dimensions})")} == set(
                before["columns"]
            )  # every column kept
            assert dict(after["indexes"]) == {
                **dict(before["indexes"]),
                "idx_mv_trait_embedding": (
                    "CREATE INDEX idx_mv_trait_embedding ON public.mv_trait_decayed USING hnsw "
                    "(embedding halfvec_cosine_ops) WITH (m='24', ef_construction='128')"
                ),
            }
            # An unknown subtype decays at 0.003 (seed 002 §5.1's ELSE): 0.8 · e^(−0.3).
            (decayed,) = conn.execute(
                "SELECT decayed_confidence FROM mv_trait_decayed WHERE content = 'Collects stamps'"
            ).fetchone()
            assert decayed == pytest.approx(0.8 * 2.718281828**-0.3, rel=1e-3)
            # Dissolved traits are expired: when they were dissolved, else their last change.
            expired = conn.execute(
                "SELECT content, expired_at = invalid_at, expired_at > now() - interval '1 hour'"
                " FROM memories WHERE memory_type = 'trait' AND expired_at IS NOT NULL ORDER BY id"
            ).fetchall()
            assert expired == [
                ("Dissolved by a veto", True, False),  # its invalid_at stays
                ("A V1 trait, dissolved", None, True),
            ]
            assert conn.execute(
                "SELECT base_lambda FROM trait_decay_rates WHERE trait_subtype = '*'"
            ).fetchone() == (0.003,)

        migrated(url, "reflection", "0006")
        with psycopg.connect(url, autocommit=True) as conn:
            assert view_definition(conn) == before  # 0002's view, exactly
            assert conn.execute(
                "SELECT count(*) FROM trait_decay_rates WHERE trait_subtype = '*'"
            ).fetchone() == (0,)
            # Backwards, the expiry stays (see migration 0008).
            assert conn.execute(
                "SELECT count(*) FROM memories WHERE expired_at IS NOT NULL"
            ).fetchone() == (2,)

        migrated(url)
        with psycopg.connect(url, autocommit=True) as conn:
            assert view_definition(conn) == after


# Migration 0010: the view's decay bounded. Traits reinforced far back and far ahead (a client's
# metadata) beside an ordinary one.
EXTREME_TRAITS_SQL = """
INSERT INTO memories (id, user_id, memory_type, content, importance, score, version,
                      access_count, metadata, created_at, embedding_status, trait_subtype,
                      trait_stage, trait_confidence, trait_reinforcement_count,
                      trait_contradiction_count, trait_last_reinforced)
VALUES
  (gen_random_uuid(), 'u:1', 'trait', 'Reinforced in 1000', 0.5, 50, 1, 0, '{}', now(),
   'pending', 'behavior', 'established', 0.9, 0, 0, '1000-01-01T00:00:00Z'),
  (gen_random_uuid(), 'u:1', 'trait', 'Reinforced in 3000', 0.5, 50, 1, 0, '{}', now(),
   'pending', 'behavior', 'established', 0.9, 0, 0, '3000-01-01T00:00:00Z'),
  (gen_random_uuid(), 'u:1', 'trait', 'Reinforced 100 days ago', 0.5, 50, 1, 0, '{}', now(),
   'pending', 'behavior', 'established', 0.8, 0, 0, now() - interval '100 days')
"""


def test_the_bounded_decay_view_on_data_backward_and_forward_again():
    with scratch_database() as url:
        migrated(url, "reflection", "0009")
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(EXTREME_TRAITS_SQL)
            # 0007's view: exp() underflows on the trait of year 1000.
            with pytest.raises(psycopg.errors.NumericValueOutOfRange):
                conn.execute("REFRESH MATERIALIZED VIEW mv_trait_decayed")
        migrated(url)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("REFRESH MATERIALIZED VIEW CONCURRENTLY mv_trait_decayed")
            decayed = dict(
                conn.execute("SELECT content, decayed_confidence FROM mv_trait_decayed").fetchall()
            )
            assert decayed["Reinforced in 1000"] == pytest.approx(0, abs=1e-200)
            assert decayed["Reinforced in 3000"] == pytest.approx(0.9)  # no growth ahead
            assert decayed["Reinforced 100 days ago"] == pytest.approx(
                0.8 * 2.718281828**-0.5, rel=1e-3
            )
            after = view_definition(conn)
            # Backwards, 0007's view fails on them as it did: without them it is made again.
            conn.execute("DELETE FROM memories WHERE content LIKE 'Reinforced in%'")
        migrated(url, "reflection", "0009")
        migrated(url)
        with psycopg.connect(url, autocommit=True) as conn:
            assert view_definition(conn) == after
