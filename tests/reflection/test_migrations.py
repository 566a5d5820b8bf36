"""The reflection migrations, forward on a database that already holds memories and traits,
backward, and forward again."""

import importlib

import psycopg
import pytest

from tests.memories.scratch import migrate, scratch_database

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
            result = migrate(url, app, target)
            assert result.returncode == 0, result.stderr
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(TRAITS_SQL)
        result = migrate(url)
        assert result.returncode == 0, result.stderr
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
        result = migrate(url, "reflection", "0001")
        assert result.returncode == 0, result.stderr
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
        result = migrate(url, "memories", "0008")
        assert result.returncode == 0, result.stderr
        with psycopg.connect(url, autocommit=True) as conn:
            # As an interrupted 0009 leaves it: the column, the parent's index, one partition's.
            conn.execute("ALTER TABLE memories ADD COLUMN reflected_at timestamptz")
            index = f"{marks.COLUMNS} WHERE {marks.PREDICATE}"
            conn.execute(f"CREATE INDEX idx_memories_unreflected ON ONLY memories {index}")
            conn.execute(f"CREATE INDEX idx_memories_fact_unreflected ON memories_fact {index}")
        result = migrate(url)
        assert result.returncode == 0, result.stderr
        with psycopg.connect(url, autocommit=True) as conn:
            count = conn.execute("SELECT count(*) FROM mv_trait_decayed").fetchone()
            assert count == (1,)
            valid = conn.execute(
                "SELECT indisvalid FROM pg_index"
                " WHERE indexrelid = 'idx_memories_unreflected'::regclass"
            ).fetchone()
            assert valid == (True,)  # every partition's index built and attached
