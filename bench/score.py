"""Activity score benchmark: the score job (`memories_score`) over 1,000,000 memories.

    make bench-score                                   # 1,000,000 memories
    make bench-score ARGS="--memories 50000 --json /tmp/score.json"

1. **Data**, written by SQL (`generate_series`, seeded `random()`), without the audit log's ADD
   rows (as a load would): `--memories` rows over one user per 1,000, facts, episodes and
   documents 2:1:1, created over the past two years in the order they are inserted (as the
   service appends them, so a user's recent memories share recent pages), 30% accessed (1–50
   times, the last between creation and now), 10% reached by bulk reads (1–10 times), 3%
   expired; links within each user (~40% of the memories link out, targets skewed so some
   have many incoming);
   content and lexical vector from a pool of 1,000 word-bag texts per user slot, one in five a
   restatement of another of its type (merge candidates). Embeddings are left `pending`,
   so no HNSW index is maintained (see docs/benchmarks.md for what that leaves out). Then
   VACUUM (ANALYZE) and CHECKPOINT.
2. **Runs**, as beat's job runs them (`SCORE_BATCH_SIZE`): a first run at `now` (every score
   moves off 50), a second run at the same `now` (idle: nothing to write), a run 15 minutes
   later (a regular beat run), the idle run again with a merge window of 1 (what the
   merge-candidate lookup costs), and the baselines, same keyset batches over the same rows:
   reading the columns the job reads, and `UPDATE … SET score = score` (every row rewritten).

Peak Python memory of the first run by tracemalloc, and the process's ru_maxrss. Runs on the
embedded services in a throw-away directory (or DATABASE_URL / REDIS_URL) and prints Markdown
for docs/benchmarks.md; --json writes the numbers too.
"""

import argparse
import json
import random
import resource
import sys
import time
import tracemalloc
from datetime import timedelta
from pathlib import Path
from typing import Any

import bootstrap  # noqa: F401

# isort: split
from common import machine, machine_summary, memories_insert, memories_size, sql
from django.conf import settings
from django.core.management import call_command
from django.db import transaction
from django.utils import timezone

from memories.embeddings import lexical_provider
from memories.predicates import current_sql
from memories.scoring import ScoreRun, memories_score, score_rules
from memories.vectors import halfvecs, vector_cursor

PER_USER = 1_000
WORDS = [
    "coffee",
    "tea",
    "running",
    "guitar",
    "piano",
    "Berlin",
    "Lisbon",
    "Kyoto",
    "dog",
    "cat",
    "sister",
    "brother",
    "meeting",
    "deadline",
    "project",
    "budget",
    "review",
    "garden",
    "bike",
    "train",
    "holiday",
    "birthday",
    "dinner",
    "lunch",
    "recipe",
    "novel",
    "podcast",
    "chess",
    "yoga",
    "swim",
    "hike",
    "camera",
    "lens",
    "paint",
    "museum",
    "concert",
    "jazz",
    "school",
    "exam",
    "doctor",
    "dentist",
    "flat",
    "lease",
    "car",
    "battery",
    "weekend",
    "morning",
    "evening",
    "Monday",
    "Friday",
    "colleague",
    "manager",
    "client",
    "report",
    "launch",
    "release",
    "bug",
    "test",
    "deploy",
    "server",
    "laptop",
    "phone",
    "editor",
]

MEMORIES_SQL = """
INSERT INTO memories (id, user_id, memory_type, content, content_hash, lexical_vector,
                      created_at, access_count, last_accessed_at, traverse_count,
                      last_linked_at, expired_at, embedding_status, metadata, version,
                      importance, score)
SELECT md5('bench' || g.n)::uuid, 'user-' || g.u,
       (ARRAY['fact', 'fact', 'episodic', 'document'])[1 + g.j %% 4],
       p.content, md5(p.content), p.vector,
       g.created_at,
       CASE WHEN g.accessed THEN 1 + floor(random() ^ 3 * 50)::int ELSE 0 END,
       CASE WHEN g.accessed THEN g.created_at + random() * (%(now)s - g.created_at) END,
       CASE WHEN g.traversed THEN 1 + floor(random() * 10)::int ELSE 0 END,
       CASE WHEN g.traversed THEN g.created_at + random() * (%(now)s - g.created_at) END,
       CASE WHEN g.j %% 33 = 32 THEN %(now)s END,
       'pending', '{}'::jsonb, 1, 0.5, 50
FROM (
    SELECT n, n %% %(users)s AS u, n / %(users)s AS j,
           %(now)s - interval '730 days' * (1 - (n + random()) / %(count)s) AS created_at,
           random() < 0.3 AS accessed, random() < 0.1 AS traversed
    FROM generate_series(%(start)s, %(stop)s - 1) AS n
) g
JOIN bench_pool p ON p.j = g.j %% %(pool)s
"""
# Within each user: 25% of memories link to a skewed target (j² + 1), 15% to the next one.
LINKS_SQL = """
INSERT INTO memory_links (user_id, source_id, target_id, weight, created_at)
SELECT 'user-' || s.u, md5('bench' || s.n)::uuid,
       md5('bench' || (t.j * %(users)s + s.u))::uuid, 0.5, %(now)s
FROM (SELECT n, n %% %(users)s AS u, n / %(users)s AS j
      FROM generate_series(0, %(count)s - 1) AS n) s
CROSS JOIN LATERAL (
    SELECT (s.j * s.j + 1) %% %(per_user)s AS j WHERE s.j %% 4 = 0
    UNION ALL SELECT (s.j + 1) %% %(per_user)s WHERE s.j %% 20 IN (1, 2, 3)
) t
WHERE t.j <> s.j AND t.j * %(users)s + s.u < %(count)s
ON CONFLICT DO NOTHING
"""


def pool_texts(rng: random.Random) -> list[str]:
    """One text per slot j of a user; slot j with j % 20 in 4..7 restates slot j − 4 (same
    memory type: the type follows j % 4) with one more word."""
    texts: list[str] = []
    for j in range(PER_USER):
        if j % 20 in (4, 5, 6, 7):
            texts.append(f"{texts[j - 4]} {rng.choice(WORDS)}")
        else:
            texts.append(" ".join(rng.sample(WORDS, 7)))
    return texts


def load(count: int, rng: random.Random, now) -> dict[str, Any]:
    started = time.perf_counter()
    users = max(1, count // PER_USER)
    texts = pool_texts(rng)
    with vector_cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS bench_pool")
        cursor.execute("CREATE TABLE bench_pool (j int PRIMARY KEY, content text, vector halfvec)")
        cursor.execute(
            "INSERT INTO bench_pool SELECT * FROM unnest(%s::int[], %s::text[], %b::halfvec[])",
            [list(range(len(texts))), texts, halfvecs(list(lexical_provider().embed(texts)))],
            binary=True,
        )
    sql("SELECT setseed(0.42)")
    params = {"count": count, "users": users, "pool": len(texts), "now": now}
    for written in memories_insert(MEMORIES_SQL, params, count):
        print(f"  {written:,} memories", file=sys.stderr, flush=True)
    links = sql(LINKS_SQL, {"users": users, "count": count, "per_user": PER_USER, "now": now})
    sql("DROP TABLE bench_pool")
    sql("VACUUM (ANALYZE) memories")
    sql("VACUUM (ANALYZE) memory_links")
    sql("CHECKPOINT")
    (current,) = sql(f"SELECT count(*) FROM memories m WHERE {current_sql('m')}")
    return {
        "memories": count,
        "current": current,
        "users": users,
        "links": links,
        "load_seconds": time.perf_counter() - started,
        "size": memories_size(),
    }


def keyset(statement: str, batch: int) -> dict[str, Any]:
    """A keyset pass over the current memories by id, `statement` per batch (it answers the
    batch's row count and last id)."""
    started = time.perf_counter()
    after, rows, batches = None, 0, 0
    while True:
        with transaction.atomic():
            count, last = sql(
                statement.format(after="AND m.id > %(after)s" if after else ""),
                {"after": after, "limit": batch},
            )
        if not count:
            break
        rows, batches, after = rows + count, batches + 1, last
        if count < batch:
            break
    return {"rows": rows, "batches": batches, "seconds": time.perf_counter() - started}


READ_SQL = f"""
SELECT count(*), (array_agg(id ORDER BY id DESC))[1] FROM (
    SELECT m.id, m.memory_type, m.user_id, m.lexical_vector, m.access_count, m.traverse_count,
           m.last_accessed_at, m.last_linked_at, m.created_at, m.score,
           m.eligible_for_delete, m.merge_candidate_of
    FROM memories m WHERE {current_sql("m")} {{after}} ORDER BY m.id LIMIT %(limit)s
) b
"""
REWRITE_SQL = f"""
WITH b AS MATERIALIZED (
    SELECT m.id, m.memory_type FROM memories m WHERE {current_sql("m")} {{after}}
    ORDER BY m.id LIMIT %(limit)s
), u AS (
    UPDATE memories m SET score = m.score FROM b
    WHERE m.id = b.id AND m.memory_type = b.memory_type RETURNING 1
)
SELECT (SELECT count(*) FROM u), (SELECT id FROM b ORDER BY id DESC LIMIT 1)
"""


def hot_updates() -> tuple[int, int]:
    """Updates and HOT updates of the memories partitions so far (statistics flushed first)."""
    sql("SELECT pg_stat_force_next_flush()")
    time.sleep(1.1)
    return sql(
        "SELECT sum(n_tup_upd)::bigint, sum(n_tup_hot_upd)::bigint FROM pg_stat_user_tables"
        " WHERE relid IN (SELECT inhrelid FROM pg_inherits"
        " WHERE inhparent = 'memories'::regclass)"
    )


def job(label: str, now, *, traced: bool = False) -> dict[str, Any]:
    updates_before, hot_before = hot_updates()
    if traced:
        tracemalloc.start()
    run: ScoreRun = memories_score(now=now)
    peak = tracemalloc.get_traced_memory()[1] if traced else None
    if traced:
        tracemalloc.stop()
    updates, hot = hot_updates()
    result = {
        "label": label,
        **run.detail(),
        "per_minute": run.scored / run.seconds * 60,
        "hot_share": (hot - hot_before) / (updates - updates_before)
        if updates > updates_before
        else None,
        "python_peak_mib": peak / 2**20 if peak is not None else None,
    }
    print(
        f"  {label}: {run.scored:,} scored, {run.changed:,} changed in {run.seconds:.1f} s",
        file=sys.stderr,
        flush=True,
    )
    return result


def report(data: dict[str, Any], runs: list[dict], read: dict, rewrite: dict) -> str:
    def row(label: str, scored: int, changed: Any, seconds: float, extra: str = "") -> str:
        return (
            f"| {label} | {scored:,} | {changed} | {seconds:.1f} | {scored / seconds * 60:,.0f} "
            f"| {seconds / read['seconds']:.2f} | {seconds / rewrite['seconds']:.2f} | {extra} |"
        )

    lines = [
        f"| {data['current']:,} current memories | scored | changed | s | per minute "
        "| × read pass | × rewrite pass | |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        hot = f"HOT {r['hot_share']:.0%}" if r["hot_share"] is not None else ""
        flagged = f"eligible {r['eligible_for_delete']:,}, merge {r['merge_candidates']:,}"
        lines.append(
            row(
                f"`memories_score`: {r['label']}",
                r["scored"],
                f"{r['changed']:,}",
                r["seconds"],
                f"{flagged}; {hot}".strip("; "),
            )
        )
    lines.append(
        row("**baseline**: keyset read of the same columns", read["rows"], "–", read["seconds"])
    )
    lines.append(
        row(
            "**baseline**: keyset `UPDATE … SET score = score`",
            rewrite["rows"],
            f"{rewrite['rows']:,}",
            rewrite["seconds"],
        )
    )
    first = runs[0]
    return "\n".join(lines) + (
        f"\n\nData: {data['memories']:,} memories ({data['current']:,} current) over "
        f"{data['users']:,} users, {data['links']:,} links; loaded, vacuumed and checkpointed in "
        f"{data['load_seconds']:.0f} s; partitions with indexes {data['size']}. Batches of "
        f"{settings.SCORE_BATCH_SIZE:,} ({first['batches']} a run). Peak Python memory of the "
        f"first run (tracemalloc): {first['python_peak_mib']:.2f} MiB; process ru_maxrss "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB.\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=1_000_000)
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    now = timezone.now()
    data = load(args.memories, random.Random(7), now)
    print(f"  loaded in {data['load_seconds']:.0f} s", file=sys.stderr, flush=True)
    batch = settings.SCORE_BATCH_SIZE
    read = keyset(READ_SQL, batch)
    print(f"  read pass {read['seconds']:.1f} s", file=sys.stderr, flush=True)
    runs = [
        job("first run (every score moves off 50)", now, traced=True),
        job("second run, same `now` (idle)", now),
        job("regular run, 15 minutes later", now + timedelta(minutes=15)),
        job("idle again, 15 minutes later", now + timedelta(minutes=15)),
    ]
    settings.SCORE_RULES = {"merge_window": 1}
    score_rules.cache_clear()
    job("merge window 1 (rewrites merge flags)", now + timedelta(minutes=15))
    runs.append(job("idle, merge window 1 (lookup cost)", now + timedelta(minutes=15)))
    rewrite = keyset(REWRITE_SQL, batch)
    print(f"  rewrite pass {rewrite['seconds']:.1f} s", file=sys.stderr, flush=True)
    about = machine()
    print(report(data, runs, read, rewrite))
    print(f"{machine_summary(about)}.")
    if args.json:
        args.json.write_text(
            json.dumps(
                {"machine": about, "data": data, "runs": runs, "read": read, "rewrite": rewrite},
                indent=2,
                default=str,
            )
        )


if __name__ == "__main__":
    main()
