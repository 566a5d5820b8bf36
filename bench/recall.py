"""Recall benchmark: quality of the vector side and latency of recall (issue #5).

    make bench-recall                              # 100,000 memories + a heavy user of 20,000
    make bench-recall ARGS="--count 1000000"       # the 1M run
    make bench-recall ARGS="--count 10000 --heavy 2000 --queries 50"   # a quick run

    # load once into a kept directory, then measure again after a change:
    NEUROMEM_DATA_DIR=/tmp/recall-data .venv/bin/python -m neuromem_site.devstack exec -- \
        .venv/bin/python bench/recall.py
    NEUROMEM_DATA_DIR=/tmp/recall-data .venv/bin/python -m neuromem_site.devstack exec -- \
        .venv/bin/python bench/recall.py --reuse

Builds the dataset with the configured embeddings (default `use`): `--count` memories over
`--users` users (facts, episodic memories and documents, Latin and CJK), plus one heavy user with
`--heavy` memories. The rows are loaded with COPY with the HNSW and GIN indexes dropped, and the
indexes are then built as migration 0001/0003 define them (the build time is reported). Then:

- recall@10 of the vector side (the fact branch of the recall query: HNSW with an iterative
  scan and the user filter) against exact search (same filter, sequential distance sort), for
  typical users and for the heavy user;
- p50/p95 of `POST /api/v1/recall/` end to end over HTTP (gunicorn, warm), and of the same
  recall through the service without HTTP; the mean time of each of recall's stages in the web
  workers (their `/metrics`);
- what looking up the common names of a question naming someone costs recall before it
  embeds the query (memories/common_names.py), counted and from Redis.

Runs on the embedded services in a throw-away directory (or DATABASE_URL / REDIS_URL) and
prints Markdown for docs/benchmarks.md, with the EXPLAIN plans of one typical and one heavy
recall.
"""

import argparse
import gc
import importlib
import os
import platform
import random
import re
import statistics
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

# Before Django, as this benchmark always had it: neuromem_site sets one BLAS thread a process
# before NumPy loads; this process keeps OpenBLAS's thread per core.
import numpy as np

# isort: split
import bootstrap  # noqa: F401

# isort: split
import httpx
from common import api_over_http, memories_copy, percentile
from django.conf import settings
from django.core.management import call_command
from django.db import connection, transaction
from django.utils import timezone
from pgvector import HalfVector

from core.access import SYSTEM
from core.redis_client import app_redis
from memories.common_names import common_names_forget, meaning_query
from memories.embeddings import embedding_provider
from memories.recall import (
    RecallQuery,
    memories_recall,
    query_cache_key,
    query_vector,
    recall_plan,
)
from memories.recall_statement import vector_branch_sql, visible_sql
from memories.services import content_md5
from memories.user_indexes import user_indexes_refresh
from memories.vectors import iterative_hnsw_scan, vector_cursor
from neuromem_site.api.services import api_client_create

storage_v2 = importlib.import_module("memories.migrations.0001_storage_v2")
search_document = importlib.import_module("memories.migrations.0003_search_document")
hnsw_ready_only = importlib.import_module("memories.migrations.0004_hnsw_ready_only")

LATIN_WORDS = """
tea coffee morning evening dog cat garden bicycle guitar piano violin novel poetry museum
mountain river lake ocean beach forest city village train flight hotel passport visa
doctor nurse teacher engineer lawyer chef painter runner swimmer climber marathon yoga
pasta sushi curry noodles bread cheese chocolate wine beer juice salad soup pizza taco
monday tuesday weekend holiday birthday wedding meeting deadline project budget report
brother sister mother father friend colleague neighbour manager client partner daughter
son berlin paris tokyo lisbon oslo austin boston seattle madrid rome vienna prague dublin
allergy peanut gluten lactose vegetarian vegan spicy sweet sour bitter salty fresh
""".split()  # noqa: SIM905
CJK_WORDS = """
咖啡 茶叶 早上 晚上 小狗 小猫 花园 自行车 吉他 钢琴 小说 诗歌 博物馆 山顶
河边 湖泊 海滩 森林 城市 乡村 火车 航班 酒店 护照 医生 护士 老师 工程师 律师
厨师 画家 跑步 游泳 爬山 马拉松 瑜伽 面条 寿司 咖喱 面包 奶酪 巧克力 红酒
啤酒 果汁 沙拉 汤 披萨 周末 假期 生日 婚礼 会议 截止日期 项目 预算 报告 哥哥
姐姐 妈妈 爸爸 朋友 同事 邻居 经理 客户 女儿 儿子 北京 上海 成都 杭州 深圳
广州 西安 南京 过敏 花生 素食 辣 甜 酸 苦 新鲜
""".split()  # noqa: SIM905
MEMORY_TYPES = ["fact", "fact", "episodic", "document"]
COPY_BATCH = 10_000
COPY_COLUMNS = {
    "id": "uuid",
    "user_id": "varchar",
    "memory_type": "varchar",
    "content": "text",
    "embedding": "halfvec",
    "embedding_status": "varchar",
    "content_hash": "varchar",
    "created_at": "timestamptz",
    "valid_at": "timestamptz",
    "importance": "float4",
}


def sentence(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return " ".join(rng.choices(LATIN_WORDS, k=rng.randint(5, 12)))
    return "".join(rng.choices(CJK_WORDS, k=rng.randint(4, 9)))


def load(users: list[tuple[str, int]], rng: random.Random) -> int:
    """COPY the users' memories (with ready embeddings) into `memories`."""
    provider = embedding_provider()
    rows = [(user_id, n) for user_id, count in users for n in range(count)]
    written = 0
    for start in range(0, len(rows), COPY_BATCH):
        chunk = rows[start : start + COPY_BATCH]
        texts = [f"{sentence(rng)} {n}" for _, n in chunk]
        vectors = provider.embed(texts)
        now = timezone.now()
        with memories_copy(COPY_COLUMNS) as copy:
            for (user_id, _), text, vector in zip(chunk, texts, vectors, strict=True):
                copy.write_row(
                    [
                        uuid.uuid4(),
                        user_id,
                        rng.choice(MEMORY_TYPES),
                        text,
                        HalfVector(np.asarray(vector, dtype=np.float32)),
                        "ready",
                        content_md5(text),
                        now,
                        now,
                        round(rng.random(), 2),
                    ]
                )
        written += len(chunk)
        print(f"  loaded {written:,}/{len(rows):,}", file=sys.stderr, flush=True)
    return written


SEARCH_INDEXES = (
    "idx_fact_embedding",
    "idx_episodic_embedding",
    "idx_trait_embedding",
    "idx_document_embedding",
    "idx_memories_search",
)


def dataset_arguments(parser: argparse.ArgumentParser) -> None:
    """The dataset `dataset_loaded` builds: `--count` memories over `--users` users (user-N),
    and a heavy user (`heavy`) of `--heavy`; or, with `--reuse`, finds."""
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=1_000)
    parser.add_argument("--heavy", type=int, default=20_000)
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="measure the dataset a previous run left in the database (a kept NEUROMEM_DATA_DIR)",
    )


def dataset_loaded(args: argparse.Namespace, rng: random.Random) -> tuple[int, float, float]:
    """(memories in the database, seconds loading them, seconds building the indexes)."""
    if args.reuse:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM memories")
            (written,) = cursor.fetchone()
        return written, 0.0, 0.0
    per_user = args.count // args.users
    users = [(f"user-{n}", per_user) for n in range(args.users)] + [("heavy", args.heavy)]
    drop_search_indexes()
    started = time.perf_counter()
    load(users, rng)
    load_seconds = time.perf_counter() - started
    index_seconds = build_search_indexes()
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memories")
        (written,) = cursor.fetchone()
    return written, load_seconds, index_seconds


def drop_search_indexes() -> None:
    with connection.cursor() as cursor:
        for name in SEARCH_INDEXES:
            cursor.execute(f"DROP INDEX IF EXISTS {name}")


def build_search_indexes() -> float:
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '4GB'")
        cursor.execute("SET max_parallel_maintenance_workers = 2")
        cursor.execute(hnsw_ready_only.HNSW_INDEXES_SQL)
        cursor.execute(storage_v2.MEMORIES_INDEXES_SQL)  # the rest (IF NOT EXISTS)
        cursor.execute(search_document.COLUMN_SQL)
        # What autovacuum and the checkpointer would do soon after a load this size (~1 GB of
        # WAL): done now, not in the middle of the measurements.
        cursor.execute("VACUUM (ANALYZE) memories")
        cursor.execute("CHECKPOINT")
    return time.perf_counter() - started


def query_for(user_id: str, rng: random.Random) -> str:
    """A question made of some words of one of the user's facts, the fact chosen by `rng`: the
    same queries in every run over the same data, so that two runs compare."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM memories WHERE user_id = %s AND memory_type = 'fact'", [user_id]
        )
        (facts,) = cursor.fetchone()
        cursor.execute(
            "SELECT content FROM memories WHERE user_id = %s AND memory_type = 'fact' "
            "ORDER BY id OFFSET %s LIMIT 1",
            [user_id, rng.randrange(facts)],
        )
        (content,) = cursor.fetchone()
    text = content.rsplit(" ", 1)[0]  # without the row number
    if " " not in text:  # CJK: a stretch from the middle of the sentence
        start = rng.randrange(max(1, len(text) - 4))
        return text[start : start + rng.randint(4, 8)]
    words = text.split()
    return " ".join(rng.sample(words, k=max(1, len(words) // 2)))


def branch_rows(sql: str, params: dict) -> list[tuple]:
    """A vector branch, run as recall runs it: with the iterative scan set."""
    with transaction.atomic(), vector_cursor() as cursor:
        iterative_hnsw_scan(cursor)
        cursor.execute(sql, params, prepare=False)
        return cursor.fetchall()


def vector_recall_at_10(user_id: str, query: str) -> float:
    """The fact branch as recall runs it (RECALL_BRANCH_LIMIT candidates, ranked by distance),
    its top 10 against the exact top 10 (same filter, no index: a distance sort)."""
    params = {
        "user_id": user_id,
        "vector": HalfVector(query_vector(query)),
        "branch_limit": settings.RECALL_BRANCH_LIMIT,
    }
    approximate_sql = vector_branch_sql("fact", visible_sql(None))
    ranked = sorted(branch_rows(approximate_sql, params), key=lambda row: row[2])
    approximate = {row[0] for row in ranked[:10]}
    exact_sql = approximate_sql.replace(
        "ORDER BY m.embedding <=> %(vector)b", "ORDER BY (m.embedding <=> %(vector)b) + 0"
    )
    exact = {row[0] for row in branch_rows(exact_sql, {**params, "branch_limit": 10})}
    return len(approximate & exact) / len(exact) if exact else 1.0


def latencies_service(queries: list[tuple[str, str]]) -> list[float]:
    timings = []
    for user_id, query in queries:
        started = time.perf_counter()
        memories_recall(caller=SYSTEM, request=RecallQuery(user_id=user_id, query=query))
        timings.append((time.perf_counter() - started) * 1000)
    return timings


def forget_query_vectors(queries: list[tuple[str, str]]) -> None:
    """Empty recall's query cache for these queries: each is embedded inside its request."""
    model_id = embedding_provider().model_id
    app_redis().delete(*{query_cache_key(model_id, query) for _, query in queries})


def latencies_query_embedding(queries: list[tuple[str, str]]) -> list[float]:
    provider = embedding_provider()
    timings = []
    for _, query in queries:
        started = time.perf_counter()
        provider.embed_query(query)
        timings.append((time.perf_counter() - started) * 1000)
    return timings


def latencies_common_names(queries: list[tuple[str, str]], *, cached: bool) -> list[float]:
    """meaning_query on each query asked as a question naming someone (the benchmark's own
    queries hold no capital); `cached`: its verdicts already in Redis."""
    timings = []
    for user_id, query in queries:
        question = f"What did Anna say about {query} in Paris?"
        if cached:
            meaning_query(user_id=user_id, query=question)
        else:
            common_names_forget(user_id=user_id)
        started = time.perf_counter()
        meaning_query(user_id=user_id, query=question)
        timings.append((time.perf_counter() - started) * 1000)
    return timings


STAGE_SERIES = re.compile(
    r'^neuromem_recall_stage_duration_seconds_(sum|count)\{stage="(\w+)"\} (\S+)$', re.M
)


def stage_totals(client: httpx.Client) -> dict[tuple[str, str], float]:
    """The web workers' recall stage series (`/metrics`, summed over the workers)."""
    metrics = client.get(client.base_url.copy_with(path="/metrics"))
    metrics.raise_for_status()
    totals: dict[tuple[str, str], float] = {}
    for kind, stage, value in STAGE_SERIES.findall(metrics.text):
        totals[kind, stage] = totals.get((kind, stage), 0.0) + float(value)
    return totals


def latencies_http(
    queries: list[tuple[str, str]], token: str, *, cached: bool
) -> tuple[list[float], dict[str, float]]:
    """Each recall's time over HTTP, and the mean time of each of its stages in the web
    workers (ms)."""
    with api_over_http(token, timeout=60) as client:
        # Two at a time, so that both sync workers take some (and load their model): one after
        # the other, the same worker may take them all.
        with ThreadPoolExecutor(max_workers=2) as warming:
            warm = [{"user_id": user_id, "query": query} for user_id, query in queries[:20]]
            list(warming.map(lambda body: client.post("/recall/", json=body), warm))
        if not cached:
            forget_query_vectors(queries)
        before = stage_totals(client)
        timings = []
        for user_id, query in queries:
            started = time.perf_counter()
            response = client.post("/recall/", json={"user_id": user_id, "query": query})
            timings.append((time.perf_counter() - started) * 1000)
            response.raise_for_status()
        after = stage_totals(client)
    stages = {
        stage: 1000 * (after["sum", stage] - before.get(("sum", stage), 0.0)) / runs
        for kind, stage in after
        if kind == "sum" and (runs := after["count", stage] - before.get(("count", stage), 0.0))
    }
    return timings, stages


RECALL_STAGES = ("query_embedding", "search", "question_rules")


def summary(label: str, timings: list[float]) -> str:
    return (
        f"| {label} | {len(timings)} | {statistics.median(timings):.1f} "
        f"| {percentile(timings, 0.95):.1f} | {max(timings):.1f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    dataset_arguments(parser)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    rng = random.Random(5)
    call_command("migrate", verbosity=0)
    _, token = api_client_create(name=f"bench-{time.time_ns()}", user_prefixes=[], is_staff=True)

    per_user = args.count // args.users
    written, load_seconds, index_seconds = dataset_loaded(args, rng)
    # What beat's refresh does within the hour: indexes of their own for big users.
    started = time.perf_counter()
    user_indexes = user_indexes_refresh().built
    user_index_seconds = time.perf_counter() - started
    with connection.cursor() as cursor:
        # Those builds dirtied ~100 MB: without this, the checkpointer writes them out during
        # the timings (the 5-10 ms by which fresh runs used to trail re-measured ones).
        cursor.execute("CHECKPOINT")
    print(f"  loaded in {load_seconds:.0f}s, indexes in {index_seconds:.0f}s", file=sys.stderr)

    # The load's garbage is this process's, not a service's: collect it now and keep the
    # collector's full passes over the survivors out of the timings.
    gc.collect()
    gc.freeze()
    typical = [(f"user-{rng.randrange(args.users)}",) for _ in range(args.queries)]
    typical_queries = [(user_id, query_for(user_id, rng)) for (user_id,) in typical]
    heavy_queries = [("heavy", query_for("heavy", rng)) for _ in range(args.queries // 2)]

    typical_recall = statistics.mean(vector_recall_at_10(u, q) for u, q in typical_queries)
    heavy_recall = statistics.mean(vector_recall_at_10(u, q) for u, q in heavy_queries)
    # Warmed as the web workers are: the first calls in a process read cold pages and
    # prepare its statements (up to a second each on a fresh machine).
    latencies_service(typical_queries[:20] + heavy_queries[:10])
    service_typical = latencies_service(typical_queries)
    service_heavy = latencies_service(heavy_queries)
    embedding = latencies_query_embedding(typical_queries)
    names_typical = latencies_common_names(typical_queries, cached=False)
    names_heavy = latencies_common_names(heavy_queries, cached=False)
    names_cached = latencies_common_names(typical_queries + heavy_queries, cached=True)
    http_typical_cold, stages_typical_cold = latencies_http(typical_queries, token, cached=False)
    http_typical, stages_typical = latencies_http(typical_queries, token, cached=True)
    http_heavy_cold, stages_heavy_cold = latencies_http(heavy_queries, token, cached=False)
    http_heavy, stages_heavy = latencies_http(heavy_queries, token, cached=True)
    stage_rows = "\n".join(
        f"| {label} | "
        + " | ".join(f"{stages.get(stage, 0.0):.2f}" for stage in RECALL_STAGES)
        + " |"
        for label, stages in (
            ("typical user, query embedded", stages_typical_cold),
            ("typical user, query vector cached", stages_typical),
            ("heavy user, query embedded", stages_heavy_cold),
            ("heavy user, query vector cached", stages_heavy),
        )
    )
    plans = {
        label: recall_plan(request=RecallQuery(user_id=user_id, query=query))
        for label, (user_id, query) in (
            ("typical user", typical_queries[0]),
            ("heavy user", heavy_queries[0]),
        )
    }
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_size_pretty(pg_total_relation_size('memories_fact'))")
        (fact_size,) = cursor.fetchone()

    print(
        f"""
Dataset: {written:,} memories ({args.count:,} over {args.users:,} users, plus one heavy user \
with {args.heavy:,}); load {load_seconds:.0f} s, HNSW + GIN index build {index_seconds:.0f} s; \
fact partition with indexes: {fact_size}. Per-user indexes (memories/user_indexes.py, \
{settings.USER_INDEX_MIN_MEMORIES:,}+ memories of a type): {len(user_indexes)} built in \
{user_index_seconds:.0f} s. ef_search {settings.RECALL_EF_SEARCH}, iterative scan relaxed_order.

| vector side, recall@10 vs exact search | queries | recall@10 |
|---|---|---|
| typical user (~{per_user} memories) | {len(typical_queries)} | {typical_recall:.3f} |
| heavy user ({args.heavy:,} memories) | {len(heavy_queries)} | {heavy_recall:.3f} |

| recall latency (ms) | queries | p50 | p95 | max |
|---|---|---|---|---|
{summary("HTTP `POST /api/v1/recall/`, typical user, query embedded", http_typical_cold)}
{summary("HTTP `POST /api/v1/recall/`, typical user, query vector cached", http_typical)}
{summary("HTTP `POST /api/v1/recall/`, heavy user, query embedded", http_heavy_cold)}
{summary("HTTP `POST /api/v1/recall/`, heavy user, query vector cached", http_heavy)}
{summary("service `memories_recall`, typical user (cached)", service_typical)}
{summary("service `memories_recall`, heavy user (cached)", service_heavy)}
{summary(f"query embedding alone (`{embedding_provider().model_id}`)", embedding)}
{summary("common names looked up (`meaning_query`), typical user", names_typical)}
{summary("common names looked up (`meaning_query`), heavy user", names_heavy)}
{summary("common names' verdicts from Redis (`meaning_query`), both", names_cached)}

Recall's stages in the web workers over HTTP (mean ms, `neuromem_recall_stage_duration_seconds`):

| recall over HTTP | {" | ".join(RECALL_STAGES)} |
|---|{"---:|" * len(RECALL_STAGES)}
{stage_rows}

Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}.
"""
    )
    for label, plan in plans.items():
        print(f"EXPLAIN ANALYZE, {label}:\n\n```\n{plan}\n```\n")


if __name__ == "__main__":
    main()
