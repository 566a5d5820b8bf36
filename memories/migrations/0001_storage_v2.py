"""Storage V2: the partitioned `memories` table, its auxiliary tables, and the in-place
upgrade of a V1 database (seed 000 steps 1–9, seed 002 §2–§3, docs/schema.md).

Every database step is idempotent: on an already upgraded database it changes nothing.
Whatever is refused (pgvector < 0.7, both `embeddings` and `memories` present, unknown V1
memory types or columns, a dimension mismatch) stops `migrate` with a CommandError before
the transaction commits, so nothing is half-migrated.

Reversing drops the V2 tables; the V1 layout is not restored (restore V1 from a backup).
"""

import django.contrib.postgres.fields
import django.contrib.postgres.functions
import django.db.models.deletion
import django.db.models.functions.datetime
import django.utils.timezone
import pgvector.django.halfvec
import uuid
from django.conf import settings
from django.core.management.base import CommandError
from django.db import migrations, models

import core.db.fields

MIN_PGVECTOR = (0, 7, 0)
MEMORY_TYPES = ("fact", "episodic", "trait", "document")
LEGACY_TYPES = ("general", "insight")


def embedding_dim() -> int:
    return settings.EMBEDDING_DIM


# (name, type, NOT NULL, default): drives CREATE TABLE, the V1 ADD COLUMNs and the row move.
def memory_columns() -> list[tuple[str, str, bool, str | None]]:
    return [
        ("id", "uuid", True, "gen_random_uuid()"),
        ("user_id", "varchar(255)", True, None),
        ("memory_type", "varchar(50)", True, None),
        ("content", "text", True, None),
        ("embedding", f"halfvec({embedding_dim()})", False, None),
        ("valid_at", "timestamptz", False, None),
        ("invalid_at", "timestamptz", False, None),
        ("created_at", "timestamptz", True, "now()"),
        ("updated_at", "timestamptz", False, None),
        ("expired_at", "timestamptz", False, None),
        ("valid_from", "timestamptz", False, None),
        ("valid_until", "timestamptz", False, None),
        ("extracted_timestamp", "timestamptz", False, None),
        ("version", "integer", True, "1"),
        ("superseded_by", "uuid", False, None),
        ("importance", "real", True, "0.5"),
        ("score", "real", True, "50"),
        ("key", "varchar(255)", False, None),
        ("access_count", "integer", True, "0"),
        ("last_accessed_at", "timestamptz", False, None),
        ("content_hash", "varchar(32)", False, None),
        ("metadata", "jsonb", True, "'{}'::jsonb"),
        ("trait_subtype", "varchar(20)", False, None),
        ("trait_stage", "varchar(20)", False, None),
        ("trait_confidence", "real", False, None),
        ("trait_context", "varchar(20)", False, None),
        ("trait_parent_id", "uuid", False, None),
        ("trait_reinforcement_count", "integer", False, "0"),
        ("trait_contradiction_count", "integer", False, "0"),
        ("trait_last_reinforced", "timestamptz", False, None),
        ("trait_first_observed", "timestamptz", False, None),
        ("trait_window_start", "timestamptz", False, None),
        ("trait_window_end", "timestamptz", False, None),
        ("trait_derived_from", "varchar(20)", False, None),
        ("subject_entity_id", "uuid", False, None),
        ("object_entity_id", "uuid", False, None),
        ("source_episode_ids", "uuid[]", False, None),
    ]


def column_ddl(name: str, sql_type: str, not_null: bool, default: str | None) -> str:
    return f"{name} {sql_type}" + (" NOT NULL" if not_null else "") + (
        f" DEFAULT {default}" if default else ""
    )


# --- Step 1: pgvector -----------------------------------------------------------------------


def version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("-")[0].split(".")[:3])


def pgvector_problem(installed: str | None, available: str | None) -> str | None:
    """Why this server's pgvector cannot hold halfvec, or None when it can."""
    required = ".".join(map(str, MIN_PGVECTOR))
    if installed is None and available is None:
        return (
            "pgvector is not available on this PostgreSQL server; NeuroMem needs pgvector "
            f">= {required} (for halfvec). Install it and run migrate again."
        )
    if installed is not None and version_tuple(installed) < MIN_PGVECTOR:
        hint = (
            f"Run ALTER EXTENSION vector UPDATE (version {available} is available)"
            if available and version_tuple(available) >= MIN_PGVECTOR
            else f"Install pgvector >= {required}, then ALTER EXTENSION vector UPDATE"
        )
        return (
            f"pgvector {installed} is installed, NeuroMem needs pgvector >= {required} "
            f"(for halfvec). {hint} and run migrate again. Nothing was changed."
        )
    if installed is None and version_tuple(available) < MIN_PGVECTOR:
        return (
            f"pgvector {available} is available, NeuroMem needs pgvector >= {required} "
            "(for halfvec). Install a newer pgvector and run migrate again. Nothing was changed."
        )
    return None


def require_pgvector(apps, schema_editor) -> None:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        installed = cursor.fetchone()
        cursor.execute("SELECT default_version FROM pg_available_extensions WHERE name = 'vector'")
        available = cursor.fetchone()
    problem = pgvector_problem(installed and installed[0], available and available[0])
    if problem:
        raise CommandError(problem)


# --- Step 2–7: a V1 `embeddings` table, upgraded in place and staged as `memories_v1` --------

# Conversions that cannot fail: a bad value in V1 metadata stays in metadata, column NULL.
SAFE_CASTS = """
CREATE OR REPLACE FUNCTION pg_temp.nm_real(v text) RETURNS real LANGUAGE plpgsql AS
$$ BEGIN RETURN v::real; EXCEPTION WHEN others THEN RETURN NULL; END $$;
CREATE OR REPLACE FUNCTION pg_temp.nm_int(v text) RETURNS integer LANGUAGE plpgsql AS
$$ BEGIN RETURN v::integer; EXCEPTION WHEN others THEN RETURN NULL; END $$;
CREATE OR REPLACE FUNCTION pg_temp.nm_uuid(v text) RETURNS uuid LANGUAGE plpgsql AS
$$ BEGIN RETURN v::uuid; EXCEPTION WHEN others THEN RETURN NULL; END $$;
CREATE OR REPLACE FUNCTION pg_temp.nm_ts(v text) RETURNS timestamptz LANGUAGE plpgsql AS
$$ BEGIN RETURN v::timestamptz; EXCEPTION WHEN others THEN RETURN NULL; END $$;
"""

# Seed 000 step 6, in its order; each statement only touches rows it has not touched yet.
BACKFILL = [
    "UPDATE memories SET memory_type = 'fact' WHERE memory_type = 'general'",
    """UPDATE memories SET memory_type = 'trait', trait_stage = 'trend',
           trait_window_start = created_at, trait_window_end = created_at + interval '30 days'
       WHERE memory_type = 'insight'""",
    """UPDATE memories SET
           trait_subtype = metadata->>'trait_subtype',
           trait_stage = COALESCE(trait_stage, metadata->>'trait_stage'),
           trait_confidence = pg_temp.nm_real(metadata->>'confidence'),
           trait_context = metadata->>'context',
           trait_reinforcement_count = COALESCE(pg_temp.nm_int(metadata->>'reinforcement_count'), 0),
           trait_contradiction_count = COALESCE(pg_temp.nm_int(metadata->>'contradiction_count'), 0),
           trait_derived_from = metadata->>'derived_from'
       WHERE memory_type = 'trait' AND trait_subtype IS NULL
         AND metadata->>'trait_subtype' IS NOT NULL""",
    # The trait fields seed 000 leaves in metadata: copied only into empty columns.
    """UPDATE memories SET
           trait_parent_id = COALESCE(trait_parent_id, pg_temp.nm_uuid(metadata->>'parent_id')),
           trait_last_reinforced = COALESCE(trait_last_reinforced,
                                            pg_temp.nm_ts(metadata->>'last_reinforced')),
           trait_first_observed = COALESCE(trait_first_observed,
                                           pg_temp.nm_ts(metadata->>'first_observed')),
           trait_window_start = COALESCE(trait_window_start,
                                         pg_temp.nm_ts(metadata->>'window_start')),
           trait_window_end = COALESCE(trait_window_end, pg_temp.nm_ts(metadata->>'window_end'))
       WHERE memory_type = 'trait' AND jsonb_typeof(metadata) = 'object'
         AND metadata ?| array['parent_id', 'last_reinforced', 'first_observed',
                               'window_start', 'window_end']""",
    "UPDATE memories SET content_hash = md5(content) WHERE content_hash IS NULL",
    "UPDATE memories SET valid_at = COALESCE(valid_from, created_at) WHERE valid_at IS NULL",
]


def relation_kind(cursor, name: str) -> str | None:
    cursor.execute(
        "SELECT c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = current_schema() AND c.relname = %s",
        [name],
    )
    row = cursor.fetchone()
    return row[0] if row else None


def column_type(cursor, table: str, column: str) -> tuple[str, int] | None:
    cursor.execute(
        "SELECT t.typname, a.atttypmod FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
        "WHERE a.attrelid = %s::regclass AND a.attname = %s AND NOT a.attisdropped",
        [table, column],
    )
    return cursor.fetchone()


def check_v1_columns(cursor) -> None:
    cursor.execute(
        "SELECT attname FROM pg_attribute WHERE attrelid = 'memories'::regclass "
        "AND attnum > 0 AND NOT attisdropped ORDER BY attnum"
    )
    known = {name for name, *_ in memory_columns()}
    unknown = [name for (name,) in cursor.fetchall() if name not in known]
    if unknown:
        raise CommandError(
            "The V1 embeddings table has columns NeuroMem does not know: "
            f"{', '.join(unknown)}. Their values would be lost; move them into `metadata` "
            "(or drop them) and run migrate again. Nothing was changed."
        )


def check_v1_memory_types(cursor) -> None:
    cursor.execute(
        "SELECT coalesce(memory_type, '<NULL>'), count(*) FROM memories "
        "WHERE memory_type IS NULL OR memory_type <> ALL(%s) GROUP BY 1 ORDER BY 1",
        [list(MEMORY_TYPES)],
    )
    unknown = cursor.fetchall()
    if unknown:
        listed = ", ".join(f"{memory_type!r} ({count} rows)" for memory_type, count in unknown)
        raise CommandError(
            f"V1 memories with memory types NeuroMem does not know: {listed}. Known: "
            f"{', '.join(MEMORY_TYPES)} (and the legacy {', '.join(LEGACY_TYPES)}). Update "
            "those rows to a known type and run migrate again. Nothing was changed."
        )


def convert_embeddings_to_halfvec(cursor) -> None:
    """Seed 000 steps 7 and 9: vector(n) → halfvec(n), dropping the old vector indexes."""
    dim = embedding_dim()
    type_name, typmod = column_type(cursor, "memories", "embedding") or (None, None)
    if type_name is None:
        return  # no embedding column in V1: ADD COLUMN created a halfvec one
    if type_name not in ("vector", "halfvec"):
        raise CommandError(f"V1 embedding column has type {type_name}, expected vector.")
    if typmod not in (-1, dim):
        raise CommandError(
            f"V1 embeddings have {typmod} dimensions but EMBEDDING_DIM is {dim}. Set "
            f"EMBEDDING_DIM={typmod} and run migrate again. Nothing was changed."
        )
    cursor.execute(
        "SELECT DISTINCT vector_dims(embedding) FROM memories WHERE embedding IS NOT NULL"
    )
    found = sorted(row[0] for row in cursor.fetchall())
    if found and found != [dim]:
        raise CommandError(
            f"V1 embeddings have {found} dimensions but EMBEDDING_DIM is {dim}. Set "
            "EMBEDDING_DIM to the dimension of the stored vectors (re-embed rows of any other "
            "dimension) and run migrate again. Nothing was changed."
        )
    if type_name == "halfvec" and typmod == dim:
        return
    cursor.execute(
        "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
        "JOIN pg_am am ON am.oid = c.relam "
        "WHERE i.indrelid = 'memories'::regclass AND am.amname IN ('hnsw', 'ivfflat')"
    )
    for (index_name,) in cursor.fetchall():
        cursor.execute(f'DROP INDEX IF EXISTS "{index_name}"')
    cursor.execute(
        f"ALTER TABLE memories ALTER COLUMN embedding TYPE halfvec({dim}) "
        f"USING embedding::halfvec({dim})"
    )


def upgrade_v1_table(apps, schema_editor) -> None:
    with schema_editor.connection.cursor() as cursor:
        embeddings, memories = relation_kind(cursor, "embeddings"), relation_kind(cursor, "memories")
        if embeddings and memories:
            raise CommandError(
                "Both an `embeddings` (V1) and a `memories` table exist. Keep the one that "
                "holds your data (rename or drop the other) and run migrate again."
            )
        if embeddings:
            cursor.execute("ALTER TABLE embeddings RENAME TO memories")
        if relation_kind(cursor, "memories") != "r":
            return  # a fresh database, or memories is already the partitioned V2 table
        check_v1_columns(cursor)
        for name, sql_type, _, default in memory_columns():
            default_sql = f" DEFAULT {default}" if default and name != "id" else ""
            cursor.execute(f"ALTER TABLE memories ADD COLUMN IF NOT EXISTS {name} {sql_type}{default_sql}")
        cursor.execute(SAFE_CASTS)
        for statement in BACKFILL:
            cursor.execute(statement)
        check_v1_memory_types(cursor)
        convert_embeddings_to_halfvec(cursor)
        # Free every name the V2 table and its indexes will use.
        cursor.execute(
            "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "WHERE i.indrelid = 'memories'::regclass"
        )
        for number, (index_name,) in enumerate(cursor.fetchall()):
            cursor.execute(f'ALTER INDEX "{index_name}" RENAME TO memories_v1_index_{number}')
        cursor.execute("ALTER TABLE memories RENAME TO memories_v1")


def move_v1_rows(apps, schema_editor) -> None:
    """Copy the staged V1 rows into the partitioned table, all or nothing, then drop V1."""
    with schema_editor.connection.cursor() as cursor:
        if relation_kind(cursor, "memories_v1") != "r":
            return
        columns = memory_columns()
        names = ", ".join(name for name, *_ in columns)
        # NULL in a column that is NOT NULL in V2 takes the column's default (e.g. metadata {}).
        values = ", ".join(
            f"COALESCE({name}, {default})" if not_null and default else name
            for name, _, not_null, default in columns
        )
        cursor.execute(f"INSERT INTO memories ({names}) SELECT {values} FROM memories_v1")
        moved = cursor.rowcount
        cursor.execute("SELECT count(*) FROM memories_v1")
        (staged,) = cursor.fetchone()
        if moved != staged:
            raise CommandError(f"Moved {moved} of {staged} V1 memories; nothing was changed.")
        cursor.execute("DROP TABLE memories_v1")
        cursor.execute("ANALYZE memories")


# --- The V2 tables ----------------------------------------------------------------------------


def create_memories_sql() -> str:
    columns = ",\n    ".join(column_ddl(*column) for column in memory_columns())
    types = ", ".join(f"'{t}'" for t in MEMORY_TYPES)
    return f"""
CREATE TABLE IF NOT EXISTS memories (
    {columns},
    CONSTRAINT memories_pkey PRIMARY KEY (id, memory_type),
    CONSTRAINT chk_memory_type CHECK (memory_type IN ({types})),
    CONSTRAINT chk_memory_importance CHECK (importance >= 0 AND importance <= 1),
    CONSTRAINT chk_memory_score CHECK (score >= 0 AND score <= 100)
) PARTITION BY LIST (memory_type);

CREATE TABLE IF NOT EXISTS memories_fact PARTITION OF memories FOR VALUES IN ('fact');
CREATE TABLE IF NOT EXISTS memories_episodic PARTITION OF memories FOR VALUES IN ('episodic');
CREATE TABLE IF NOT EXISTS memories_trait PARTITION OF memories FOR VALUES IN ('trait');
CREATE TABLE IF NOT EXISTS memories_document PARTITION OF memories FOR VALUES IN ('document');

-- Seed 002 §2.4: room for HOT updates where rows change, eager autovacuum on hot traits.
ALTER TABLE memories_trait SET (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.05,
                                autovacuum_analyze_scale_factor = 0.02);
ALTER TABLE memories_fact SET (fillfactor = 90, autovacuum_vacuum_scale_factor = 0.10);
ALTER TABLE memories_episodic SET (fillfactor = 95);
"""


MEMORIES_INDEXES_SQL = """
-- Vector: one HNSW index per partition; traits get the more precise graph.
CREATE INDEX IF NOT EXISTS idx_fact_embedding ON memories_fact
    USING hnsw (embedding halfvec_cosine_ops) WITH (m = 16, ef_construction = 64);
CREATE INDEX IF NOT EXISTS idx_episodic_embedding ON memories_episodic
    USING hnsw (embedding halfvec_cosine_ops) WITH (m = 16, ef_construction = 64);
CREATE INDEX IF NOT EXISTS idx_trait_embedding ON memories_trait
    USING hnsw (embedding halfvec_cosine_ops) WITH (m = 24, ef_construction = 128);
CREATE INDEX IF NOT EXISTS idx_document_embedding ON memories_document
    USING hnsw (embedding halfvec_cosine_ops) WITH (m = 16, ef_construction = 64);

-- Per-user access paths.
CREATE INDEX IF NOT EXISTS idx_fact_user ON memories_fact (user_id, created_at DESC);
CREATE INDEX IF NOT EXISTS idx_episodic_user ON memories_episodic (user_id, valid_at DESC);
CREATE INDEX IF NOT EXISTS idx_trait_user ON memories_trait (user_id, trait_stage, trait_subtype);
CREATE INDEX IF NOT EXISTS idx_document_user ON memories_document (user_id, created_at DESC);

-- Traits.
CREATE INDEX IF NOT EXISTS idx_trait_stage_confidence
    ON memories_trait (user_id, trait_stage, trait_confidence DESC)
    WHERE trait_stage NOT IN ('dissolved', 'trend');
CREATE INDEX IF NOT EXISTS idx_trait_parent ON memories_trait (trait_parent_id)
    WHERE trait_parent_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_trait_context ON memories_trait (user_id, trait_context)
    WHERE trait_context IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_trait_window ON memories_trait (trait_window_end)
    WHERE trait_stage = 'trend' AND trait_window_end IS NOT NULL;

-- Time travel.
CREATE INDEX IF NOT EXISTS idx_fact_temporal ON memories_fact (user_id, valid_at, invalid_at);
CREATE INDEX IF NOT EXISTS idx_episodic_temporal ON memories_episodic (user_id, valid_at);

-- Write path: hash dedup, supersede chains, keys.
CREATE INDEX IF NOT EXISTS idx_content_hash ON memories (user_id, memory_type, content_hash)
    WHERE content_hash IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_memories_superseded_by ON memories (superseded_by)
    WHERE superseded_by IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_memories_key ON memories (user_id, key) WHERE key IS NOT NULL;

-- Full text (seed 002 §2.5 fallback); the recall issue decides the CJK design.
CREATE INDEX IF NOT EXISTS idx_fact_fts ON memories_fact USING gin (to_tsvector('simple', content));
CREATE INDEX IF NOT EXISTS idx_episodic_fts
    ON memories_episodic USING gin (to_tsvector('simple', content));
"""

# V1 had both tables; create them when missing, add what V2 needs when present.
CONVERSATIONS_SQL = """
CREATE TABLE IF NOT EXISTS conversation_sessions (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id varchar(255) NOT NULL
);
ALTER TABLE conversation_sessions
    ADD COLUMN IF NOT EXISTS started_at timestamptz NOT NULL DEFAULT now(),
    ADD COLUMN IF NOT EXISTS ended_at timestamptz,
    ADD COLUMN IF NOT EXISTS last_reflected_at timestamptz,
    ADD COLUMN IF NOT EXISTS metadata jsonb NOT NULL DEFAULT '{}'::jsonb;
CREATE INDEX IF NOT EXISTS idx_sessions_user ON conversation_sessions (user_id, started_at DESC);

CREATE TABLE IF NOT EXISTS conversations (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    session_id uuid NOT NULL,
    user_id varchar(255) NOT NULL,
    role varchar(20) NOT NULL,
    content text NOT NULL
);
ALTER TABLE conversations
    ADD COLUMN IF NOT EXISTS extraction_status varchar(20) NOT NULL DEFAULT 'pending',
    ADD COLUMN IF NOT EXISTS created_at timestamptz NOT NULL DEFAULT now();
DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'conversations_session_id_fk') THEN
        ALTER TABLE conversations ADD CONSTRAINT conversations_session_id_fk
            FOREIGN KEY (session_id) REFERENCES conversation_sessions (id) ON DELETE CASCADE;
    END IF;
END $$;
CREATE INDEX IF NOT EXISTS idx_conversations_session ON conversations (session_id, created_at);
CREATE INDEX IF NOT EXISTS idx_conversations_user ON conversations (user_id, created_at);
"""


class Migration(migrations.Migration):
    initial = True

    dependencies = []

    operations = [
        migrations.RunPython(require_pgvector, migrations.RunPython.noop),
        migrations.RunSQL("CREATE EXTENSION IF NOT EXISTS vector", migrations.RunSQL.noop),
        migrations.RunPython(upgrade_v1_table, migrations.RunPython.noop),
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(create_memories_sql(), "DROP TABLE IF EXISTS memories CASCADE")
            ],
            state_operations=[
                migrations.CreateModel(
                    name='Memory',
                    fields=[
                        ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                        ('user_id', models.CharField(max_length=255)),
                        ('memory_type', models.CharField(choices=[('fact', 'Fact'), ('episodic', 'Episodic'), ('trait', 'Trait'), ('document', 'Document')], max_length=50)),
                        ('content', models.TextField()),
                        ('embedding', pgvector.django.halfvec.HalfVectorField(blank=True, dimensions=settings.EMBEDDING_DIM, null=True)),
                        ('valid_at', models.DateTimeField(blank=True, null=True)),
                        ('invalid_at', models.DateTimeField(blank=True, null=True)),
                        ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('updated_at', models.DateTimeField(blank=True, null=True)),
                        ('expired_at', models.DateTimeField(blank=True, null=True)),
                        ('valid_from', models.DateTimeField(blank=True, null=True)),
                        ('valid_until', models.DateTimeField(blank=True, null=True)),
                        ('extracted_timestamp', models.DateTimeField(blank=True, null=True)),
                        ('version', models.IntegerField(default=1)),
                        ('superseded_by', models.UUIDField(blank=True, null=True)),
                        ('importance', core.db.fields.RealField(default=0.5)),
                        ('score', core.db.fields.RealField(default=50.0)),
                        ('key', models.CharField(blank=True, max_length=255, null=True)),
                        ('access_count', models.IntegerField(default=0)),
                        ('last_accessed_at', models.DateTimeField(blank=True, null=True)),
                        ('content_hash', models.CharField(blank=True, max_length=32, null=True)),
                        ('metadata', models.JSONField(blank=True, default=dict)),
                        ('trait_subtype', models.CharField(blank=True, choices=[('behavior', 'Behavior'), ('preference', 'Preference'), ('core', 'Core')], max_length=20, null=True)),
                        ('trait_stage', models.CharField(blank=True, choices=[('trend', 'Trend'), ('candidate', 'Candidate'), ('emerging', 'Emerging'), ('established', 'Established'), ('core', 'Core'), ('dissolved', 'Dissolved')], max_length=20, null=True)),
                        ('trait_confidence', core.db.fields.RealField(blank=True, null=True)),
                        ('trait_context', models.CharField(blank=True, choices=[('work', 'Work'), ('personal', 'Personal'), ('social', 'Social'), ('learning', 'Learning'), ('general', 'General'), ('contextual', 'Contextual')], max_length=20, null=True)),
                        ('trait_parent_id', models.UUIDField(blank=True, null=True)),
                        ('trait_reinforcement_count', models.IntegerField(blank=True, null=True)),
                        ('trait_contradiction_count', models.IntegerField(blank=True, null=True)),
                        ('trait_last_reinforced', models.DateTimeField(blank=True, null=True)),
                        ('trait_first_observed', models.DateTimeField(blank=True, null=True)),
                        ('trait_window_start', models.DateTimeField(blank=True, null=True)),
                        ('trait_window_end', models.DateTimeField(blank=True, null=True)),
                        ('trait_derived_from', models.CharField(blank=True, choices=[('reflection', 'Reflection'), ('trend_promotion', 'Trend Promotion'), ('contradiction_split', 'Contradiction Split')], max_length=20, null=True)),
                        ('subject_entity_id', models.UUIDField(blank=True, null=True)),
                        ('object_entity_id', models.UUIDField(blank=True, null=True)),
                        ('source_episode_ids', django.contrib.postgres.fields.ArrayField(base_field=models.UUIDField(), blank=True, null=True, size=None)),
                    ],
                    options={
                        'db_table': 'memories',
                        'ordering': ['-created_at'],
                        'constraints': [models.CheckConstraint(condition=models.Q(('memory_type__in', ['fact', 'episodic', 'trait', 'document'])), name='chk_memory_type'), models.CheckConstraint(condition=models.Q(('importance__gte', 0), ('importance__lte', 1)), name='chk_memory_importance'), models.CheckConstraint(condition=models.Q(('score__gte', 0), ('score__lte', 100)), name='chk_memory_score')],
                    },
                ),
            ],
        ),
        migrations.RunPython(move_v1_rows, migrations.RunPython.noop),
        # Indexes after the rows: building HNSW once beats inserting into it row by row.
        migrations.RunSQL(MEMORIES_INDEXES_SQL, migrations.RunSQL.noop),
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    CONVERSATIONS_SQL,
                    "DROP TABLE IF EXISTS conversations; DROP TABLE IF EXISTS conversation_sessions",
                )
            ],
            state_operations=[
                migrations.CreateModel(
                    name='ConversationSession',
                    fields=[
                        ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                        ('user_id', models.CharField(max_length=255)),
                        ('started_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('ended_at', models.DateTimeField(blank=True, null=True)),
                        ('last_reflected_at', models.DateTimeField(blank=True, null=True)),
                        ('metadata', models.JSONField(blank=True, default=dict)),
                    ],
                    options={
                        'db_table': 'conversation_sessions',
                        'ordering': ['-started_at'],
                        'indexes': [models.Index(fields=['user_id', '-started_at'], name='idx_sessions_user')],
                    },
                ),
                migrations.CreateModel(
                    name='ConversationMessage',
                    fields=[
                        ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                        ('user_id', models.CharField(max_length=255)),
                        ('role', models.CharField(max_length=20)),
                        ('content', models.TextField()),
                        ('extraction_status', models.CharField(default='pending', max_length=20)),
                        ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('session', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='messages', to='memories.conversationsession')),
                    ],
                    options={
                        'db_table': 'conversations',
                        'ordering': ['created_at'],
                        'indexes': [models.Index(fields=['session', 'created_at'], name='idx_conversations_session'), models.Index(fields=['user_id', 'created_at'], name='idx_conversations_user')],
                    },
                ),
            ],
        ),
        migrations.CreateModel(
            name='MemoryHistory',
            fields=[
                ('id', models.UUIDField(db_default=django.contrib.postgres.functions.RandomUUID(), default=uuid.uuid4, primary_key=True, serialize=False)),
                ('memory_id', models.UUIDField()),
                ('memory_type', models.CharField(max_length=50)),
                ('event', models.CharField(choices=[('ADD', 'Add'), ('UPDATE', 'Update'), ('DELETE', 'Delete'), ('SUPERSEDE', 'Supersede'), ('STAGE_CHANGE', 'Stage Change')], max_length=20)),
                ('old_content', models.TextField(blank=True, null=True)),
                ('new_content', models.TextField(blank=True, null=True)),
                ('old_metadata', models.JSONField(blank=True, null=True)),
                ('new_metadata', models.JSONField(blank=True, null=True)),
                ('actor', models.CharField(db_default='system', default='system', max_length=50)),
                ('created_at', models.DateTimeField(db_default=django.db.models.functions.datetime.Now())),
            ],
            options={
                'verbose_name_plural': 'memory history',
                'db_table': 'memory_history',
                'ordering': ['created_at'],
                'indexes': [models.Index(fields=['memory_id', '-created_at'], name='idx_history_memory')],
                'constraints': [models.CheckConstraint(condition=models.Q(('event__in', ['ADD', 'UPDATE', 'DELETE', 'SUPERSEDE', 'STAGE_CHANGE'])), name='chk_history_event')],
            },
        ),
        migrations.CreateModel(
            name='MemorySource',
            fields=[
                ('pk', models.CompositePrimaryKey('memory_id', 'session_id', blank=True, editable=False, primary_key=True, serialize=False)),
                ('memory_id', models.UUIDField()),
                ('session_id', models.UUIDField()),
                ('conversation_id', models.UUIDField(blank=True, null=True)),
                ('created_at', models.DateTimeField(db_default=django.db.models.functions.datetime.Now())),
            ],
            options={
                'db_table': 'memory_sources',
                'indexes': [models.Index(fields=['session_id'], name='idx_sources_session')],
            },
        ),
    ]
