"""The V1 → V2 upgrade (seed 000 steps 1–9; seed 001 TC-M01/M02/M10/M13/M14, TC-B01–B12,
TC-H01–H08), each on a real V1 database upgraded by the real `manage.py migrate`."""

import hashlib
import importlib
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import psycopg
import pytest
from django.conf import settings

from tests.memories.scratch import catalog, migrate, scratch_database

GENERATED_ROWS = 10_000
DATASET = (Path(__file__).parent / "v1_dataset.sql").read_text()
storage_v2 = importlib.import_module("memories.migrations.0001_storage_v2")
search_document = importlib.import_module("memories.migrations.0003_search_document")


def load_v1(url: str, rows: int = GENERATED_ROWS) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(DATASET.replace(":rows", str(rows)))


def memory(conn: psycopg.Connection, memory_id: str) -> dict:
    cursor = conn.cursor(row_factory=psycopg.rows.dict_row)
    return cursor.execute("SELECT * FROM memories WHERE id = %s", [memory_id]).fetchone()


@pytest.fixture(scope="module")
def upgraded_database():
    """A V1 database with the seed's rows and 10,000 generated ones, after `migrate`."""
    with scratch_database() as url:
        load_v1(url)
        result = migrate(url)
        assert result.returncode == 0, result.stderr
        with psycopg.connect(url, autocommit=True) as conn:
            yield url, conn


@pytest.fixture(scope="module")
def upgraded(upgraded_database):
    return upgraded_database[1]


@pytest.fixture(scope="module")
def fresh():
    with scratch_database() as url:
        result = migrate(url)
        assert result.returncode == 0, result.stderr
        with psycopg.connect(url, autocommit=True) as conn:
            yield conn


def rerun_upgrade(conn: psycopg.Connection) -> None:
    """Every database step of the storage migrations again, in order (what a re-run does)."""
    editor = SimpleNamespace(connection=conn)
    storage_v2.require_pgvector(None, editor)
    storage_v2.upgrade_v1_table(None, editor)
    conn.execute(storage_v2.create_memories_sql())
    storage_v2.move_v1_rows(None, editor)
    conn.execute(storage_v2.MEMORIES_INDEXES_SQL)
    conn.execute(storage_v2.CONVERSATIONS_SQL)
    conn.execute(search_document.FUNCTIONS_SQL)
    conn.execute(search_document.COLUMN_SQL)


def data_fingerprint(conn: psycopg.Connection) -> tuple:
    return conn.execute(
        "SELECT count(*), md5(string_agg(m::text, '|' ORDER BY id)) FROM memories m"
    ).fetchone()


# --- Every row and every value ------------------------------------------------------------


def test_rename_keeps_every_row(upgraded):  # TC-M01
    tables = {
        r[0]
        for r in upgraded.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        )
    }
    assert "memories" in tables and "embeddings" not in tables and "memories_v1" not in tables
    (v1_rows,) = upgraded.execute("SELECT count(*) FROM v1_snapshot.embeddings").fetchone()
    (v2_rows,) = upgraded.execute("SELECT count(*) FROM memories").fetchone()
    assert v1_rows == GENERATED_ROWS + 20
    assert v2_rows == v1_rows


def test_every_value_survives(upgraded):
    (differing,) = upgraded.execute("""
        SELECT count(*) FROM v1_snapshot.embeddings s FULL JOIN memories m USING (id)
        WHERE s.id IS NULL OR m.id IS NULL
           OR m.user_id IS DISTINCT FROM s.user_id
           OR m.content IS DISTINCT FROM s.content
           OR m.memory_type IS DISTINCT FROM (CASE s.memory_type WHEN 'general' THEN 'fact'
                                               WHEN 'insight' THEN 'trait' ELSE s.memory_type END)
           OR m.metadata IS DISTINCT FROM COALESCE(s.metadata, '{}'::jsonb)
           OR m.created_at IS DISTINCT FROM s.created_at
           OR m.valid_from IS DISTINCT FROM s.valid_from
           OR m.version IS DISTINCT FROM s.version
           OR m.access_count IS DISTINCT FROM s.access_count
           OR (m.embedding IS NULL) <> (s.embedding IS NULL)
    """).fetchone()
    assert differing == 0


def test_embeddings_survive_within_half_precision(upgraded):  # TC-H03, every row
    (worst_l2,) = upgraded.execute("""
        SELECT max(m.embedding::vector <-> s.embedding)
        FROM memories m JOIN v1_snapshot.embeddings s USING (id) WHERE s.embedding IS NOT NULL
    """).fetchone()
    (worst_component,) = upgraded.execute("""
        SELECT max(abs(a - b)) FROM (
            SELECT m.embedding::vector::real[] AS new, s.embedding::real[] AS old
            FROM memories m JOIN v1_snapshot.embeddings s USING (id)
            WHERE s.embedding IS NOT NULL
        ) pairs, unnest(pairs.new, pairs.old) AS u(a, b)
    """).fetchone()
    # |x| <= 1 and half precision keeps 11 significant bits: ~5e-4 per component at most.
    assert 0 < worst_component < 0.01
    assert worst_l2 < 0.02
    known = upgraded.execute(
        "SELECT embedding::vector::real[] FROM memories WHERE id = %s",
        ["00000000-0000-0000-0000-0000000000a3"],
    ).fetchone()[0]
    assert known[:10] == pytest.approx([0.1 * (n + 1) for n in range(10)], abs=0.01)


# --- Backfill (TC-B01–B12) ------------------------------------------------------------------


def test_trait_metadata_fills_the_columns(upgraded):  # TC-B01
    row = memory(upgraded, "00000000-0000-0000-0000-0000000000b1")
    assert (row["trait_subtype"], row["trait_stage"], row["trait_context"]) == (
        "preference",
        "emerging",
        "work",
    )
    assert row["trait_confidence"] == pytest.approx(0.75, abs=1e-6)
    assert (row["trait_reinforcement_count"], row["trait_contradiction_count"]) == (3, 1)
    assert row["trait_derived_from"] == "reflection"


def test_filled_columns_are_not_overwritten(upgraded):  # TC-B02
    row = memory(upgraded, "00000000-0000-0000-0000-0000000000b2")
    assert row["trait_subtype"] == "behavior"
    assert row["trait_confidence"] is None


def test_general_becomes_fact(upgraded):  # TC-B03
    assert upgraded.execute(
        "SELECT count(*) FROM memories WHERE memory_type = 'general'"
    ).fetchone() == (0,)
    row = memory(upgraded, "00000000-0000-0000-0000-0000000000b3")
    assert (row["memory_type"], row["content"], row["metadata"]) == (
        "fact",
        "general one",
        {"source": "chat"},
    )
    assert upgraded.execute(
        "SELECT tableoid::regclass::text FROM memories WHERE id = %s",
        ["00000000-0000-0000-0000-0000000000b3"],
    ).fetchone() == ("memories_fact",)


def test_insight_becomes_a_trend_trait_with_a_30_day_window(upgraded):  # TC-B04
    row = memory(upgraded, "00000000-0000-0000-0000-0000000000b4")
    created = datetime(2024, 3, 3, 10, tzinfo=UTC)
    assert (row["memory_type"], row["trait_stage"]) == ("trait", "trend")
    assert row["trait_window_start"] == created
    assert row["trait_window_end"] == created + timedelta(days=30)
    assert upgraded.execute(
        "SELECT count(*) FROM memories WHERE memory_type = 'insight'"
    ).fetchone() == (0,)


def test_content_hash_is_md5_of_utf8_content(upgraded):  # TC-B05, TC-B12
    rows = upgraded.execute(
        "SELECT content, content_hash FROM memories WHERE id <> %s",
        ["00000000-0000-0000-0000-0000000000b6"],
    ).fetchall()
    assert all(h == hashlib.md5(c.encode("utf-8")).hexdigest() for c, h in rows)
    cjk = memory(upgraded, "00000000-0000-0000-0000-000000000b12")
    assert (
        cjk["content_hash"]
        == hashlib.md5("用户在Google工作，喜欢Python和JavaScript".encode()).hexdigest()
    )


def test_existing_content_hash_is_kept(upgraded):  # TC-B06
    assert memory(upgraded, "00000000-0000-0000-0000-0000000000b6")["content_hash"] == "abc123"


def test_valid_at_from_valid_from_else_created_at(upgraded):  # TC-B07
    a = memory(upgraded, "00000000-0000-0000-0000-00000000b07a")
    b = memory(upgraded, "00000000-0000-0000-0000-00000000b07b")
    assert a["valid_at"] == datetime(2024, 1, 1, tzinfo=UTC)
    assert b["valid_at"] == datetime(2024, 2, 1, tzinfo=UTC)


def test_backfill_keeps_other_metadata(upgraded):  # TC-B09
    row = memory(upgraded, "00000000-0000-0000-0000-0000000000b9")
    assert row["metadata"] == {
        "trait_subtype": "preference",
        "extra_field": "keep_me",
        "emotion": {"valence": 0.5},
    }
    assert row["trait_subtype"] == "preference"


@pytest.mark.parametrize(
    "memory_id", ["00000000-0000-0000-0000-000000000b10", "00000000-0000-0000-0000-000000000b11"]
)
def test_null_or_empty_metadata_leaves_trait_columns_empty(upgraded, memory_id):  # TC-B10/B11
    row = memory(upgraded, memory_id)
    assert row["metadata"] == {}  # NULL metadata became {} (metadata is NOT NULL in V2)
    assert row["trait_subtype"] is None and row["trait_confidence"] is None


def test_unparseable_metadata_values_stay_in_metadata(upgraded):
    row = memory(upgraded, "00000000-0000-0000-0000-0000000000f1")
    assert row["trait_subtype"] == "behavior"
    assert row["trait_confidence"] is None and row["trait_parent_id"] is None
    assert row["trait_reinforcement_count"] == 0
    assert row["trait_first_observed"] == datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert row["metadata"]["confidence"] == "high"


def test_generated_trait_metadata_is_backfilled(upgraded):
    (unfilled,) = upgraded.execute("""
        SELECT count(*) FROM memories WHERE memory_type = 'trait'
        AND metadata->>'trait_subtype' IS NOT NULL AND trait_subtype IS NULL
    """).fetchone()
    assert unfilled == 0


def test_the_seeds_v1_dataset(upgraded):  # seed 001 §5.1 and §5.2
    google = memory(upgraded, "00000000-0000-0000-0000-0000000000c1")
    assert (google["memory_type"], google["metadata"]) == (
        "fact",
        {"category": "work", "importance": 8},
    )
    python = memory(upgraded, "00000000-0000-0000-0000-0000000000c2")
    # insight → trend first (seed 000 step 6 order), so the metadata's stage does not win.
    assert (python["memory_type"], python["trait_stage"], python["trait_subtype"]) == (
        "trait",
        "trend",
        "preference",
    )
    assert (python["trait_context"], python["trait_reinforcement_count"]) == ("work", 3)
    assert python["trait_confidence"] == pytest.approx(0.75)
    episode = memory(upgraded, "00000000-0000-0000-0000-0000000000c3")
    assert (episode["memory_type"], episode["valid_at"]) == (
        "episodic",
        datetime(2024, 4, 3, tzinfo=UTC),
    )
    outgoing = memory(upgraded, "00000000-0000-0000-0000-0000000000c4")
    assert (outgoing["trait_stage"], outgoing["trait_subtype"]) == ("trend", "core")
    assert memory(upgraded, "00000000-0000-0000-0000-0000000000c5")["memory_type"] == "fact"
    empty = memory(upgraded, "00000000-0000-0000-0000-0000000000e1")
    assert empty["content_hash"] == "d41d8cd98f00b204e9800998ecf8427e"
    mixed = memory(upgraded, "00000000-0000-0000-0000-0000000000e2")
    assert mixed["content_hash"] == hashlib.md5("用户说Hello World".encode()).hexdigest()
    assert mixed["metadata"] == {"unknown": "value"}


# --- halfvec (TC-H01–H08) --------------------------------------------------------------------


def test_v1_column_was_vector_and_is_now_halfvec(upgraded):  # TC-H01, TC-H02, TC-H06
    udt = (
        "SELECT udt_name FROM information_schema.columns WHERE table_schema = %s "
        "AND table_name = %s AND column_name = 'embedding'"
    )
    assert upgraded.execute(udt, ["v1_snapshot", "embeddings"]).fetchone() == ("vector",)
    assert upgraded.execute(udt, ["public", "memories"]).fetchone() == ("halfvec",)
    assert upgraded.execute(
        "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
        "WHERE attrelid = 'memories'::regclass AND attname = 'embedding'"
    ).fetchone() == (f"halfvec({settings.EMBEDDING_DIM})",)


def test_old_vector_indexes_are_gone_and_halfvec_hnsw_exist(upgraded):  # TC-H04
    indexes = dict(
        upgraded.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'"
        ).fetchall()
    )
    assert not any(name.startswith("ix_emb") for name in indexes)
    assert not any(
        op in d for d in indexes.values() for op in ("vector_cosine_ops", "vector_l2_ops")
    )
    for partition in ("fact", "episodic", "trait", "document"):
        assert "halfvec_cosine_ops" in indexes[f"idx_{partition}_embedding"]


def test_search_after_conversion(upgraded):  # TC-H07 (the vector side of recall)
    rows = upgraded.execute("""
        SELECT id FROM memories WHERE user_id = 'user-7' AND embedding IS NOT NULL
        ORDER BY embedding <=> (SELECT embedding FROM memories
                                WHERE user_id = 'user-7' AND embedding IS NOT NULL LIMIT 1)
        LIMIT 5
    """).fetchall()
    assert len(rows) == 5


def test_halfvec_takes_about_half_the_space_of_vector(upgraded):  # TC-H08
    vector_size, halfvec_size = upgraded.execute("""
        SELECT pg_column_size(s.embedding), pg_column_size(m.embedding)
        FROM v1_snapshot.embeddings s JOIN memories m USING (id)
        WHERE m.id = '00000000-0000-0000-0000-0000000000a3'
    """).fetchone()
    dim = settings.EMBEDDING_DIM
    # Stored: a 4-byte varlena header + dim and an unused int16, then 4 or 2 bytes a component.
    assert (vector_size, halfvec_size) == (4 * dim + 4, 2 * dim + 4)
    assert 0.45 <= halfvec_size / vector_size <= 0.55


# --- Idempotency (TC-M02, M10, M13, M14, B08, H05) and equivalence ---------------------------


def test_running_every_step_again_changes_nothing(upgraded):
    before = catalog(upgraded), data_fingerprint(upgraded)
    for _ in range(3):
        rerun_upgrade(upgraded)
        assert (catalog(upgraded), data_fingerprint(upgraded)) == before


def test_migrate_again_is_a_no_op(upgraded_database):
    url, upgraded = upgraded_database
    before = data_fingerprint(upgraded)
    result = migrate(url)
    assert result.returncode == 0, result.stderr
    assert "No migrations to apply" in result.stdout
    assert data_fingerprint(upgraded) == before


def test_ready_only_hnsw_migration_reverses_and_reapplies(upgraded_database):
    url, upgraded = upgraded_database
    before = catalog(upgraded), data_fingerprint(upgraded)
    result = migrate(url, "memories", "0003")
    assert result.returncode == 0, result.stderr
    definition = upgraded.execute(
        "SELECT indexdef FROM pg_indexes WHERE indexname = 'idx_fact_embedding'"
    ).fetchone()[0]
    assert "USING hnsw" in definition and "WHERE" not in definition
    result = migrate(url)
    assert result.returncode == 0, result.stderr
    assert (catalog(upgraded), data_fingerprint(upgraded)) == before


def test_upgraded_schema_equals_a_fresh_one(upgraded, fresh):
    assert catalog(upgraded) == catalog(fresh)


def test_fresh_install_has_memories_and_no_embeddings(fresh):  # TC-M03
    assert fresh.execute(
        "SELECT to_regclass('memories'), to_regclass('embeddings')"
    ).fetchone() == ("memories", None)


# --- What the upgrade refuses ---------------------------------------------------------------


def assert_refused_and_untouched(url: str, *expected: str) -> None:
    result = migrate(url)
    assert result.returncode != 0
    for text in expected:
        assert text in result.stderr
    assert "Traceback" not in result.stderr
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT to_regclass('embeddings')").fetchone() == ("embeddings",)
        assert conn.execute("SELECT count(*) FROM embeddings").fetchone()[0] > 0


def test_unknown_memory_types_stop_migrate_and_are_listed():
    with scratch_database() as url:
        load_v1(url, rows=20)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                "UPDATE embeddings SET memory_type = 'note' WHERE content LIKE 'Memory 1%'"
            )
            conn.execute("UPDATE embeddings SET memory_type = 'todo' WHERE content = 'has a hash'")
        assert_refused_and_untouched(url, "'note' (", "'todo' (1 rows)", "Nothing was changed")


def test_both_tables_present_stops_migrate():
    with scratch_database() as url:
        load_v1(url, rows=5)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE TABLE memories (id uuid)")
        assert_refused_and_untouched(url, "Both an `embeddings` (V1) and a `memories` table")


def test_unknown_v1_columns_stop_migrate():
    with scratch_database() as url:
        load_v1(url, rows=5)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("ALTER TABLE embeddings ADD COLUMN mood text")
        assert_refused_and_untouched(url, "columns NeuroMem does not know: mood")


def test_dimension_mismatch_stops_migrate():
    with scratch_database() as url:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION vector")
            conn.execute("""CREATE TABLE embeddings (id uuid PRIMARY KEY, user_id varchar(255)
                NOT NULL, content text NOT NULL, memory_type varchar(50), metadata jsonb,
                created_at timestamptz NOT NULL DEFAULT now(), embedding vector(3))""")
            conn.execute(
                "INSERT INTO embeddings VALUES (gen_random_uuid(), 'u', 'c', 'fact', "
                "NULL, now(), '[1,2,3]')"
            )
        assert_refused_and_untouched(
            url, f"V1 embeddings have 3 dimensions but EMBEDDING_DIM is {settings.EMBEDDING_DIM}"
        )


# --- pgvector version gate (no server with an old pgvector here: the decision itself) -------


@pytest.mark.parametrize(
    ("installed", "available", "expected"),
    [
        ("0.8.2", "0.8.2", None),
        ("0.7.0", "0.7.0", None),
        (None, "0.8.0", None),
        ("0.6.2", "0.6.2", "pgvector 0.6.2 is installed, NeuroMem needs pgvector >= 0.7.0"),
        ("0.5.1", "0.8.0", "Run ALTER EXTENSION vector UPDATE (version 0.8.0 is available)"),
        (None, "0.6.0", "pgvector 0.6.0 is available, NeuroMem needs pgvector >= 0.7.0"),
        (None, None, "pgvector is not available on this PostgreSQL server"),
    ],
)
def test_pgvector_version_gate(installed, available, expected):
    problem = storage_v2.pgvector_problem(installed, available)
    if expected is None:
        assert problem is None
    else:
        assert expected in problem
