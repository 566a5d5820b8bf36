"""`manage.py embeddings_rebuild`: another dimension or model on a database holding vectors
(memories/services/embedding_rebuild.py).

Transactional tests: the command changes the column and builds indexes CONCURRENTLY, outside
any transaction. The `hashing` provider stands in for a model (cheap, deterministic); the
fixture puts the column back as the session's other tests expect it, and what depends on it
(reflection's decay view, through memories.hooks, as the rebuild does)."""

import importlib
import io
import json
import uuid

import numpy as np
import psycopg
import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.db.models import Count

from core.access import Caller
from core.db.locks import LockNamespace
from memories.embeddings import HashingEmbeddingProvider, embedding_provider
from memories.hooks import embedding_column_dependents
from memories.models import Memory
from memories.recall import RecallQuery, memories_recall
from memories.services import content_md5, memories_embed
from memories.user_indexes import NAME_PATTERN, user_index_name, user_indexes_refresh
from reflection.models import TraitDecayed
from reflection.services.maintenance import trait_view_refresh
from tests.memories.scratch import server_url

ALICE = "agent:alice"
BOB = "agent:bob"
TEST = Caller(name="test", is_staff=True)
NEW_DIM = 64
graphs_migration = importlib.import_module("memories.migrations.0004_hnsw_ready_only")

PARTITION_GRAPHS = {
    f"idx_{partition}_embedding" for partition in ("fact", "episodic", "trait", "document")
}


class Interrupted(Exception):
    """Stands for Ctrl-C or a kill in the middle of phase 2."""


class CountingProvider:
    """The configured provider, recording every text it embedded; raises Interrupted on the
    batch after `fail_after` batches."""

    def __init__(self, *, fail_after: int | None = None) -> None:
        self.inner = embedding_provider()
        self.model_id = self.inner.model_id
        self.dimensions = self.inner.dimensions
        self.fail_after = fail_after
        self.batches = 0
        self.embedded: list[str] = []

    def embed(self, texts: list[str]):
        if self.fail_after is not None and self.batches >= self.fail_after:
            raise Interrupted
        self.batches += 1
        self.embedded += texts
        return self.inner.embed(texts)

    def embed_query(self, text: str):
        return self.inner.embed_query(text)


@pytest.fixture
def stored_dim(transactional_db, settings):
    """The session's column dimension; the provider is `hashing` for the test. Afterwards the
    column, its graphs and its comment are as migrate made them."""
    dimensions = column_dimensions()
    settings.EMBEDDING_PROVIDER = "hashing"
    settings.EMBEDDING_DIM = dimensions
    settings.USER_INDEX_MIN_MEMORIES = 1000
    embedding_provider.cache_clear()
    yield dimensions
    embedding_provider.cache_clear()
    with connection.cursor() as cursor:
        cursor.execute("SELECT relname FROM pg_class WHERE relname ~ %s", [NAME_PATTERN])
        for name in [name for (name,) in cursor.fetchall()] + list(hnsw_indexes()):
            cursor.execute(f'DROP INDEX IF EXISTS "{name}"')
        cursor.execute("TRUNCATE memories")
        for dependent in embedding_column_dependents():
            dependent.drop()
        cursor.execute(
            f"ALTER TABLE memories ALTER COLUMN embedding TYPE halfvec({dimensions}) USING NULL"
        )
        for dependent in embedding_column_dependents():
            dependent.create()
        cursor.execute(graphs_migration.hnsw_indexes_sql(ready_only=True))
        cursor.execute("COMMENT ON COLUMN memories.embedding IS NULL")


def column_dimensions() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT atttypmod FROM pg_attribute WHERE attrelid = 'memories'::regclass"
            " AND attname = 'embedding' AND NOT attisdropped"
        )
        return cursor.fetchone()[0]


def column_comment() -> dict | None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT col_description(attrelid, attnum) FROM pg_attribute"
            " WHERE attrelid = 'memories'::regclass AND attname = 'embedding'"
            " AND NOT attisdropped"
        )
        comment = cursor.fetchone()[0]
    return json.loads(comment) if comment else None


def hnsw_indexes() -> dict[str, tuple[int, str]]:
    """HNSW index name → (oid, definition), on any of memories' partitions."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, c.oid, pg_get_indexdef(c.oid) FROM pg_index i"
            " JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam"
            " WHERE am.amname = 'hnsw' AND i.indrelid IN"
            " (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'memories'::regclass)"
        )
        return {name: (oid, definition) for name, oid, definition in cursor.fetchall()}


def remember(contents: list[str], *, user_id: str = ALICE, memory_type: str = "fact") -> None:
    """Memories with ids in the order given (phase 2 goes through them by id), embedded by
    the configured provider."""
    ids = sorted(uuid.uuid4() for _ in contents)
    for memory_id, content in zip(ids, contents, strict=True):
        Memory.objects.create(
            id=memory_id,
            user_id=user_id,
            memory_type=memory_type,
            content=content,
            content_hash=content_md5(content),
        )
    assert memories_embed(memory_ids=ids) == len(contents)


def statuses() -> dict[str, int]:
    return dict(Memory.objects.values_list("embedding_status").annotate(n=Count("id")).order_by())


def assert_embedded_by(dimensions: int) -> None:
    expected = HashingEmbeddingProvider(dimensions)
    rows = list(Memory.objects.values_list("content", "embedding", "embedding_status"))
    assert rows
    for content, embedding, status in rows:
        assert status == "ready"
        np.testing.assert_allclose(
            np.asarray(embedding), expected.embed([content])[0], atol=2e-3, err_msg=content
        )


def rebuild(*options: str) -> str:
    out = io.StringIO()
    call_command("embeddings_rebuild", *options, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def recall(query: str) -> list:
    return memories_recall(caller=TEST, request=RecallQuery(user_id=ALICE, query=query))


def switch_dimension(settings, dimensions: int) -> None:
    settings.EMBEDDING_DIM = dimensions
    embedding_provider.cache_clear()


def test_rebuild_to_another_dimension_reembeds_every_memory_and_rebuilds_the_graphs(
    stored_dim, settings
):
    settings.USER_INDEX_MIN_MEMORIES = 10
    remember([f"Alice fact number {n}" for n in range(12)])
    remember(["Alice went hiking on Sunday"], memory_type="episodic")
    remember(["Bob likes tea", "Bob lives in Lyon"], user_id=BOB)
    alice_graph = user_index_name(user_id=ALICE, memory_type="fact", kind="embedding")
    assert alice_graph in user_indexes_refresh().built  # 12 facts: a graph of her own
    graphs_before = hnsw_indexes()
    assert set(graphs_before) == PARTITION_GRAPHS | {alice_graph}

    switch_dimension(settings, NEW_DIM)
    output = rebuild("--batch-size", "4")

    assert f"column: halfvec({stored_dim})" in output
    assert f"target: halfvec({NEW_DIM}), model hashing-{NEW_DIM}" in output
    assert "memories: 15, not ready: 0" in output
    assert "Done: 15 memories embedded by hashing-64" in output
    assert column_dimensions() == NEW_DIM
    assert_embedded_by(NEW_DIM)
    # The same graphs, with the same definitions (migration 0004's, the per-user job's).
    graphs_after = hnsw_indexes()
    assert {name: d for name, (_, d) in graphs_after.items()} == {
        name: d for name, (_, d) in graphs_before.items()
    }
    assert graphs_after["idx_trait_embedding"][1] == (
        "CREATE INDEX idx_trait_embedding ON public.memories_trait USING hnsw "
        "(embedding halfvec_cosine_ops) WITH (m='24', ef_construction='128') "
        "WHERE ((embedding_status)::text = 'ready'::text)"
    )
    assert column_comment() == {"model_id": "hashing-64", "dimensions": 64, "complete": True}


def view_embeddings() -> dict[str, list[float] | None]:
    """The decay view's traits and their vectors."""
    return {
        content: None if vector is None else list(vector)
        for content, vector in TraitDecayed.objects.values_list("content", "embedding")
    }


def view_embedding_column() -> tuple[str, str]:
    """The view's embedding column type, and its graph's definition."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
            " WHERE attrelid = 'mv_trait_decayed'::regclass AND attname = 'embedding'"
        )
        (column_type,) = cursor.fetchone()
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'idx_mv_trait_embedding'")
        (graph,) = cursor.fetchone()
    return column_type, graph


def test_a_rebuild_to_another_dimension_takes_the_decay_view_along(stored_dim, settings):
    """The decay view carries `memories.embedding` (reflection migration 0007): the rebuild
    drops it before changing the column, creates it after, and refreshes it at the end, so it
    holds the new vectors, at the new dimension, with its graph."""
    for content in ("Runs every morning", "Reads at night"):
        Memory.objects.create(
            user_id=ALICE,
            memory_type="trait",
            content=content,
            content_hash=content_md5(content),
            trait_subtype="behavior",
            trait_stage="established",
            trait_confidence=0.8,
        )
    remember(["Alice likes jazz"])
    assert memories_embed(memory_ids=list(Memory.objects.values_list("id", flat=True))) == 2
    trait_view_refresh()
    assert all(len(vector) == stored_dim for vector in view_embeddings().values())

    switch_dimension(settings, NEW_DIM)
    output = rebuild("--batch-size", "2")

    assert "Done: 3 memories embedded by hashing-64" in output
    expected = HashingEmbeddingProvider(NEW_DIM)
    stored = view_embeddings()
    assert set(stored) == {"Runs every morning", "Reads at night"}
    for content, vector in stored.items():
        np.testing.assert_allclose(vector, expected.embed([content])[0], atol=2e-3)
    assert view_embedding_column() == (
        f"halfvec({NEW_DIM})",
        "CREATE INDEX idx_mv_trait_embedding ON public.mv_trait_decayed USING hnsw "
        "(embedding halfvec_cosine_ops) WITH (m='24', ef_construction='128')",
    )
    # Believed traits still come from it.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM mv_trait_decayed WHERE user_id = %s AND decayed_confidence > 0.7",
            [ALICE],
        )
        assert cursor.fetchone() == (2,)


def test_an_interrupted_rebuild_resumes_where_it_stopped_and_recall_answers_meanwhile(
    stored_dim, settings, monkeypatch
):
    # By id: the first batches hold the tea memory, the last one Hangzhou.
    remember(
        ["The user drinks green tea every morning"]
        + [f"filler memory {n}" for n in range(20)]
        + ["The user moved to Hangzhou last spring"]
    )
    switch_dimension(settings, NEW_DIM)
    interrupted = CountingProvider(fail_after=2)
    monkeypatch.setattr("memories.services.embedding_jobs.embedding_provider", lambda: interrupted)

    with pytest.raises(Interrupted):
        rebuild("--batch-size", "5")

    assert statuses() == {"ready": 10, "pending": 12}
    assert column_dimensions() == NEW_DIM
    assert hnsw_indexes() == {}  # phase 3 not reached
    # The decay view is there, at the new dimension, without vectors until the rebuild ends.
    assert view_embedding_column()[0] == f"halfvec({NEW_DIM})"
    assert column_comment() == {"model_id": "hashing-64", "dimensions": 64, "complete": False}
    # Recall answers: the vector side from the memories ready, the text side from the rest.
    tea = recall("green tea every morning")[0]
    assert tea.memory.content == "The user drinks green tea every morning"
    assert tea.vector_rank == 1
    moved = recall("moved to Hangzhou")[0]
    assert moved.memory.content == "The user moved to Hangzhou last spring"
    assert (moved.vector_rank, moved.text_rank) == (None, 1)

    resumed = CountingProvider()
    monkeypatch.setattr("memories.services.embedding_jobs.embedding_provider", lambda: resumed)
    output = rebuild("--batch-size", "5")

    assert "phase 1: skipped, resuming the rebuild to hashing-64" in output
    assert "Done: 12 memories embedded" in output
    # Each memory embedded once across both runs: none twice, none skipped.
    assert sorted(interrupted.embedded + resumed.embedded) == sorted(
        Memory.objects.values_list("content", flat=True)
    )
    assert len(interrupted.embedded) == 10
    assert_embedded_by(NEW_DIM)
    assert set(hnsw_indexes()) == PARTITION_GRAPHS
    assert column_comment()["complete"] is True


def test_running_it_again_changes_nothing(stored_dim, settings, monkeypatch):
    remember([f"memory {n}" for n in range(6)])
    switch_dimension(settings, NEW_DIM)
    rebuild()
    state = (
        sorted(Memory.objects.values_list("id", "embedding_status", "updated_at")),
        [str(v) for v in Memory.objects.order_by("id").values_list("embedding", flat=True)],
        hnsw_indexes(),  # oids included: no index rebuilt
        column_comment(),
    )
    unused = CountingProvider()
    monkeypatch.setattr("memories.services.embedding_jobs.embedding_provider", lambda: unused)

    output = rebuild()

    assert "to do: nothing, the column holds the target" in output
    assert unused.embedded == []
    assert state == (
        sorted(Memory.objects.values_list("id", "embedding_status", "updated_at")),
        [str(v) for v in Memory.objects.order_by("id").values_list("embedding", flat=True)],
        hnsw_indexes(),
        column_comment(),
    )


def test_vectors_recorded_as_another_models_are_reembedded_at_the_same_dimension(stored_dim):
    remember(["Alice likes jazz", "Alice plays chess"])
    with connection.cursor() as cursor:
        cursor.execute(
            "COMMENT ON COLUMN memories.embedding IS %s",
            [json.dumps({"model_id": "other-model", "dimensions": stored_dim, "complete": True})],
        )
        # Another model's vectors: here, every memory holds the first one's.
        cursor.execute(
            "UPDATE memories SET embedding = (SELECT embedding FROM memories ORDER BY id LIMIT 1)"
        )

    output = rebuild()

    assert "the vectors were made by other-model" in output
    assert column_dimensions() == stored_dim
    assert_embedded_by(stored_dim)
    assert column_comment()["model_id"] == f"hashing-{stored_dim}"


def test_force_reembed_redoes_a_complete_rebuild_but_resumes_an_unfinished_one(
    stored_dim, monkeypatch
):
    remember(["Alice likes jazz", "Alice plays chess", "Alice reads novels"])
    counting = CountingProvider()
    monkeypatch.setattr("memories.services.embedding_jobs.embedding_provider", lambda: counting)

    assert "to do: reset (--force-reembed)" in rebuild("--force-reembed", "--batch-size", "2")
    assert len(counting.embedded) == 3
    assert column_comment()["complete"] is True

    # An unfinished rebuild to the same target: --force-reembed resumes it.
    with connection.cursor() as cursor:
        cursor.execute(
            "COMMENT ON COLUMN memories.embedding IS %s",
            [
                json.dumps(
                    {
                        "model_id": f"hashing-{stored_dim}",
                        "dimensions": stored_dim,
                        "complete": False,
                    }
                )
            ],
        )
        cursor.execute(
            "UPDATE memories SET embedding_status = 'pending' WHERE content = 'Alice reads novels'"
        )
    assert "phase 1: skipped" in rebuild("--force-reembed")
    assert counting.embedded[3:] == ["Alice reads novels"]


def test_dry_run_says_what_it_would_do_and_changes_nothing(stored_dim, settings):
    remember(["Alice likes jazz", "Alice plays chess"])
    graphs = hnsw_indexes()
    switch_dimension(settings, NEW_DIM)

    output = rebuild("--dry-run")

    assert output.splitlines() == [
        f"column: halfvec({stored_dim}), vectors by: not recorded",
        f"target: halfvec({NEW_DIM}), model hashing-{NEW_DIM}",
        "memories: 2, not ready: 0",
        f"to do: reset (the column holds {stored_dim}-dimension vectors, EMBEDDING_DIM={NEW_DIM}),"
        " then re-embed all 2 memories and rebuild the HNSW indexes",
    ]
    assert column_dimensions() == stored_dim
    assert statuses() == {"ready": 2}
    assert hnsw_indexes() == graphs
    assert column_comment() is None


def test_a_second_rebuild_at_the_same_time_is_refused(stored_dim, settings):
    remember(["Alice likes jazz"])
    switch_dimension(settings, NEW_DIM)
    with psycopg.connect(server_url(connection.settings_dict["NAME"])) as other:
        other.execute(
            "SELECT pg_advisory_lock(%s, hashtext(''))", [int(LockNamespace.EMBEDDING_REBUILD)]
        )
        with pytest.raises(CommandError, match="Another embeddings_rebuild is running"):
            rebuild()
    assert column_dimensions() == stored_dim
