"""The V1 → V2 upgrade (seed 000 steps 1–9; seed 001 TC-M01/M02/M10/M13/M14, TC-B01–B12,
TC-H01–H08), each on a real V1 database upgraded by the real `manage.py migrate`."""

import hashlib
import importlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from unittest import mock
from urllib.parse import urlsplit

import psycopg
import pytest
from django.conf import settings
from django.test import override_settings

from memories.embeddings import embedding_provider, lexical_provider
from tests.memories.scratch import BASE_DIR, catalog, migrate, migrated, scratch_database

GENERATED_ROWS = 10_000
DATASET = (Path(__file__).parent / "v1_dataset.sql").read_text()
storage_v2 = importlib.import_module("memories.migrations.0001_storage_v2")
search_document = importlib.import_module("memories.migrations.0003_search_document")


# V1 clients stored 1024-dimension vectors (the seed's model): the upgrade keeps them, so these
# databases run with EMBEDDING_DIM=1024 (here and in every `manage.py` the tests start).
V1_EMBEDDINGS = {"EMBEDDING_PROVIDER": "hashing", "EMBEDDING_DIM": "1024"}


@pytest.fixture(scope="module", autouse=True)
def v1_embeddings():
    with (
        override_settings(EMBEDDING_PROVIDER="hashing", EMBEDDING_DIM=1024),
        mock.patch.dict(os.environ, V1_EMBEDDINGS),
    ):
        embedding_provider.cache_clear()
        yield
    embedding_provider.cache_clear()


def load_v1(url: str, rows: int = GENERATED_ROWS) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(DATASET.replace(":rows", str(rows)))


# One more V1 memory, for recall after the upgrade: user-7 has 50 generated memories (45 with
# a vector), and this one's vector is the embedding provider's, as a V1 client using the same
# model would have stored it (float32, `vector`).
RECALL_ROW = "00000000-0000-0000-0000-0000000000d1"
RECALL_CONTENT = "The user keeps bees on the roof of a house in Lisbon"


def add_recall_row(url: str) -> None:
    vector = embedding_provider().embed([RECALL_CONTENT])[0]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO embeddings (id, user_id, content, memory_type, metadata, created_at, "
            "embedding) VALUES (%s, 'user-7', %s, 'general', NULL, '2024-05-01T00:00:00Z', "
            "%s::vector)",
            [RECALL_ROW, RECALL_CONTENT, str(vector.tolist()).replace(" ", "")],
        )
        conn.execute(
            "INSERT INTO v1_snapshot.embeddings SELECT * FROM embeddings WHERE id = %s",
            [RECALL_ROW],
        )


def recall_in(url: str, user_id: str, query: str) -> list[dict]:
    """memories_recall, in its own process against `url` (recall uses Django's connection)."""
    code = (
        "import json\n"
        "from memories.recall import RecallQuery, memories_recall\n"
        "from core.access import SYSTEM\n"
        f"request = RecallQuery(user_id={user_id!r}, query={query!r})\n"
        "hits = memories_recall(caller=SYSTEM, request=request)\n"
        "print(json.dumps([{'id': str(h.memory.id), 'memory_type': h.memory.memory_type,"
        " 'content': h.memory.content, 'vector_rank': h.vector_rank, 'text_rank': h.text_rank,"
        " 'similarity': h.similarity} for h in hits]))\n"
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=BASE_DIR,
        env={**os.environ, "DATABASE_URL": url},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def memory(conn: psycopg.Connection, memory_id: str) -> dict:
    cursor = conn.cursor(row_factory=psycopg.rows.dict_row)
    return cursor.execute("SELECT * FROM memories WHERE id = %s", [memory_id]).fetchone()


@pytest.fixture(scope="module")
def upgraded_database():
    """A V1 database with the seed's rows, 10,000 generated ones and the recall row, after
    `migrate`."""
    with scratch_database() as url:
        load_v1(url)
        add_recall_row(url)
        migrated(url)
        with psycopg.connect(url, autocommit=True) as conn:
            yield url, conn


@pytest.fixture(scope="module")
def upgraded(upgraded_database):
    return upgraded_database[1]


@pytest.fixture(scope="module")
def fresh():
    with scratch_database() as url:
        migrated(url)
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
    assert v1_rows == GENERATED_ROWS + 20 + 1  # the dataset's seed rows, the recall row
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


def test_every_current_memory_gets_its_lexical_vector(upgraded):
    """Migration 0007 computes the near-duplicate vector of the memories already stored, as the
    write path computes it for new ones."""
    missing, total = upgraded.execute(
        "SELECT count(*) FILTER (WHERE lexical_vector IS NULL), count(*) FROM memories"
        " WHERE expired_at IS NULL"
    ).fetchone()
    assert (missing, total > GENERATED_ROWS) == (0, True)
    content, stored = upgraded.execute(
        "SELECT content, lexical_vector::text FROM memories WHERE id = %s", [RECALL_ROW]
    ).fetchone()
    expected = lexical_provider().embed([content])[0]
    assert json.loads(stored) == pytest.approx(expected.tolist(), abs=1e-3)


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


def test_recall_after_conversion(upgraded_database):  # TC-H07
    url, upgraded = upgraded_database
    assert upgraded.execute(
        "SELECT memory_type, embedding_status, format_type(atttypid, atttypmod) "
        "FROM memories, pg_attribute WHERE id = %s "
        "AND attrelid = 'memories'::regclass AND attname = 'embedding'",
        [RECALL_ROW],
    ).fetchone() == ("fact", "ready", f"halfvec({settings.EMBEDDING_DIM})")
    query = "Where does the user keep bees?"
    hits = recall_in(url, "user-7", query)
    assert hits, "recall found nothing on the upgraded database"
    top = hits[0]
    assert (top["id"], top["memory_type"], top["content"]) == (RECALL_ROW, "fact", RECALL_CONTENT)
    # First on the vector side too: the search over the converted halfvec column found it
    # among user-7's memories, at the cosine of its V1 vector, to half precision.
    assert (top["vector_rank"], top["text_rank"]) == (1, 1)
    query_vector, stored_vector = embedding_provider().embed([query, RECALL_CONTENT])
    assert top["similarity"] == pytest.approx(float(query_vector @ stored_vector), abs=2e-3)


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


def test_every_step_again_on_the_upgraded_database_changes_nothing(upgraded):
    """Where every step finds its work done (the V1 ones stop at their guards: there is no V1
    table left). The steps acting again are test_every_step_again_where_an_earlier_run_stopped."""
    before = catalog(upgraded), data_fingerprint(upgraded)
    for _ in range(3):
        rerun_upgrade(upgraded)
        assert (catalog(upgraded), data_fingerprint(upgraded)) == before


STEP_ROWS = 2_000  # generated rows of the databases the steps run on again
HALF_THE_ROWS = "right(m.id::text, 1) IN ('0', '2', '4', '6', '8', 'a', 'c', 'e')"


def copy_of(url: str) -> AbstractContextManager[str]:
    """A new database cloned from `url`'s (no one may be connected to it); dropped after."""
    return scratch_database(template=urlsplit(url).path.lstrip("/"))


@pytest.fixture(scope="module")
def v1_template():
    """A V1 database that every copy below starts from (so their rows have the same ids)."""
    with scratch_database() as url:
        load_v1(url, rows=STEP_ROWS)
        yield url


@pytest.fixture(scope="module")
def upgraded_in_one_run(v1_template):
    """The schema and rows one `migrate` makes of the template: what re-runs must reach."""
    with copy_of(v1_template) as url:
        migrated(url)
        with psycopg.connect(url) as conn:
            return catalog(conn), data_fingerprint(conn)


def editor(conn: psycopg.Connection) -> SimpleNamespace:
    return SimpleNamespace(connection=conn)


def scalar(conn: psycopg.Connection, sql: str, params: list | None = None):
    return conn.execute(sql, params).fetchone()[0]


def embedding_type(conn: psycopg.Connection, table: str) -> str:
    return scalar(
        conn,
        "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
        "WHERE attrelid = %s::regclass AND attname = 'embedding'",
        [table],
    )


def vector_indexes(conn: psycopg.Connection, table: str) -> list[str]:
    return [
        name
        for (name,) in conn.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND tablename = %s "
            "AND (indexdef LIKE '%%vector_cosine_ops%%' OR indexdef LIKE '%%vector_l2_ops%%')",
            [table],
        )
    ]


def missing_v2_columns(conn: psycopg.Connection, table: str) -> set[str]:
    present = {
        name
        for (name,) in conn.execute(
            "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 "
            "AND NOT attisdropped",
            [table],
        )
    }
    return {name for name, *_ in storage_v2.memory_columns()} - present


def rename_v1_table(conn: psycopg.Connection) -> None:
    conn.execute("ALTER TABLE embeddings RENAME TO memories")


def add_v2_columns(conn: psycopg.Connection, every: int = 1) -> None:
    """The V2 columns V1 lacks (every n-th of them), with their defaults, as the upgrade adds
    them."""
    for name, sql_type, _, default in storage_v2.memory_columns()[::every]:
        default_sql = f" DEFAULT {default}" if default and name != "id" else ""
        conn.execute(
            f"ALTER TABLE memories ADD COLUMN IF NOT EXISTS {name} {sql_type}{default_sql}"
        )


def backfill(conn: psycopg.Connection) -> None:
    conn.execute(storage_v2.SAFE_CASTS)
    for statement in storage_v2.BACKFILL:
        conn.execute(statement)


def renamed_with_half_the_v2_columns(conn: psycopg.Connection) -> None:
    """An earlier run renamed the table and added every other V2 column, then stopped: the
    rest of the ADD COLUMNs, all of the backfill and the halfvec conversion act again."""
    rename_v1_table(conn)
    add_v2_columns(conn, every=2)
    missing = missing_v2_columns(conn, "memories")
    assert {"valid_at", "trait_stage", "importance"} & missing and len(missing) > 10
    assert scalar(conn, "SELECT count(*) FROM memories WHERE memory_type = 'general'") > 0


def backfilled_for_half_the_rows(conn: psycopg.Connection) -> None:
    """An earlier run added the columns and backfilled, and half the rows are as V1 left them
    again (V1 columns from the snapshot, V2 columns as ADD COLUMN made them): the backfill
    acts on that half and must leave the other half, already backfilled, as it is."""
    rename_v1_table(conn)
    add_v2_columns(conn)
    backfill(conn)
    v1_columns = [
        name
        for (name,) in conn.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = 'v1_snapshot' AND table_name = 'embeddings'"
        )
    ]
    restored = [f"{name} = s.{name}" for name in v1_columns if name != "id"] + [
        f"{name} = DEFAULT" for name, *_ in storage_v2.memory_columns() if name not in v1_columns
    ]
    conn.execute(
        f"UPDATE memories m SET {', '.join(restored)} FROM v1_snapshot.embeddings s "
        f"WHERE m.id = s.id AND {HALF_THE_ROWS}"
    )
    undone, done = conn.execute(
        "SELECT count(*) FILTER (WHERE content_hash IS NULL AND valid_at IS NULL), "
        "count(*) FILTER (WHERE content_hash IS NOT NULL AND valid_at IS NOT NULL) FROM memories"
    ).fetchone()
    assert undone > 500 and done > 500
    assert scalar(conn, "SELECT count(*) FROM memories WHERE memory_type = 'insight'") > 0
    assert (
        scalar(
            conn,
            "SELECT count(*) FROM memories WHERE trait_stage = 'trend' AND trait_window_end "
            "IS NOT NULL",
        )
        > 0
    )


def converted_and_back_to_vector(conn: psycopg.Connection) -> None:
    """An earlier run did everything up to and including the halfvec conversion, which is then
    undone (vector again, V1's vector indexes back): the conversion acts again, dropping the
    indexes, and half precision survives the round trip unchanged."""
    rename_v1_table(conn)
    add_v2_columns(conn)
    backfill(conn)
    with conn.cursor() as cursor:
        storage_v2.convert_embeddings_to_halfvec(cursor)
    dim = settings.EMBEDDING_DIM
    assert embedding_type(conn, "memories") == f"halfvec({dim})"
    assert vector_indexes(conn, "memories") == []
    conn.execute(
        f"ALTER TABLE memories ALTER COLUMN embedding TYPE vector({dim}) "
        f"USING embedding::vector({dim})"
    )
    conn.execute(
        "CREATE INDEX ix_emb_embedding ON memories USING hnsw (embedding vector_cosine_ops)"
    )
    conn.execute(
        "CREATE INDEX ix_emb_embedding_l2 ON memories USING ivfflat (embedding vector_l2_ops) "
        "WITH (lists = 20)"
    )
    assert embedding_type(conn, "memories") == f"vector({dim})"


def staged_but_not_moved(conn: psycopg.Connection) -> None:
    """An earlier run upgraded and staged the V1 table and created the V2 one, then stopped:
    the V1 steps find nothing to do, the row move acts."""
    storage_v2.upgrade_v1_table(None, editor(conn))
    conn.execute(storage_v2.create_memories_sql())
    assert scalar(conn, "SELECT count(*) FROM memories_v1") == STEP_ROWS + 20
    assert scalar(conn, "SELECT count(*) FROM memories") == 0


@dataclass(frozen=True)
class EarlierRun:
    name: str
    left: Callable[[psycopg.Connection], None]


EARLIER_RUNS = [
    EarlierRun("columns", renamed_with_half_the_v2_columns),
    EarlierRun("backfill", backfilled_for_half_the_rows),
    EarlierRun("halfvec", converted_and_back_to_vector),
    EarlierRun("move", staged_but_not_moved),
]


def assert_v1_table_staged(conn: psycopg.Connection) -> None:
    """What the V1 steps (rename, ADD COLUMN, backfill, halfvec) leave: the V1 table, staged
    as memories_v1, with every V2 column, backfilled, halfvec, its vector indexes gone."""
    assert conn.execute(
        "SELECT to_regclass('embeddings'), to_regclass('memories_v1')"
    ).fetchone() == (None, "memories_v1")
    assert missing_v2_columns(conn, "memories_v1") == set()
    assert embedding_type(conn, "memories_v1") == f"halfvec({settings.EMBEDDING_DIM})"
    assert vector_indexes(conn, "memories_v1") == []
    assert conn.execute("""
        SELECT count(*) FILTER (WHERE memory_type IN ('general', 'insight')),
               count(*) FILTER (WHERE content_hash IS NULL OR valid_at IS NULL),
               count(*) FILTER (WHERE memory_type = 'trait' AND trait_subtype IS NULL
                                  AND metadata->>'trait_subtype' IS NOT NULL),
               count(*)
        FROM memories_v1
    """).fetchone() == (0, 0, 0, STEP_ROWS + 20)


@pytest.mark.parametrize("earlier", EARLIER_RUNS, ids=lambda run: run.name)
def test_every_step_again_where_an_earlier_run_stopped(v1_template, upgraded_in_one_run, earlier):
    """Each step of the upgrade run again on a database where it has work left (what an earlier
    run, or an old SDK's partial init, left): it does that work, skips what is done, and the
    database converges to what one run makes of the same V1 database, schema and rows."""
    with copy_of(v1_template) as url:
        with psycopg.connect(url) as conn:
            earlier.left(conn)
        with psycopg.connect(url) as conn:
            storage_v2.upgrade_v1_table(None, editor(conn))  # the V1 steps, in place
            assert_v1_table_staged(conn)
        result = migrate(url)  # and every step of every migration, in order
        assert result.returncode == 0, result.stderr
        with psycopg.connect(url) as conn:
            assert (catalog(conn), data_fingerprint(conn)) == upgraded_in_one_run
            assert conn.execute("SELECT to_regclass('memories_v1')").fetchone() == (None,)


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
    migrated(url, "memories", "0003")
    definition = upgraded.execute(
        "SELECT indexdef FROM pg_indexes WHERE indexname = 'idx_fact_embedding'"
    ).fetchone()[0]
    assert "USING hnsw" in definition and "WHERE" not in definition
    migrated(url)
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
