"""Seed 001 TC-H05: the halfvec conversion (seed 000 steps 7 and 9, in
memories/migrations/0001_storage_v2.py) run again on a column that is already halfvec finds
nothing to do: it runs no ALTER, drops no index and leaves the stored vectors as they were."""

import importlib

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memories.models import Memory

pytestmark = pytest.mark.django_db

storage_v2 = importlib.import_module("memories.migrations.0001_storage_v2")


def embedding_column_type() -> str:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
            "WHERE attrelid = 'memories'::regclass AND attname = 'embedding'"
        )
        return cursor.fetchone()[0]


def vector_index_definitions() -> list[str]:
    """The HNSW indexes on the embedding, which a conversion would drop and rebuild."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexdef LIKE %s ORDER BY indexname",
            ["%halfvec_cosine_ops%"],
        )
        return [definition for (definition,) in cursor.fetchall()]


def stored_vectors() -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT id::text, embedding::text FROM memories ORDER BY id")
        return dict(cursor.fetchall())


def test_converting_an_already_halfvec_column_runs_no_alter_and_changes_nothing():  # TC-H05
    for n in range(3):
        vector = [((n + i) % 7 + 1) / 10 for i in range(settings.EMBEDDING_DIM)]
        Memory.objects.create(user_id="u1", memory_type="fact", content=f"m{n}", embedding=vector)
    column, indexes, vectors = embedding_column_type(), vector_index_definitions(), stored_vectors()
    assert column == f"halfvec({settings.EMBEDDING_DIM})" and indexes and len(vectors) == 3

    with CaptureQueriesContext(connection) as executed, connection.cursor() as cursor:
        storage_v2.convert_embeddings_to_halfvec(cursor)

    statements = [query["sql"] for query in executed.captured_queries]
    assert statements, "the detection ran no query: the capture saw nothing"
    # Detection only: reading the catalog and the stored dimensions.
    assert all(sql.lstrip().upper().startswith("SELECT") for sql in statements), statements
    assert (embedding_column_type(), vector_index_definitions(), stored_vectors()) == (
        column,
        indexes,
        vectors,
    )
