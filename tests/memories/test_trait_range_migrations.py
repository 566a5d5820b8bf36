"""A trait's ranges (memories 0020), forward on a database holding traits written out of range
before the write path checked them: their values are brought into range, the believed traits'
view refreshes again, and the database refuses new ones; backward and forward again."""

import psycopg
import pytest

from tests.memories.scratch import migrated, scratch_database

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

TRAITS_SQL = """
INSERT INTO memories (id, user_id, memory_type, content, importance, score, version,
                      access_count, metadata, created_at, embedding_status, trait_subtype,
                      trait_stage, trait_confidence, trait_reinforcement_count,
                      trait_contradiction_count, trait_last_reinforced)
VALUES
  (gen_random_uuid(), 'u:1', 'trait', 'Swims at noon', 0.5, 50, 1, 0,
   '{"confidence": 7, "reinforcement_count": -10, "context": "work"}', now(), 'pending',
   'behavior', 'established', 7, -10, -1, now()),
  (gen_random_uuid(), 'u:1', 'trait', 'Reads at night', 0.5, 50, 1, 0, '{}', now(), 'pending',
   'behavior', 'established', -3, 2, 0, now()),
  (gen_random_uuid(), 'u:2', 'trait', 'Feeds the cat', 0.5, 50, 1, 0, '{}', now(), 'pending',
   'behavior', 'established', 0.8, 3, 1, now())
"""
VALUES_SQL = """
SELECT content, trait_confidence, trait_reinforcement_count, trait_contradiction_count
FROM memories ORDER BY content
"""
BAD_SQL = "UPDATE memories SET trait_reinforcement_count = -1 WHERE content = 'Feeds the cat'"


def test_traits_out_of_range_are_repaired_and_refused_from_then_on():
    with scratch_database() as url:
        migrated(url)
        migrated(url, "memories", "0019")  # the release before, every other app migrated
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(TRAITS_SQL)
        migrated(url)
        with psycopg.connect(url, autocommit=True) as conn:
            assert conn.execute(VALUES_SQL).fetchall() == [
                ("Feeds the cat", 0.8, 3, 1),
                ("Reads at night", 0.0, 2, 0),
                ("Swims at noon", 1.0, 0, 0),
            ]
            conn.execute("REFRESH MATERIALIZED VIEW mv_trait_decayed")
            believed = "SELECT count(*) FROM mv_trait_decayed WHERE user_id = 'u:2'"
            assert conn.execute(believed).fetchone() == (1,)
            with pytest.raises(psycopg.errors.CheckViolation):
                conn.execute(BAD_SQL)
            metadata = "SELECT metadata FROM memories WHERE content = 'Swims at noon'"
            assert conn.execute(metadata).fetchone() == (
                {"confidence": 1.0, "reinforcement_count": 0, "context": "work"},
            )  # an edit parses it again: in range there too
            repairs = "SELECT count(*) FROM memory_history WHERE event = 'UPDATE'"
            # What the audit follows: two confidences, then the metadata, a key at a time.
            assert conn.execute(repairs).fetchone() == (4,)
        migrated(url, "memories", "0019")
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(BAD_SQL)  # no constraint any more; the repaired values stay
            assert conn.execute(VALUES_SQL).fetchall()[1:] == [
                ("Reads at night", 0.0, 2, 0),
                ("Swims at noon", 1.0, 0, 0),
            ]
        migrated(url)
        with psycopg.connect(url, autocommit=True) as conn:
            assert conn.execute(VALUES_SQL).fetchall()[0] == ("Feeds the cat", 0.8, 0, 1)
