"""Admin benchmark: server time of every back-office page at 1,000,000 memories (issue #18).

    make bench-admin                               # 1,000,000 memories (~8 min)
    make bench-admin ARGS="--memories 20000"       # a quick run
    make bench-admin ARGS="--repeat 40 --json /tmp/admin.json"

    # load once into a kept directory, then measure again after a change (no baseline then,
    # but the login page's):
    NEUROMEM_DATA_DIR=/tmp/admin-data .venv/bin/python -m neuromem_site.devstack exec -- \
        .venv/bin/python bench/admin.py
    NEUROMEM_DATA_DIR=/tmp/admin-data .venv/bin/python -m neuromem_site.devstack exec -- \
        .venv/bin/python bench/admin.py --reuse [--only traits]
    # one page's statements, timed, with EXPLAIN (ANALYZE, BUFFERS), on that data:
    NEUROMEM_DATA_DIR=/tmp/admin-data .venv/bin/python -m neuromem_site.devstack exec -- \
        .venv/bin/python bench/admin.py --explain "/admin/memories/memory/?q=coffee"

1. **Data**, written by SQL (`generate_series`, seeded `random()`; the audit trigger off and its
   rows written after, set-based, as a load would): `--memories` rows over one user per 100
   (10,000 users at 1M), skewed (the user of a row is ⌊users · random()³⌋: the biggest has
   ~4.6% of all memories, the smallest a few dozen); facts, episodes, documents and traits
   45/35/12/8%, created over two years in insertion order; 6% superseded (pointing at a later
   memory of their user), 1.5% deleted, 1% invalidated; scores spread over 0–100 (two uniforms
   averaged); embeddings ready, ~2% pending (most of them the newest) and 0.4% failed (no
   vectors stored: the admin never reads them); traits with subtypes, stages (trend 10%,
   candidate 5, emerging 35, established 30, core 10, dissolved 10), confidences, contexts,
   some parents; content from a pool of word bags with Zipf-distributed words (`coffee` in
   ~20%), 15% Chinese, a rare word (`xylophone`) in one memory in 20,011, and the pool's 512-
   bucket lexical vector (1 KB a row). Around them: an ADD history row per memory (and a
   SUPERSEDE / DELETE row per expired one), links (~25% of memories to earlier ones of their
   user), one session per 10 memories with 3 messages each (100,000 sessions and 300,000
   messages at 1M) and the memories they were the source of, 3 evidence rows per trait,
   reflection cycles and job runs (one per 50 memories), consistency issues (one per 2,000).
   Then the decay view's refresh and beat's per-user indexes, VACUUM (ANALYZE), CHECKPOINT.
2. **Pages**, with Django's test client logged in as a superuser, in-process (request to
   response: middleware, session, queries, template rendering): each page once to warm up,
   then `--repeat` times; p50 and p95. Then each page once more with every SQL statement
   logged (`connection.execute_wrapper`), and every SELECT of it run again under
   `EXPLAIN (ANALYZE, FORMAT JSON)`: a Seq Scan on a `memories` partition (or on any table of
   more than 10,000 rows) and a COUNT that reads more than a tenth of `memories` are reported.
   The plans of the slowest statement of the pages over the target are printed.
3. **Baselines**, same run: the same pages on the same generator's data at 10,000 memories
   (measured first, then the tables are emptied and the full dataset loaded), and the
   admin's login page (anonymous), the floor of any admin request.

Runs on the embedded services in a throw-away directory (or DATABASE_URL / REDIS_URL) and
prints Markdown for docs/benchmarks.md; --json writes the numbers too.
"""

import argparse
import json
import os
import random
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import bootstrap  # noqa: F401

# isort: split
from common import machine, machine_summary, memories_insert, memories_size, sql
from django.conf import settings
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction
from django.test import Client
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.utils.http import urlencode

from memories.embeddings import lexical_provider
from memories.user_indexes import user_indexes_refresh
from memories.vectors import halfvecs, vector_cursor
from reflection.services.maintenance import trait_view_refresh

TARGET_MS = 300.0
BASELINE_MEMORIES = 10_000
MEMORIES_PER_USER = 100
POOL = 1_000  # texts per memory type
PARTITIONS = ("memories_fact", "memories_episodic", "memories_trait", "memories_document")
# Tables the data fills (emptied between the baseline and the full dataset).
TABLES = (
    "memories",
    "memory_history",
    "memory_links",
    "memory_sources",
    "trait_evidence",
    "reflection_cycles",
    "job_runs",
    "consistency_issues",
    "conversations",
    "conversation_sessions",
)
BIG_TABLE_ROWS = 10_000  # a Seq Scan on a table bigger than this is reported
COMMON_WORD, RARE_WORD, CHINESE_WORD = "coffee", "xylophone", "咖啡"

# English words by rank (Zipf): COMMON_WORD, at rank 10, ends up in ~20% of the memories.
ENGLISH = """
morning work meeting friend home week dinner time day coffee project team weekend call
family lunch plan trip book music walk city train office email sister brother mother father
phone car park garden dog cat school class exam doctor dentist report deadline budget client
manager colleague review launch release bug test deploy server laptop editor tea running
guitar piano berlin lisbon kyoto paris london tokyo birthday holiday recipe novel podcast
chess yoga swim hike camera lens paint museum concert jazz flat lease battery monday friday
bike river lake mountain beach forest bakery market pharmacy library cinema theatre stadium
airport hotel ticket passport visa language spanish french german japanese lesson course
teacher student homework essay thesis research paper conference talk slides workshop
hackathon startup invoice salary bonus promotion interview resume contract insurance
mortgage rent loan savings investment stock pension tax receipt refund warranty repair
plumber electrician neighbour landlord roommate wedding anniversary funeral baby daughter
son grandmother grandfather uncle aunt cousin nephew niece vegetarian vegan allergy gluten
peanut sushi ramen pizza pasta salad soup steak chicken noodles dumplings curry tacos burger
sandwich bread cheese wine beer juice smoothie chocolate cake cookies breakfast brunch
snack diet gym marathon cycling tennis football basketball climbing skiing surfing sailing
fishing camping gardening knitting pottery photography painting drawing writing reading
"""
CHINESE = """
工作 周末 朋友 咖啡 北京 上海 学习 音乐 电影 晚饭 早上 会议 项目 老板 同事 家人 妈妈 爸爸
跑步 游泳 旅行 飞机 火车 医生 考试 学校 孩子 生日 礼物 喜欢 讨厌 每天 经常 有时 昨天 明天
晚上 中午 米饭 面条 水果 茶叶 公园 图书馆 超市 手机 电脑 报告 预算 客户 截止 发布 测试
"""
WORDS, CHINESE_WORDS = ENGLISH.split(), CHINESE.split()
CONTEXTS = ("work", "personal", "social", "learning", "general", "contextual")
JOBS = (
    "score-memories",
    "reflection-triggers",
    "refresh-trait-decay-view",
    "expire-trends",
    "dissolve-weak-traits",
    "consistency-check",
    "refresh-user-indexes",
)
CHECKS = (
    "evidence_trait",
    "evidence_memory",
    "history_memory",
    "source_memory",
    "source_session",
    "superseded_by",
    "trait_parent",
    "link_source",
    "link_target",
)


# --- Data ------------------------------------------------------------------------------------


def zipf_words(rng: random.Random, vocabulary: list[str], count: int) -> list[str]:
    weights = [1 / (rank + 1) ** 1.1 for rank in range(len(vocabulary))]
    return rng.choices(vocabulary, weights, k=count)


def pool_text(rng: random.Random, kind: str) -> str:
    chinese = rng.random() < 0.15
    length = {"document": rng.randint(60, 120)}.get(kind, rng.randint(6, 16))
    if chinese:
        text = "".join(zipf_words(rng, CHINESE_WORDS, max(4, length // 2)))
    else:
        text = " ".join(zipf_words(rng, WORDS, length)).capitalize() + "."
    if kind == "episodic":
        return f"User: {text}"
    if kind == "trait":
        return f"反复提到：{text}" if chinese else f"Repeatedly: {text}"
    return text


def sql_all(statement: str, params: Any = None) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchall()


# One row per memory: its user (skewed), type, time, the random draws the columns take, and
# its user's previous and next memories (for links, versions, evidence and trait parents).
ROWS_SQL = """
CREATE UNLOGGED TABLE bench_rows AS
SELECT g.*,
       lag(n) OVER w AS prev1, lag(n, 2) OVER w AS prev2, lag(n, 3) OVER w AS prev3,
       lead(n) OVER w AS next1,
       lag(n) OVER (PARTITION BY u, kind ORDER BY n) AS prev_same
FROM (
    SELECT n, floor(%(users)s * random() ^ 3)::int AS u,
           CASE WHEN n %% 100 < 45 THEN 'fact' WHEN n %% 100 < 80 THEN 'episodic'
                WHEN n %% 100 < 92 THEN 'document' ELSE 'trait' END AS kind,
           %(now)s - interval '730 days' * (1 - (n + random()) / %(count)s) AS created_at,
           random() AS r1, random() AS r2, random() AS r3, random() AS r4,
           random() AS r5, random() AS r6, random() AS r7, random() AS r8
    FROM generate_series(0, %(count)s - 1) AS n
) g
WINDOW w AS (PARTITION BY u ORDER BY n)
"""

MEMORIES_SQL = """
INSERT INTO memories (
    id, user_id, memory_type, content, content_hash, lexical_vector, created_at, updated_at,
    valid_at, invalid_at, expired_at, superseded_by, version, importance, score, access_count,
    last_accessed_at, embedding_status, metadata, reflected_at, trait_subtype, trait_stage,
    trait_confidence, trait_context, trait_parent_id, trait_reinforcement_count,
    trait_contradiction_count, trait_last_reinforced, trait_first_observed, trait_window_start,
    trait_window_end, trait_derived_from)
SELECT md5('m' || b.n)::uuid, 'user-' || b.u, b.kind, c.content, md5(c.content), p.vector,
       b.created_at, b.ended, CASE WHEN b.kind IN ('fact', 'episodic') THEN b.created_at END,
       CASE WHEN b.fate = 'invalidated' THEN b.ended END, b.ended,
       CASE WHEN b.fate = 'superseded' THEN md5('m' || b.next1)::uuid END,
       CASE WHEN b.ended IS NULL THEN 1 ELSE 2 END, round((0.2 + 0.7 * b.r8)::numeric, 2),
       ((b.r3 + b.r4) * 50)::real,
       CASE WHEN b.r7 < 0.3 THEN 1 + floor(b.r8 * 30)::int ELSE 0 END,
       CASE WHEN b.r7 < 0.3 THEN b.created_at + (%(now)s - b.created_at) * b.r4 END,
       CASE WHEN b.n >= %(count)s * 0.985 AND b.r5 < 0.9 THEN 'pending'
            WHEN b.r5 < 0.004 THEN 'failed' WHEN b.r5 < 0.01 THEN 'pending' ELSE 'ready' END,
       CASE WHEN b.r7 < 0.3 THEN jsonb_build_object('source', 'chat', 'turn', b.n %% 40)
            ELSE '{}'::jsonb END,
       CASE WHEN b.kind IN ('fact', 'episodic') AND b.n < %(count)s * 0.97
            THEN b.created_at + interval '1 hour' END,
       t.subtype, t.stage,
       CASE t.stage WHEN 'candidate' THEN 0.2 WHEN 'emerging' THEN 0.4
                    WHEN 'established' THEN 0.6 WHEN 'core' THEN 0.8 WHEN 'dissolved' THEN 0.1
       END + 0.2 * b.r8,
       t.context,
       CASE WHEN t.subtype <> 'core' AND b.prev_same IS NOT NULL AND b.r8 < 0.3
            THEN md5('m' || b.prev_same)::uuid END,
       CASE WHEN t.stage IS NOT NULL THEN floor(b.r8 * b.r8 * 20)::int END,
       CASE WHEN t.stage IS NOT NULL THEN (ARRAY[0, 0, 0, 1, 2])[1 + (b.n / 100) %% 5] END,
       CASE WHEN t.stage IS NOT NULL THEN b.created_at + (%(now)s - b.created_at) * b.r2 END,
       CASE WHEN t.stage IS NOT NULL THEN b.created_at END,
       CASE WHEN t.stage = 'trend' THEN b.created_at END,
       CASE WHEN t.stage = 'trend' THEN b.created_at + interval '30 days' END,
       CASE WHEN t.stage IS NULL THEN NULL WHEN b.r2 < 0.1 THEN 'trend_promotion'
            ELSE 'reflection' END
FROM (
    SELECT r.*,
           CASE WHEN r.r1 < 0.06 AND r.next1 IS NOT NULL THEN 'superseded'
                WHEN r.r1 < 0.075 THEN 'deleted' WHEN r.r1 < 0.085 THEN 'invalidated' END
               AS fate,
           CASE WHEN r.r1 < 0.085 THEN r.created_at + (%(now)s - r.created_at) * r.r2 END
               AS ended
    FROM bench_rows r WHERE r.n >= %(start)s AND r.n < %(stop)s
) b
JOIN bench_pool p ON p.kind = b.kind AND p.j = b.n %% %(pool)s
CROSS JOIN LATERAL (
    SELECT p.content || CASE WHEN b.n %% 20011 = 7 THEN ' %(rare)s' ELSE '' END AS content
) c
LEFT JOIN LATERAL (
    SELECT CASE WHEN (b.n / 100) %% 25 < 15 THEN 'behavior'
                WHEN (b.n / 100) %% 25 < 22 THEN 'preference' ELSE 'core' END AS subtype,
           CASE WHEN b.r6 < 0.10 THEN 'trend' WHEN b.r6 < 0.15 THEN 'candidate'
                WHEN b.r6 < 0.50 THEN 'emerging' WHEN b.r6 < 0.80 THEN 'established'
                WHEN b.r6 < 0.90 THEN 'core' ELSE 'dissolved' END AS stage,
           (ARRAY%(contexts)s)[1 + (b.n / 100) %% 6] AS context
    WHERE b.kind = 'trait'
) t ON true
"""

HISTORY_SQL = """
INSERT INTO memory_history (memory_id, memory_type, event, new_content, new_metadata, actor,
                            created_at)
SELECT id, memory_type, 'ADD', content, metadata, 'bench', created_at FROM memories
UNION ALL
SELECT id, memory_type, CASE WHEN superseded_by IS NULL THEN 'DELETE' ELSE 'SUPERSEDE' END,
       content, metadata, 'bench', expired_at
FROM memories WHERE expired_at IS NOT NULL
"""

LINKS_SQL = """
INSERT INTO memory_links (user_id, source_id, target_id, weight, created_at)
SELECT 'user-' || u, md5('m' || n)::uuid, md5('m' || target)::uuid, r8, created_at
FROM bench_rows
CROSS JOIN LATERAL (
    SELECT prev1 AS target WHERE (n::bigint * 7919) %% 100 < 20
    UNION ALL SELECT prev2 WHERE (n::bigint * 7919) %% 100 < 5
) t
WHERE target IS NOT NULL
ON CONFLICT DO NOTHING
"""

SESSIONS_SQL = """
INSERT INTO conversation_sessions (id, user_id, started_at, ended_at, last_reflected_at, metadata)
SELECT md5('s' || n)::uuid, 'user-' || u, created_at - interval '10 minutes',
       CASE WHEN r2 < 0.95 THEN created_at + interval '10 minutes' END,
       CASE WHEN r2 < 0.95 AND r3 < 0.9 THEN created_at + interval '1 hour' END,
       '{}'::jsonb
FROM bench_rows WHERE n %% 10 = 3
"""

MESSAGES_SQL = """
INSERT INTO conversations (id, session_id, user_id, role, content, extraction_status, created_at)
SELECT md5('c' || b.n || '-' || k)::uuid, md5('s' || b.n)::uuid, 'user-' || b.u,
       CASE WHEN k = 1 THEN 'assistant' ELSE 'user' END,
       substr(p.content, 7),
       CASE WHEN k = 1 THEN 'skipped' WHEN b.r4 < 0.02 THEN 'pending'
            WHEN b.r4 < 0.03 THEN 'failed' WHEN b.r4 < 0.2 THEN 'skipped' ELSE 'done' END,
       b.created_at - interval '10 minutes' + k * interval '1 minute'
FROM bench_rows b
CROSS JOIN generate_series(0, 2) AS k
JOIN bench_pool p ON p.kind = 'episodic' AND p.j = (b.n + k) %% %(pool)s
WHERE b.n %% 10 = 3
"""

# The session's memory (its first message), and the user's next memory (its last) for half.
SOURCES_SQL = """
INSERT INTO memory_sources (memory_id, session_id, conversation_id, created_at)
SELECT md5('m' || n)::uuid, md5('s' || n)::uuid, md5('c' || n || '-0')::uuid, created_at
FROM bench_rows WHERE n %% 10 = 3
UNION ALL
SELECT md5('m' || next1)::uuid, md5('s' || n)::uuid, md5('c' || n || '-2')::uuid, created_at
FROM bench_rows WHERE n %% 10 = 3 AND next1 IS NOT NULL AND r5 < 0.5
ON CONFLICT DO NOTHING
"""

EVIDENCE_SQL = """
INSERT INTO trait_evidence (trait_id, memory_id, evidence_type, quality, created_at)
SELECT md5('m' || n)::uuid, md5('m' || e.memory)::uuid,
       CASE WHEN (n + e.k) %% 7 = 0 THEN 'contradicting' ELSE 'supporting' END,
       (ARRAY['A', 'B', 'C', 'D'])[1 + (n + e.k) %% 4], created_at
FROM bench_rows
CROSS JOIN LATERAL (VALUES (1, prev1), (2, prev2), (3, prev3)) AS e(k, memory)
WHERE kind = 'trait' AND e.memory IS NOT NULL
"""

CYCLES_SQL = """
INSERT INTO reflection_cycles (id, user_id, trigger_type, trigger_value, memories_scanned,
                               traits_created, traits_updated, traits_dissolved, started_at,
                               completed_at, status, error_message, requested_by)
SELECT md5('r' || c)::uuid, 'user-' || floor(%(users)s * random() ^ 3)::int,
       (ARRAY['importance_accumulated', 'scheduled', 'session_end', 'idle', 'manual'])
           [1 + c %% 5],
       CASE WHEN c %% 5 = 0 THEN 150 END, floor(random() * 500)::int,
       floor(random() * 5)::int, floor(random() * 10)::int, floor(random() * 2)::int,
       s.started, CASE WHEN s.status IN ('completed', 'failed', 'skipped')
                       THEN s.started + interval '5 seconds' END,
       s.status, CASE WHEN s.status = 'failed' THEN 'LLM call timed out after 60 s' END,
       'system'
FROM generate_series(0, %(cycles)s - 1) AS c
CROSS JOIN LATERAL (
    SELECT %(now)s - interval '730 days' * (1 - (c + 0.5) / %(cycles)s) AS started,
           CASE WHEN c %% 100 < 90 THEN 'completed' WHEN c %% 100 < 93 THEN 'failed'
                WHEN c %% 100 < 98 THEN 'skipped'
                WHEN c %% 100 < 99 THEN 'running' ELSE 'queued' END AS status
) s
"""

JOB_RUNS_SQL = """
INSERT INTO job_runs (job, status, started_at, finished_at, rows, detail, error)
SELECT (ARRAY%(jobs)s)[1 + c %% %(job_count)s], s.status, s.started,
       s.started + interval '1 second' * (1 + random() * 30),
       CASE WHEN s.status = 'done' THEN floor(random() * 10000)::int END, '{}'::jsonb,
       CASE WHEN s.status = 'failed' THEN 'OperationalError: server closed the connection'
            ELSE '' END
FROM generate_series(0, %(runs)s - 1) AS c
CROSS JOIN LATERAL (
    SELECT %(now)s - interval '30 days' * (1 - (c + 0.5) / %(runs)s) AS started,
           CASE WHEN c %% 100 < 95 THEN 'done' WHEN c %% 100 < 98 THEN 'skipped'
                ELSE 'failed' END AS status
) s
"""

ISSUES_SQL = """
INSERT INTO consistency_issues (check_name, table_name, row_id, missing_id, user_id,
                                first_seen_at, last_seen_at, resolved_at)
SELECT (ARRAY%(checks)s)[1 + c %% 9], 'trait_evidence', md5('i' || c)::uuid::text,
       md5('x' || c)::uuid::text, 'user-' || (c %% %(users)s),
       %(now)s - interval '1 day' * (c %% 90), %(now)s - interval '1 day' * (c %% 7),
       CASE WHEN c %% 5 < 3 THEN %(now)s - interval '1 day' * (c %% 7) END
FROM generate_series(0, %(issues)s - 1) AS c
"""


def step(label: str, started: float) -> None:
    print(f"  {label}: {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)


def load(count: int, now) -> dict[str, Any]:
    """The dataset (module docstring), in a database whose data tables are empty."""
    started = time.perf_counter()
    users = max(10, count // MEMORIES_PER_USER)
    rng = random.Random(18)
    kinds = ("fact", "episodic", "document", "trait")
    pool = [(kind, j, pool_text(rng, kind)) for kind in kinds for j in range(POOL)]
    texts = [text for _, _, text in pool]
    with vector_cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS bench_pool")
        cursor.execute(
            "CREATE UNLOGGED TABLE bench_pool"
            " (kind text, j int, content text, vector halfvec, PRIMARY KEY (kind, j))"
        )
        cursor.execute(
            "INSERT INTO bench_pool SELECT * FROM"
            " unnest(%s::text[], %s::int[], %s::text[], %b::halfvec[])",
            [
                [kind for kind, _, _ in pool],
                [j for _, j, _ in pool],
                texts,
                halfvecs(list(lexical_provider().embed(texts))),
            ],
            binary=True,
        )
    sql("DROP TABLE IF EXISTS bench_rows")
    sql("SELECT setseed(0.18)")
    params = {"users": users, "count": count, "now": now, "pool": POOL}
    sql(ROWS_SQL, params)
    sql("CREATE INDEX ON bench_rows (n)")
    sql("ANALYZE bench_rows")
    step("plan of the rows", started)
    statement = MEMORIES_SQL.replace("%(rare)s", RARE_WORD).replace(
        "ARRAY%(contexts)s", "ARRAY[" + ", ".join(f"'{c}'" for c in CONTEXTS) + "]"
    )
    for written in memories_insert(statement, params, count):
        step(f"{written:,} memories", started)
    counts = {"memories": count, "users": users}
    counts["history"] = sql(HISTORY_SQL)
    step("history", started)
    counts["links"] = sql(LINKS_SQL)
    counts["sessions"] = sql(SESSIONS_SQL)
    counts["messages"] = sql(MESSAGES_SQL, {"pool": POOL})
    counts["sources"] = sql(SOURCES_SQL)
    counts["evidence"] = sql(EVIDENCE_SQL)
    step("links, sessions, messages, sources, evidence", started)
    array = "ARRAY[{}]".format
    counts["cycles"] = sql(CYCLES_SQL, {**params, "cycles": max(20, count // 50)})
    counts["job_runs"] = sql(
        JOB_RUNS_SQL.replace("ARRAY%(jobs)s", array(", ".join(f"'{j}'" for j in JOBS))),
        {**params, "runs": max(20, count // 50), "job_count": len(JOBS)},
    )
    counts["issues"] = sql(
        ISSUES_SQL.replace("ARRAY%(checks)s", array(", ".join(f"'{c}'" for c in CHECKS))),
        {**params, "issues": max(10, count // 2000)},
    )
    sql("DROP TABLE bench_rows")
    sql("DROP TABLE bench_pool")
    counts["traits_in_view"] = trait_view_refresh()
    step("cycles, job runs, issues, decay view", started)
    changes = user_indexes_refresh()  # beat's, within the hour in production
    counts["user_indexes"] = len(getattr(changes, "built", []) or [])
    step("per-user indexes", started)
    for table in TABLES:
        sql(f"VACUUM (ANALYZE) {table}")
    sql("VACUUM (ANALYZE) mv_trait_decayed")
    sql("CHECKPOINT")
    step("VACUUM (ANALYZE), CHECKPOINT", started)
    counts["size"] = memories_size()
    counts["load_seconds"] = time.perf_counter() - started
    return counts


def tables_empty() -> None:
    sql(f"TRUNCATE {', '.join(TABLES)}")
    trait_view_refresh()


# --- Pages -----------------------------------------------------------------------------------


@dataclass
class Page:
    group: str
    label: str
    url: str
    kind: str = "list"  # a list (a filter, a search, a page of it), or "page": one object's
    anonymous: bool = False


def url(name: str, *args, **query: str) -> str:
    base = reverse(name, args=args)
    return f"{base}?{urlencode(query)}" if query else base


@dataclass
class ModelPages:
    """The pages of one admin model (`app_model`), added to `pages` in the order asked: its list
    (filtered, searched or paged) and an object's page."""

    group: str
    app_model: str
    pages: list[Page]
    # Every list is measured unfiltered first and, given a page number, that deep (an
    # offset's cost).
    deep_page: str | None = None
    default_label: str = "list, default"

    def __post_init__(self) -> None:
        self.list_page(self.default_label)
        if self.deep_page is not None:
            self.list_page(f"page {self.deep_page}", p=self.deep_page)

    def list_page(self, label: str, **query: str) -> None:
        address = url(f"admin:{self.app_model}_changelist", **query)
        self.pages.append(Page(self.group, label, address))

    def object_page(self, label: str, object_id: Any) -> None:
        address = url(f"admin:{self.app_model}_change", object_id)
        self.pages.append(Page(self.group, label, address, "page"))


def one(statement: str, params: Any = None) -> Any:
    row = sql(statement, params)
    return row[0] if row else None


def pages_of(now) -> list[Page]:
    """Every page the brief names, with ids picked from the data (the same picks on the
    baseline's data and the full one)."""
    big = one("SELECT user_id FROM memories GROUP BY user_id ORDER BY count(*) DESC LIMIT 1")
    small = one("SELECT user_id FROM memories GROUP BY user_id ORDER BY count(*), user_id LIMIT 1")
    # A fact of the big user that links out, has a source and is cited by a trait.
    memory = one(
        """SELECT m.id FROM memories m
           JOIN memory_links l ON l.source_id = m.id
           JOIN memory_sources s ON s.memory_id = m.id
           WHERE m.user_id = %s AND m.memory_type = 'fact'
             AND EXISTS (SELECT FROM trait_evidence e WHERE e.memory_id = m.id)
           LIMIT 1""",
        [big],
    ) or one("SELECT id FROM memories WHERE user_id = %s LIMIT 1", [big])
    superseded = one(
        "SELECT id FROM memories WHERE user_id = %s AND superseded_by IS NOT NULL LIMIT 1", [big]
    )
    trait = one(
        """SELECT m.id FROM memories m WHERE m.memory_type = 'trait' AND m.user_id = %s
             AND EXISTS (SELECT FROM trait_evidence e WHERE e.trait_id = m.id) LIMIT 1""",
        [big],
    )
    session = one("SELECT id FROM conversation_sessions WHERE user_id = %s LIMIT 1", [big])
    message = one("SELECT id FROM conversations WHERE session_id = %s LIMIT 1", [session])
    evidence = one("SELECT id FROM trait_evidence WHERE trait_id = %s LIMIT 1", [trait])
    cycle = one("SELECT id FROM reflection_cycles ORDER BY started_at DESC LIMIT 1")
    run = one("SELECT id FROM job_runs ORDER BY started_at DESC LIMIT 1")
    issue = one("SELECT id FROM consistency_issues LIMIT 1")
    a_year_ago = (now - timedelta(days=365)).date()
    month = {
        "created_from": a_year_ago.isoformat(),
        "created_to": (a_year_ago + timedelta(days=30)).isoformat(),
    }
    prefix = big.rstrip("0123456789") + "1"  # "user-1": user-1, user-10…, user-100…

    p: list[Page] = []

    def add(group: str, label: str, address: str, kind: str = "list") -> None:
        p.append(Page(group, label, address, kind))

    memories = ModelPages(
        "memories", "memories_memory", p, default_label="list, default (newest first)"
    )
    memories.list_page("page 2", p="2")
    memories.list_page("page 100 (offset 4,950)", p="100")
    memories.list_page("filter user (the biggest)", user_id=big)
    memories.list_page("filter user (the smallest)", user_id=small)
    for kind in ("fact", "episodic", "document", "trait"):
        memories.list_page(f"filter type {kind}", memory_type__exact=kind)
    for value in ("current", "expired", "invalidated"):
        memories.list_page(f"filter {value}", current=value)
    for state in ("active", "cold", "deprecated", "deleted"):
        memories.list_page(f"filter state {state}", state=state)
    for stage in ("trend", "candidate", "emerging", "established", "core", "dissolved"):
        memories.list_page(f"filter trait stage {stage}", trait_stage=stage)
    for status in ("pending", "failed", "ready"):
        memories.list_page(f"filter embedding {status}", embedding_status__exact=status)
    memories.list_page("filter created, a 30-day range", **month)
    memories.list_page(
        "filter user (biggest) + type fact + current",
        user_id=big,
        memory_type__exact="fact",
        current="current",
    )
    memories.list_page(f"search a common word ({COMMON_WORD})", q=COMMON_WORD)
    memories.list_page(f"search a rare word ({RARE_WORD})", q=RARE_WORD)
    memories.list_page(f"search a Chinese word ({CHINESE_WORD})", q=CHINESE_WORD)
    memories.list_page("search two words (coffee garden)", q="coffee garden")
    memories.list_page("search a user id (the biggest)", q=big)
    memories.list_page("search user_id:<the smallest>", q=f"user_id:{small}")
    memories.list_page("search a memory id", q=str(memory))
    memories.list_page(
        "search a common word, type fact, page 2", q=COMMON_WORD, memory_type__exact="fact", p="2"
    )
    memories.object_page("memory page (links, sources, evidence)", memory)
    if superseded:
        memories.object_page("memory page (superseded version)", superseded)

    traits = ModelPages("traits", "reflection_trait", p, deep_page="20")
    for subtype in ("behavior", "preference", "core"):
        traits.list_page(f"filter subtype {subtype}", trait_subtype__exact=subtype)
    for stage in ("trend", "candidate", "emerging", "established", "core", "dissolved"):
        traits.list_page(f"filter stage {stage}", trait_stage__exact=stage)
    traits.list_page("filter context work", trait_context__exact="work")
    traits.list_page(
        "filter derived from trend promotion", trait_derived_from__exact="trend_promotion"
    )
    traits.list_page("filter current", current="yes")
    traits.list_page("filter not current", current="no")
    traits.list_page(f"search a word ({COMMON_WORD})", q=COMMON_WORD)
    traits.list_page(f"search a Chinese word ({CHINESE_WORD})", q=CHINESE_WORD)
    traits.list_page("search a user id (the biggest)", q=big)
    traits.list_page("search user_id:<prefix>*", q=f"user_id:{prefix}*")
    traits.object_page("trait page", trait)

    evidence_list = ModelPages("evidence", "reflection_traitevidence", p, deep_page="100")
    evidence_list.list_page("filter contradicting", evidence_type__exact="contradicting")
    evidence_list.list_page("filter quality A", quality__exact="A")
    evidence_list.list_page("search a trait id", q=str(trait))
    evidence_list.list_page("search a memory id", q=str(memory))
    evidence_list.object_page("evidence page", evidence)

    cycles = ModelPages("cycles", "reflection_reflectioncycle", p, deep_page="20")
    cycles.list_page("filter failed", status__exact="failed")
    cycles.list_page("filter trigger manual", trigger_type__exact="manual")
    cycles.list_page("search a user id (the biggest)", q=big)
    cycles.object_page("cycle page", cycle)

    issues = ModelPages("consistency", "reflection_consistencyissue", p)
    issues.list_page("filter open", state="open")
    issues.list_page("filter check evidence_memory", check_name__exact="evidence_memory")
    issues.list_page("search a user id", q="user-1")
    issues.object_page("issue page", issue)

    runs = ModelPages("job runs", "core_jobrun", p, deep_page="20")
    runs.list_page("filter job score-memories", job="score-memories")
    runs.list_page("filter failed", status__exact="failed")
    runs.object_page("job run page", run)

    sessions = ModelPages("sessions", "memories_conversationsession", p, deep_page="100")
    sessions.list_page("filter user (the biggest)", user_id=big)
    sessions.list_page("filter open", ended="no")
    sessions.list_page("search a user id", q=big)
    sessions.list_page("search a session id", q=str(session))
    sessions.object_page("session page", session)

    messages = ModelPages("messages", "memories_conversationmessage", p, deep_page="100")
    messages.list_page("filter user (the biggest)", user_id=big)
    messages.list_page("filter session", session_id=str(session))
    for status in ("pending", "failed", "done"):
        messages.list_page(f"filter extraction {status}", extraction_status=status)
    messages.list_page("search a user id", q=big)
    messages.list_page("search a message id", q=str(message))
    messages.object_page("message page", message)

    users = "admin:backoffice_end_users"
    add("end users", "search exact (the biggest)", url(users, q=big))
    add("end users", f"search prefix ({prefix})", url(users, q=prefix))
    add("end users", "search prefix (user-)", url(users, q="user-"))
    add("end users", "end-user page (the biggest)", url("admin:backoffice_end_user", big), "page")
    add(
        "end users", "end-user page (the smallest)", url("admin:backoffice_end_user", small), "page"
    )

    add("dashboard", "/admin/ (dashboard)", url("admin:index"), "page")

    # Every other registered list, default page.
    covered = {page.url.split("?")[0] for page in p}
    for model in admin.site._registry:
        name = f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist"
        try:
            address = reverse(name)
        except NoReverseMatch:
            continue
        if address not in covered:
            add("other lists", f"{model._meta.verbose_name_plural}", address)
    p.append(Page("baseline", "login page (anonymous)", url("admin:login"), "page", True))
    return p


class QueryLog:
    """Every statement a page runs, with its parameters and time."""

    def __init__(self) -> None:
        self.queries: list[tuple[str, Any, float]] = []

    def __call__(self, execute, statement, params, many, context):
        started = time.perf_counter()
        try:
            return execute(statement, params, many, context)
        finally:
            self.queries.append((statement, params, time.perf_counter() - started))


def plan_nodes(node: dict):
    yield node
    for child in node.get("Plans", []):
        yield from plan_nodes(child)


def relation_sizes() -> dict[str, float]:
    return {
        name: rows
        for name, rows in sql_all(
            "SELECT relname, reltuples FROM pg_class WHERE relkind IN ('r', 'm')"
            " AND relnamespace = 'public'::regnamespace"
        )
    }


@dataclass
class Findings:
    queries: int = 0
    sql_ms: float = 0.0
    slowest_ms: float = 0.0
    slowest: str = ""
    seq_memories: list[str] = field(default_factory=list)
    seq_other: list[str] = field(default_factory=list)
    full_counts: list[str] = field(default_factory=list)
    memories_rows_read: int = 0


def explain(statement: str, params: Any, *, analyze: bool = True, text: bool = False) -> Any:
    options = ("ANALYZE, " if analyze else "") + ("FORMAT TEXT" if text else "FORMAT JSON")
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN ({options}) {statement}", params)
        rows = cursor.fetchall()
    if text:
        return "\n".join(row[0] for row in rows)
    plan = rows[0][0]
    return json.loads(plan) if isinstance(plan, str) else plan


def findings_of(queries: list[tuple[str, Any, float]], sizes: dict[str, float]) -> Findings:
    memories_total = sum(sizes.get(name, 0) for name in PARTITIONS) or 1
    found = Findings(queries=len(queries), sql_ms=sum(q[2] for q in queries) * 1000)
    if queries:
        statement, _, seconds = max(queries, key=lambda q: q[2])
        found.slowest_ms, found.slowest = seconds * 1000, statement
    for statement, params, _ in queries:
        head = statement.lstrip()[:10].upper()
        if not head.startswith(("SELECT", "WITH")):
            continue
        try:
            plan = explain(statement, params)[0]["Plan"]
        except DatabaseError as error:
            print(f"  EXPLAIN failed: {error}", file=sys.stderr)
            continue
        read = 0
        for node in plan_nodes(plan):
            relation = node.get("Relation Name", "")
            loops = node.get("Actual Loops", 1)
            if relation in PARTITIONS:
                read += int(
                    (node.get("Actual Rows", 0) + node.get("Rows Removed by Filter", 0)) * loops
                )
            if node.get("Node Type") == "Seq Scan":
                if relation in PARTITIONS:
                    found.seq_memories.append(relation)
                elif sizes.get(relation, 0) > BIG_TABLE_ROWS:
                    found.seq_other.append(relation)
        found.memories_rows_read = max(found.memories_rows_read, read)
        if "COUNT(" in statement.upper() and read > memories_total / 10:
            found.full_counts.append(f"{read:,} rows ({read / memories_total:.0%})")
    return found


@dataclass
class Result:
    group: str
    label: str
    url: str
    kind: str
    status: int
    p50_ms: float
    p95_ms: float
    max_ms: float
    findings: Findings
    baseline_p50_ms: float | None = None


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    return statistics.quantiles(ordered, n=100, method="inclusive")[round(q * 100) - 1]


def measure(pages: list[Page], repeat: int, *, analyse: bool = True) -> list[Result]:
    user = get_user_model().objects.get(username="bench-admin")
    staff, anonymous = Client(), Client()
    staff.force_login(user)
    sizes = relation_sizes()
    results = []
    for page in pages:
        client = anonymous if page.anonymous else staff
        response = client.get(page.url)  # warm
        times = []
        for _ in range(repeat):
            started = time.perf_counter()
            response = client.get(page.url)
            times.append((time.perf_counter() - started) * 1000)
        findings = Findings()
        if analyse:
            log = QueryLog()
            with connection.execute_wrapper(log):
                client.get(page.url)
            findings = findings_of(log.queries, sizes)
        result = Result(
            page.group,
            page.label,
            page.url,
            page.kind,
            response.status_code,
            quantile(times, 0.5),
            quantile(times, 0.95),
            max(times),
            findings,
        )
        flags = " ".join(
            f"{name}={value}"
            for name, value in (
                ("seq", findings.seq_memories),
                ("count", findings.full_counts),
            )
            if value
        )
        print(
            f"  {page.group}: {page.label}: {result.status} p50 {result.p50_ms:.1f} "
            f"p95 {result.p95_ms:.1f} ms, {findings.queries} queries {findings.sql_ms:.1f} ms "
            f"{flags}",
            file=sys.stderr,
            flush=True,
        )
        results.append(result)
    return results


def superuser() -> None:
    model = get_user_model()
    if not model.objects.filter(username="bench-admin").exists():
        model.objects.create_superuser("bench-admin", "bench@example.com", "bench")


# --- Report ----------------------------------------------------------------------------------


def report(results: list[Result], login_ms: float, memories: int) -> str:
    lines = [
        f"| page ({memories:,} memories) | p50 ms | p95 ms | p50 at {BASELINE_MEMORIES:,} "
        "| × 10k | × login | ≤ 300 ms (p95) | SQL: queries / ms | seq scan or full count |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        f = r.findings
        notes = []
        if f.seq_memories:
            notes.append("Seq Scan " + ", ".join(sorted(set(f.seq_memories))))
        if f.seq_other:
            notes.append("Seq Scan " + ", ".join(sorted(set(f.seq_other))))
        notes.extend(f"COUNT reading {count}" for count in f.full_counts)
        base = r.baseline_p50_ms
        status = "" if r.status == 200 else f" (HTTP {r.status})"
        lines.append(
            f"| {r.group}: {r.label}{status} | {r.p50_ms:.1f} | {r.p95_ms:.1f} "
            f"| {'' if base is None else f'{base:.1f}'} "
            f"| {'' if base is None else f'{r.p50_ms / base:.1f}'} "
            f"| {r.p50_ms / login_ms:.1f} | {'yes' if r.p95_ms <= TARGET_MS else '**no**'} "
            f"| {f.queries} / {f.sql_ms:.1f} | {'; '.join(notes) or '–'} |"
        )
    return "\n".join(lines)


def slow_plans(results: list[Result], log_pages: list[Page]) -> str:
    """EXPLAIN ANALYZE of the slowest statement of every page over the target."""
    out = []
    user = get_user_model().objects.get(username="bench-admin")
    client = Client()
    client.force_login(user)
    for r in results:
        if r.p95_ms <= TARGET_MS:
            continue
        log = QueryLog()
        with connection.execute_wrapper(log):
            client.get(r.url)
        selects = [q for q in log.queries if q[0].lstrip()[:6].upper() in ("SELECT", "WITH R")]
        if not selects:
            continue
        statement, params, seconds = max(selects, key=lambda q: q[2])
        out.append(
            f"-- {r.group}: {r.label} ({r.url}): slowest statement {seconds * 1000:.1f} ms\n"
            f"-- {statement[:400]}\n{explain(statement, params, text=True)}\n"
        )
    return "\n".join(out)


def page_explained(address: str) -> str:
    client = Client()
    client.force_login(get_user_model().objects.get(username="bench-admin"))
    client.get(address)  # warm
    log = QueryLog()
    started = time.perf_counter()
    with connection.execute_wrapper(log):
        status = client.get(address).status_code
    out = [f"{address}: HTTP {status} in {(time.perf_counter() - started) * 1000:.1f} ms"]
    for statement, params, seconds in log.queries:
        out.append(f"\n-- {seconds * 1000:.1f} ms: {statement}\n-- params: {params}")
        if statement.lstrip()[:10].upper().startswith(("SELECT", "WITH")):
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {statement}", params)
                out.extend(row[0] for row in cursor.fetchall())
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=20, help="timed requests a page")
    parser.add_argument(
        "--reuse", action="store_true", help="measure the data a previous run left (no baseline)"
    )
    parser.add_argument("--only", help="only the pages whose group or label contains this")
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    parser.add_argument(
        "--explain",
        metavar="URL",
        help="on the data a previous run left: every statement of this admin page, timed, with"
        " EXPLAIN (ANALYZE, BUFFERS) of its SELECTs",
    )
    args = parser.parse_args()
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    call_command("migrate", verbosity=0)
    superuser()
    now = timezone.now()
    if args.explain:
        print(page_explained(args.explain))
        return

    def selected(pages: list[Page]) -> list[Page]:
        if not args.only:
            return pages
        return [p for p in pages if args.only in p.group or args.only in p.label or p.anonymous]

    baseline: dict[str, float] = {}
    base_data: dict[str, Any] = {}
    if not args.reuse:
        tables_empty()
        base_data = load(min(BASELINE_MEMORIES, args.memories), now)
        print(f"  baseline loaded in {base_data['load_seconds']:.0f} s", file=sys.stderr)
        for r in measure(selected(pages_of(now)), args.repeat, analyse=False):
            if r.status == 200:  # a page number past the end answers a redirect
                baseline[f"{r.group}: {r.label}"] = r.p50_ms
        tables_empty()
        data = load(args.memories, now)
    else:
        (count,) = sql(
            "SELECT sum(reltuples)::bigint FROM pg_class WHERE oid IN"
            " (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'memories'::regclass)"
        )
        data = {"memories": count, "load_seconds": 0.0, "size": "?"}
    print(f"  loaded in {data['load_seconds']:.0f} s", file=sys.stderr, flush=True)
    pages = selected(pages_of(now))
    results = measure(pages, args.repeat)
    for r in results:
        r.baseline_p50_ms = baseline.get(f"{r.group}: {r.label}")
    login = next(r for r in results if r.group == "baseline")
    about = {**machine(), "load_average": os.getloadavg()}
    print(report(results, login.p50_ms, data["memories"]))
    lists = [r for r in results if r.kind == "list"]
    missed = [r for r in results if r.p95_ms > TARGET_MS]
    print(
        f"\n{len(results) - 1} pages, {len(lists)} of them lists, filters or searches; "
        f"{len(results) - 1 - len(missed)} within {TARGET_MS:.0f} ms at p95; over it: "
        + (", ".join(f"{r.group}: {r.label}" for r in missed) or "none")
        + "."
    )
    print(
        f"\nData: {json.dumps({k: v for k, v in data.items() if k != 'load_seconds'})}; "
        f"loaded in {data['load_seconds']:.0f} s. Baseline data: "
        f"{json.dumps({k: v for k, v in base_data.items() if k != 'load_seconds'})}."
    )
    print(
        f"{machine_summary(about)}; load average at the end "
        f"{', '.join(f'{x:.1f}' for x in about['load_average'])}. {args.repeat} timed requests "
        "a page after one to warm up."
    )
    plans = slow_plans(results, pages)
    if plans:
        print("\nPlans of the slowest statement of each page over the target:\n")
        print(plans)
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "machine": about,
                    "data": data,
                    "baseline_data": base_data,
                    "results": [asdict(r) for r in results],
                },
                indent=2,
                default=str,
            )
        )


if __name__ == "__main__":
    main()
