"""The HNSW indexes hold only `ready` rows.

With the local (hashing) provider the write stores each new memory's vector at once, so the
near-duplicate check can compare it with memories still waiting for the worker, in SQL. A row
inserted into a full HNSW index costs ~1.5 ms of graph maintenance (halfvec(1024), 2 cores),
which would make the write several times slower; so the indexes are partial: a memory enters
the graph when the worker marks it `ready`, off the write path. Vector searches therefore say
`embedding_status = 'ready'` (the planner uses a partial index only when the query implies its
predicate). A partial btree finds the waiting ones. See docs/write-path.md.
"""

from django.db import migrations

# (partition, m, ef_construction): as migration 0001; traits get the more precise graph.
GRAPHS = [("fact", 16, 64), ("episodic", 16, 64), ("trait", 24, 128), ("document", 16, 64)]


def hnsw_indexes_sql(*, ready_only: bool) -> str:
    predicate = " WHERE embedding_status = 'ready'" if ready_only else ""
    return "\n".join(
        f"DROP INDEX IF EXISTS idx_{partition}_embedding;\n"
        f"CREATE INDEX idx_{partition}_embedding ON memories_{partition}"
        f" USING hnsw (embedding halfvec_cosine_ops)"
        f" WITH (m = {m}, ef_construction = {ef_construction}){predicate};"
        for partition, m, ef_construction in GRAPHS
    )


HNSW_INDEXES_SQL = hnsw_indexes_sql(ready_only=True)

# What the graphs do not hold yet, per user and type: the near-duplicate check of a user with
# many memories reads the graph for the ready ones and this for the rest.
PENDING_INDEX_SQL = """
CREATE INDEX IF NOT EXISTS idx_memories_pending ON memories (user_id, memory_type)
    WHERE embedding_status = 'pending';
"""


class Migration(migrations.Migration):
    dependencies = [("memories", "0003_search_document")]

    operations = [
        migrations.RunSQL(HNSW_INDEXES_SQL, hnsw_indexes_sql(ready_only=False)),
        migrations.RunSQL(PENDING_INDEX_SQL, "DROP INDEX IF EXISTS idx_memories_pending;"),
    ]
