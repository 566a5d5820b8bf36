"""Changing the embedding provider or dimension of a database that holds vectors
(`manage.py embeddings_rebuild`; docs/schema.md, "Changing EMBEDDING_DIM").

The target is what the settings name: the provider's `model_id` and EMBEDDING_DIM. Three
phases, each safe to interrupt and run again:

1. Reset, in one short transaction: drop every HNSW index on `embedding` (the partitions' four
   and the big users' own) and what other apps build on the column (`memories.hooks`:
   reflection's decay view), give the column the target dimension, mark every memory `pending`
   with no vector, create those dependents again, and record the target in the column's
   comment. Skipped when the comment already names the target: a resumed rebuild does not
   start over.
2. Re-embed every memory that is not `ready`, in batches taken by id (keyset), the worker's
   way (`memories_embed`, without its near-duplicate confirmation: these memories are not new):
   vectors computed with no transaction open, each batch stored in a statement of its own.
3. Build the partitions' graphs as migration 0004 defines them, then the big users' own
   (`user_indexes_refresh`), bring the column's dependents up to date, and record the rebuild
   as complete.

Recall keeps answering: its vector side reads only `ready` rows, so a memory still waiting for
its new vector is found by its text.
"""

import importlib
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import OperationalError, connection, transaction
from psycopg import sql

from core.db.locks import LockNamespace, single_flight
from core.errors import Conflict, Unavailable
from memories.embeddings import embedding_provider
from memories.hooks import embedding_column_dependents
from memories.models import EmbeddingStatus, Memory
from memories.services.embedding_jobs import memories_embed
from memories.user_indexes import partition_name, user_indexes_refresh

# The partitions' graphs and their options: one definition, migration 0004's.
GRAPHS: list[tuple[str, int, int]] = importlib.import_module(
    "memories.migrations.0004_hnsw_ready_only"
).GRAPHS

# Phase 1 waits this long for the table lock, then gives up (rather than queue every
# reader and writer behind it while a long query or index build finishes).
RESET_LOCK_TIMEOUT = "10s"

# The HNSW indexes on `embedding` of memories' partitions (name, valid): the four graphs of
# migration 0004 and the big users' own (memories/user_indexes.py).
HNSW_INDEXES_SQL = """
SELECT c.relname, i.indisvalid FROM pg_inherits p
JOIN pg_index i ON i.indrelid = p.inhrelid
JOIN pg_class c ON c.oid = i.indexrelid
JOIN pg_am am ON am.oid = c.relam
JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey::int2[])
WHERE p.inhparent = 'memories'::regclass AND am.amname = 'hnsw' AND a.attname = 'embedding'
"""


@dataclass(frozen=True)
class EmbeddingSpace:
    """Which vectors the column holds: the model that made them, and their dimension."""

    model_id: str
    dimensions: int


@dataclass(frozen=True)
class ColumnRecord:
    """What the column's comment says: the space of the last rebuild, and whether every
    phase of it completed."""

    space: EmbeddingSpace
    complete: bool


@dataclass(frozen=True)
class RebuildPlan:
    target: EmbeddingSpace
    column_dimensions: int
    recorded: ColumnRecord | None
    reset_reason: str | None  # why phase 1 runs; None when it does not
    memories: int
    not_ready: int

    @property
    def resuming(self) -> bool:
        return (
            self.reset_reason is None
            and self.recorded is not None
            and self.recorded.space == self.target
            and not self.recorded.complete
        )

    @property
    def needed(self) -> bool:
        return self.reset_reason is not None or self.resuming


@dataclass(frozen=True)
class RebuildResult:
    reset: bool
    embedded: int
    indexes_built: list[str]


@dataclass(frozen=True)
class RebuildProgress:
    """Reported after each phase-2 batch: memories gone through, of `total`."""

    done: int
    total: int


def embedding_target() -> EmbeddingSpace:
    """The space the settings ask for. Raises Conflict when the provider cannot load or does
    not embed into EMBEDDING_DIM."""
    try:
        provider = embedding_provider()
    except (ImproperlyConfigured, ImportError) as error:
        raise Conflict(f"EMBEDDING_PROVIDER={settings.EMBEDDING_PROVIDER}: {error}") from error
    return EmbeddingSpace(model_id=provider.model_id, dimensions=settings.EMBEDDING_DIM)


def embeddings_rebuild_plan(*, force_reembed: bool = False) -> RebuildPlan:
    """What a rebuild to the settings' target would do, from the database as it is."""
    target = embedding_target()
    column_dimensions, recorded = _column_state()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*), count(*) FILTER (WHERE embedding_status <> 'ready') FROM memories"
        )
        memories, not_ready = cursor.fetchone()
    return RebuildPlan(
        target=target,
        column_dimensions=column_dimensions,
        recorded=recorded,
        reset_reason=_reset_reason(
            target, column_dimensions, recorded, force_reembed=force_reembed
        ),
        memories=memories,
        not_ready=not_ready,
    )


def embeddings_rebuild(
    *,
    force_reembed: bool = False,
    batch_size: int = 256,
    on_phase: Callable[[str], None] = lambda message: None,
    on_progress: Callable[[RebuildProgress], None] = lambda progress: None,
) -> RebuildResult:
    """Bring every memory's embedding to the settings' target (the three phases above); does
    nothing when the column already holds it. One rebuild at a time: another one running
    raises Conflict. Runs outside any transaction (the provider is called between batches,
    and the graphs are built CONCURRENTLY)."""
    if connection.in_atomic_block:
        raise RuntimeError("embeddings_rebuild runs outside a transaction")
    with single_flight(LockNamespace.EMBEDDING_REBUILD) as running:
        if not running:
            raise Conflict("Another embeddings_rebuild is running; wait for it to finish.")
        plan = embeddings_rebuild_plan(force_reembed=force_reembed)
        if not plan.needed:
            return RebuildResult(reset=False, embedded=0, indexes_built=[])
        if plan.reset_reason:
            on_phase(f"phase 1: reset ({plan.reset_reason})")
            embeddings_reset(target=plan.target)
        else:
            on_phase(f"phase 1: skipped, resuming the rebuild to {plan.target.model_id}")
        on_phase("phase 2: re-embedding the memories that are not ready")
        embedded = memories_reembed(batch_size=batch_size, on_progress=on_progress)
        on_phase("phase 3: building the HNSW indexes")
        built = embedding_indexes_build()
        for dependent in embedding_column_dependents():  # e.g. the decay view: new vectors
            dependent.refresh()
        _column_record_write(ColumnRecord(space=plan.target, complete=True))
        return RebuildResult(reset=bool(plan.reset_reason), embedded=embedded, indexes_built=built)


@transaction.atomic
def embeddings_reset(*, target: EmbeddingSpace) -> None:
    """Phase 1: every memory `pending` with no vector, the column at the target dimension,
    the target recorded; the HNSW indexes dropped, so that phase 2's writes do not maintain
    graphs row by row (phase 3 builds them once, faster). What other apps build on the column
    (memories.hooks: reflection's decay view, which carries the traits' vectors) is dropped
    first and created again at the end, from the column as it now is: a column a view depends
    on cannot be dropped, and the view must not keep vectors of the old space."""
    dependents = embedding_column_dependents()
    with connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL lock_timeout = '{RESET_LOCK_TIMEOUT}'")
        try:
            cursor.execute("LOCK TABLE memories IN ACCESS EXCLUSIVE MODE")
            for dependent in dependents:  # waits, within the timeout, for its readers
                dependent.drop()
        except OperationalError as error:
            raise Unavailable(
                f"memories stayed locked for {RESET_LOCK_TIMEOUT} (a long query or an index "
                "build holds it); nothing was changed. Run the command again."
            ) from error
        # Under the table lock: a per-user graph that beat builds now cannot be missed.
        cursor.execute(HNSW_INDEXES_SQL)
        for name, _ in cursor.fetchall():
            cursor.execute(f"DROP INDEX {connection.ops.quote_name(name)}")
        column_dimensions, _ = _column_state()
        if column_dimensions != target.dimensions:
            # The old vectors cannot be converted. Dropping and adding the column changes the
            # catalog only; ALTER COLUMN TYPE … USING NULL would rewrite every row and rebuild
            # every index of the table while holding the lock, and the UPDATE below rewrites
            # the rows anyway.
            cursor.execute(
                "ALTER TABLE memories DROP COLUMN embedding, "
                f"ADD COLUMN embedding halfvec({int(target.dimensions)})"
            )
        cursor.execute(
            "UPDATE memories SET embedding = NULL, embedding_status = 'pending' "
            "WHERE embedding IS NOT NULL OR embedding_status <> 'pending'"
        )
    for dependent in dependents:
        dependent.create()
    _column_record_write(ColumnRecord(space=target, complete=False))


def memories_reembed(
    *, batch_size: int, on_progress: Callable[[RebuildProgress], None] = lambda progress: None
) -> int:
    """Phase 2: embed every memory that is not `ready`, `batch_size` at a time in id order;
    answers how many became ready. Keyset pagination: a memory the batch could not store (its
    content changed meanwhile; the write that changed it scheduled the worker) is not read
    again, and an interrupted run starts over from the first memory still not ready."""
    total = Memory.objects.exclude(embedding_status=EmbeddingStatus.READY).count()
    done = embedded = 0
    after = uuid.UUID(int=0)
    while True:
        ids = list(
            Memory.objects.exclude(embedding_status=EmbeddingStatus.READY)
            .filter(id__gt=after)
            .order_by("id")
            .values_list("id", flat=True)[:batch_size]
        )
        if not ids:
            return embedded
        # The provider runs outside a transaction. Not confirmed as near duplicates: the
        # memories were written before, and checked then.
        embedded += memories_embed(memory_ids=ids, confirm_duplicates=False)
        done += len(ids)
        after = ids[-1]
        # Memories written during the rebuild can raise the count past the first estimate.
        on_progress(RebuildProgress(done=done, total=max(total, done)))


def embedding_indexes_build() -> list[str]:
    """Phase 3: the partitions' HNSW graphs, as migration 0004 defines them, where missing;
    then the big users' own. CONCURRENTLY, which works because each graph is an index of a
    partition (a plain table), not of the partitioned parent: writes go on during the build.
    An interrupted build leaves an invalid index behind, dropped here before building again."""
    with connection.cursor() as cursor:
        cursor.execute(HNSW_INDEXES_SQL)
        valid = {name: is_valid for name, is_valid in cursor.fetchall()}
        built = []
        for partition, m, ef_construction in GRAPHS:
            name = f"idx_{partition}_embedding"
            if valid.get(name):
                continue
            cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
            cursor.execute(
                f"CREATE INDEX CONCURRENTLY {name} ON {partition_name(partition)}"
                " USING hnsw (embedding halfvec_cosine_ops)"
                f" WITH (m = {m}, ef_construction = {ef_construction})"
                " WHERE embedding_status = 'ready'"
            )
            built.append(name)
    # Beat's job, now rather than within the hour; when beat is running it, beat builds them.
    with single_flight(LockNamespace.USER_INDEXES) as running:
        if running:
            built += user_indexes_refresh().built
    return built


def embeddings_rebuild_unfinished() -> bool:
    """Whether a rebuild reset the column and has not completed (running, or interrupted):
    the memories `pending` meanwhile were written before it, not just now."""
    _, recorded = _column_state()
    return recorded is not None and not recorded.complete


def _reset_reason(
    target: EmbeddingSpace,
    column_dimensions: int,
    recorded: ColumnRecord | None,
    *,
    force_reembed: bool,
) -> str | None:
    if column_dimensions != target.dimensions:
        return (
            f"the column holds {column_dimensions}-dimension vectors, "
            f"EMBEDDING_DIM={target.dimensions}"
        )
    if recorded is not None and recorded.space != target:
        return (
            f"the vectors were made by {recorded.space.model_id}, "
            f"EMBEDDING_PROVIDER gives {target.model_id}"
        )
    resumable = recorded is not None and recorded.space == target and not recorded.complete
    if force_reembed and not resumable:
        return "--force-reembed"
    return None


def _column_state() -> tuple[int, ColumnRecord | None]:
    """The column's dimension and its record (None on a column no rebuild has recorded, e.g.
    a fresh install: its vectors are taken to be the configured provider's)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT t.typname, a.atttypmod, col_description(a.attrelid, a.attnum)"
            " FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid"
            " WHERE a.attrelid = to_regclass('memories') AND a.attname = 'embedding'"
            " AND NOT a.attisdropped"
        )
        row = cursor.fetchone()
    if row is None:
        raise Conflict("There is no memories.embedding column: run `manage.py migrate` first.")
    type_name, dimensions, comment = row
    if type_name != "halfvec" or dimensions < 1:
        raise Conflict(
            f"memories.embedding is {type_name} with no fixed dimension, expected halfvec(n); "
            "run `manage.py migrate`."
        )
    return dimensions, _column_record_parse(comment)


def _column_record_parse(comment: str | None) -> ColumnRecord | None:
    try:
        record = json.loads(comment or "")
        return ColumnRecord(
            space=EmbeddingSpace(
                model_id=str(record["model_id"]), dimensions=int(record["dimensions"])
            ),
            complete=bool(record["complete"]),
        )
    except (ValueError, TypeError, KeyError):
        return None  # no comment, or one that is not ours


def _column_record_write(record: ColumnRecord) -> None:
    """The comment survives restarts, dumps and restores, and changes with the column in the
    same transaction: no table of its own needed."""
    comment = json.dumps(
        {
            "model_id": record.space.model_id,
            "dimensions": record.space.dimensions,
            "complete": record.complete,
        }
    )
    connection.ensure_connection()
    # COMMENT takes no bind parameter: the JSON is quoted as a literal.
    statement = sql.SQL("COMMENT ON COLUMN memories.embedding IS {}").format(sql.Literal(comment))
    with connection.cursor() as cursor:
        cursor.execute(statement.as_string(connection.connection))
