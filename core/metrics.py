"""NeuroMem's Prometheus series (docs/operations.md, "Metrics"): what the web workers, the
Celery pool and beat count or time, each process into the shared multiprocess directory
(PROMETHEUS_MULTIPROC_DIR, set by the settings) that `/metrics` sums. What is read off the
database at scrape time (the embedding backlog, the jobs' last runs) is collected by the
`/metrics` view itself (neuromem_site/metrics.py).

Labels stay few and bounded: a route's pattern, never its path; a job's name; an outcome.

Only counters and histograms: they sum across processes, and a process's files stay valid
after it exits (no live gauges to clean up). Each process's files are named by its host name
and pid, not its pid alone: containers sharing the directory (docker-compose.yml) each number
their processes from 1.
"""

import os
import socket

from prometheus_client import Counter, Histogram, values

values.ValueClass = values.MultiProcessValue(
    process_identifier=lambda: f"{socket.gethostname()}_{os.getpid()}"
)

# Seconds: from a cached recall (a few ms) to a slow write burst.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)

HTTP_REQUESTS = Counter(
    "neuromem_http_requests",
    "HTTP requests answered, by route pattern, method and status.",
    ["route", "method", "status"],
)
HTTP_DURATION = Histogram(
    "neuromem_http_request_duration_seconds",
    "Time from the request reaching Django to its answer, by route pattern and method.",
    ["route", "method"],
    buckets=LATENCY_BUCKETS,
)
DB_QUERY_DURATION = Histogram(
    "neuromem_db_query_duration_seconds",
    "Time of each SQL statement a request ran, by route pattern.",
    ["route"],
    buckets=LATENCY_BUCKETS,
)
REDIS_DURATION = Histogram(
    "neuromem_redis_command_duration_seconds",
    "Time of the app's Redis calls (cache, rate limits, access counts), by operation.",
    ["operation"],
    buckets=LATENCY_BUCKETS,
)
THROTTLED = Counter("neuromem_throttled_requests", "Requests refused for the rate limit.")
EMBEDDINGS = Counter(
    "neuromem_embeddings", "Memories whose embedding the worker stored or gave up on.", ["outcome"]
)
RECALL_STAGE_DURATION = Histogram(
    "neuromem_recall_stage_duration_seconds",
    "Time of each stage of a recall: query_embedding (cache or model), search (the candidates "
    "of both sides and their fusion: one SQL statement), question_rules.",
    ["stage"],
    buckets=LATENCY_BUCKETS,
)
JOB_RUNS = Counter(
    "neuromem_job_runs", "Scheduled jobs' runs, by job and status.", ["job", "status"]
)
JOB_DURATION = Histogram(
    "neuromem_job_duration_seconds",
    "Scheduled jobs' run time, by job.",
    ["job"],
    buckets=(0.01, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600),
)
REFLECTION_CYCLES = Counter(
    "neuromem_reflection_cycles", "Reflection cycles finished, by status.", ["status"]
)
SOUL_PROPOSALS = Counter(
    "neuromem_soul_proposals",
    "SOUL proposals by outcome (applied, proposed, rejected).",
    ["outcome"],
)
LAGGING_READS = Counter(
    "neuromem_lagging_reads",
    "Reads that may lag (recall, search, listing, export), by the database that answered "
    "(replica, primary).",
    ["database"],
)
