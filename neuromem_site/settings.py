"""NeuroMem settings: everything that differs between machines comes from the environment.

See the configuration table in README.md. With no DATABASE_URL / REDIS_URL the embedded
development services in NEUROMEM_DATA_DIR are used (started by `make run` / `make test`).
"""

import os
import sys
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

from neuromem_site import embedded

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
if (BASE_DIR / ".env").is_file():
    environ.Env.read_env(BASE_DIR / ".env")

DEBUG = env.bool("DEBUG", default=False)

SECRET_KEY = env.str("SECRET_KEY", default="")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set. Set it in the environment (make run generates one for the "
            "embedded dev stack), or set DEBUG=true for a throw-away development key."
        )
    SECRET_KEY = "insecure-development-key-only-used-with-DEBUG"

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

DATA_DIR = Path(env.str("NEUROMEM_DATA_DIR", default=str(BASE_DIR / ".data"))).resolve()

# Metrics (docs/operations.md): every process (web workers, the Celery pool, beat) writes its
# series into this directory and /metrics sums them. prometheus_client reads the variable when
# it is first imported, after the settings: set here for every process that loads them.
METRICS_DIR = Path(env.str("PROMETHEUS_MULTIPROC_DIR", default=str(DATA_DIR / "metrics")))
METRICS_DIR.mkdir(parents=True, exist_ok=True)
os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(METRICS_DIR)
# With a token, /metrics asks `Authorization: Bearer <token>`; without, it answers loopback only.
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")

INSTALLED_APPS = [
    "neuromem_site.backoffice.apps.NeuroMemAdminConfig",  # django.contrib.admin, NeuroMem's site
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "pgtrigger",
    "django_celery_beat",
    "core",
    "neuromem_site.api",
    "memories",
    "reflection",
    "evolution",
    "neuromem_site.backoffice",  # last: its post_migrate follows every app's permissions
]

MIDDLEWARE = [
    "neuromem_site.metrics.RequestMiddleware",
    "neuromem_site.api.middleware.ApiErrorEnvelopeMiddleware",
    "neuromem_site.api.middleware.DatabaseUnavailableMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "neuromem_site.urls"
WSGI_APPLICATION = "neuromem_site.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Data stores -----------------------------------------------------------------------------

DATABASE_URL = env.str("DATABASE_URL", default="") or embedded.postgres_url(DATA_DIR)
# The API token's lookup and recall's statements are prepared on each connection
# (core/db/prepared.py). Off behind a pooler in transaction mode that does not keep prepared
# statements (PgBouncer before 1.22, or with max_prepared_statements at 0).
DATABASE_PREPARED_STATEMENTS = env.bool("DATABASE_PREPARED_STATEMENTS", default=True)


def database_settings(url: str, *, connect_timeout: int) -> dict:
    config = env.db_url_config(url)
    # django-environ leaves a Unix-socket directory (`?host=/path`) in OPTIONS; Django's own
    # tools (dbshell) and the tests look for it in HOST.
    if not config["HOST"] and "host" in config.get("OPTIONS", {}):
        config["HOST"] = config["OPTIONS"].pop("host")
    config["CONN_MAX_AGE"] = env.int("DATABASE_CONN_MAX_AGE", default=60)
    # A persistent connection is checked before a request's first query and replaced when it
    # broke (the database restarted or was away): the request after an outage succeeds.
    config["CONN_HEALTH_CHECKS"] = True
    # A database that does not answer fails a new connection after this many seconds.
    config.setdefault("OPTIONS", {})["connect_timeout"] = connect_timeout
    if DATABASE_PREPARED_STATEMENTS:
        # psycopg prepares a statement run this many times, or one it is asked to (on its own
        # cursor, core/db/cursors.py): none reaches the count. Django's own queries bind their
        # values client-side and are never prepared.
        config["OPTIONS"]["prepare_threshold"] = sys.maxsize
    return config


DATABASE_CONNECT_TIMEOUT = env.int("DATABASE_CONNECT_TIMEOUT", default=5)
DATABASES = {"default": database_settings(DATABASE_URL, connect_timeout=DATABASE_CONNECT_TIMEOUT)}
# Read replicas (core/db/replicas.py, docs/scaling.md): recall, search, listing and export read
# from one that answers and is at most REPLICA_READ_AFTER_WRITE_S behind the primary, unless the
# caller wrote within that time. A replica that does not answer within its connect timeout is
# skipped, and its lag is looked at again every REPLICA_CHECK_SECONDS.
DATABASE_REPLICA_URLS = env.list("DATABASE_REPLICA_URLS", default=[])
REPLICA_READ_AFTER_WRITE_S = env.float("REPLICA_READ_AFTER_WRITE_S", default=5.0)
REPLICA_CHECK_SECONDS = env.float("REPLICA_CHECK_SECONDS", default=5.0)
REPLICA_CONNECT_TIMEOUT = env.int("REPLICA_CONNECT_TIMEOUT", default=2)
for number, replica_url in enumerate(DATABASE_REPLICA_URLS):
    DATABASES[f"replica_{number}"] = database_settings(
        replica_url, connect_timeout=REPLICA_CONNECT_TIMEOUT
    ) | {"TEST": {"MIRROR": "default"}}
DATABASE_ROUTERS = ["core.db.replicas.ReplicaRouter"]
# The database away (core/db/outages.py) answers 503 UNAVAILABLE with this Retry-After (seconds).
DATABASE_RETRY_AFTER = env.int("DATABASE_RETRY_AFTER", default=5)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env.str("REDIS_URL", default="") or embedded.redis_url(DATA_DIR)
# Every Redis call (cache, rate limits, access counts, health, task publishing) answers within
# this many seconds or counts as failed, so a hung Redis cannot hold a request (docs/security.md).
REDIS_SOCKET_TIMEOUT = env.float("REDIS_SOCKET_TIMEOUT", default=1.0)

CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "neuromem",
        "OPTIONS": {
            "socket_connect_timeout": REDIS_SOCKET_TIMEOUT,
            "socket_timeout": REDIS_SOCKET_TIMEOUT,
        },
    }
}

# --- Celery ----------------------------------------------------------------------------------

CELERY_BROKER_URL = embedded.celery_redis_url(REDIS_URL)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_IGNORE_RESULT = True
# Tasks are acknowledged after their work; one whose pool process died (SIGKILL, OOM) goes back
# to the queue instead of being acknowledged as failed.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# The longest a task acknowledged late may run (memories/tasks.py), seconds.
TASK_TIME_LIMIT = env.int("TASK_TIME_LIMIT", default=300)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    # Redis hands out again a message left unacknowledged this long: the tasks of a killed
    # worker come back. Twice the longest time limit, so a task still running is not doubled.
    "visibility_timeout": 2 * TASK_TIME_LIMIT,
    # Workers look for such messages every 10 s (kombu's default scans every 100 s).
    "unacked_restore_interval": 10,
    "unacked_restore_throttle": 1,
    # A publish or control call to a hung Redis fails after this instead of waiting forever.
    "socket_timeout": REDIS_SOCKET_TIMEOUT,
    "socket_connect_timeout": REDIS_SOCKET_TIMEOUT,
}
# One attempt: a failed publish leaves its memories pending for the requeue job below instead
# of holding the request (redis-py reconnects a stale pooled connection by itself).
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 0}
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULER = "neuromem_site.beat:HeartbeatScheduler"
# Beat wakes at least this often, so its heartbeat stays fresh even with no task due.
CELERY_BEAT_MAX_LOOP_INTERVAL = 5
# Access counts collect in Redis; beat writes them to the memories this often (seconds).
ACCESS_FLUSH_INTERVAL = env.int("ACCESS_FLUSH_INTERVAL", default=300)
# Seconds between beat's builds of per-user indexes (memories/user_indexes.py).
USER_INDEX_REFRESH_INTERVAL = env.int("USER_INDEX_REFRESH_INTERVAL", default=3600)
# Beat sweeps every EMBEDDING_REQUEUE_INTERVAL seconds for memories `pending` longer than
# EMBEDDING_REQUEUE_GRACE that no embedding task holds (memories/services/embedding_jobs.py):
# their publish failed (Redis down at commit), so they are queued again within about a minute
# of Redis's return. A task holds its memories for EMBEDDING_REQUEUE_AFTER seconds from its
# publish or start; memories still pending after that are presumed lost and queued again.
EMBEDDING_REQUEUE_INTERVAL = env.int("EMBEDDING_REQUEUE_INTERVAL", default=30)
EMBEDDING_REQUEUE_GRACE = env.int("EMBEDDING_REQUEUE_GRACE", default=20)
EMBEDDING_REQUEUE_AFTER = env.int("EMBEDDING_REQUEUE_AFTER", default=600)
CELERY_BEAT_SCHEDULE = {
    "flush-memory-accesses": {
        "task": "memories.tasks.flush_accesses",
        "schedule": ACCESS_FLUSH_INTERVAL,
    },
    "refresh-user-indexes": {
        "task": "memories.tasks.refresh_user_indexes",
        "schedule": USER_INDEX_REFRESH_INTERVAL,
    },
    "requeue-stale-embeddings": {
        "task": "memories.tasks.requeue_stale_embeddings",
        "schedule": EMBEDDING_REQUEUE_INTERVAL,
    },
}

# Scheduled jobs' runs (`job_runs`, in the admin) are kept this many days.
JOB_RUNS_KEEP_DAYS = env.int("JOB_RUNS_KEEP_DAYS", default=30)
# A refresh of the decay view asked for after a change (a cycle, a veto) that finds another
# refresh in flight tries again this many seconds later, as often as this.
TRAIT_VIEW_REFRESH_RETRY = env.int("TRAIT_VIEW_REFRESH_RETRY", default=15)
TRAIT_VIEW_REFRESH_MAX_RETRIES = env.int("TRAIT_VIEW_REFRESH_MAX_RETRIES", default=20)

# The health endpoint calls beat dead when its heartbeat is older than this.
BEAT_HEARTBEAT_MAX_AGE = env.int("BEAT_HEARTBEAT_MAX_AGE", default=60)
HEALTH_WORKER_PING_TIMEOUT = env.float("HEALTH_WORKER_PING_TIMEOUT", default=1.0)
# Health answers within this many seconds whatever Redis does; a check still running then fails.
HEALTH_TIMEOUT = env.float("HEALTH_TIMEOUT", default=3.0)

# --- Domain ----------------------------------------------------------------------------------

# Embeddings (docs/embeddings.md): `use` (multilingual Universal Sentence Encoder, local, the
# default), `e5` (multilingual-e5-small, local), `hashing` (lexical, no model) or `openai`
# (any OpenAI-compatible endpoint). The dimension follows the provider unless set; changing
# either on a database that holds vectors is `manage.py embeddings_rebuild`.
EMBEDDING_PROVIDER = env.str("EMBEDDING_PROVIDER", default="use")
PROVIDER_DIMENSIONS = {"e5": 384, "use": 512, "hashing": 1024, "openai": 1024}
if EMBEDDING_PROVIDER not in PROVIDER_DIMENSIONS:
    raise ImproperlyConfigured(
        f"EMBEDDING_PROVIDER must be one of {', '.join(PROVIDER_DIMENSIONS)}."
    )
# Empty counts as unset (docker-compose passes it through either way).
EMBEDDING_DIM = int(env.str("EMBEDDING_DIM", default="") or PROVIDER_DIMENSIONS[EMBEDDING_PROVIDER])
if EMBEDDING_PROVIDER in ("use", "e5") and PROVIDER_DIMENSIONS[EMBEDDING_PROVIDER] != EMBEDDING_DIM:
    raise ImproperlyConfigured(
        f"EMBEDDING_PROVIDER={EMBEDDING_PROVIDER} embeds into "
        f"{PROVIDER_DIMENSIONS[EMBEDDING_PROVIDER]} dimensions; unset EMBEDDING_DIM or set it so."
    )
# The OpenAI-compatible provider (EMBEDDING_PROVIDER=openai).
EMBEDDING_API_BASE = env.str("EMBEDDING_API_BASE", default="")
if EMBEDDING_PROVIDER == "openai" and not EMBEDDING_API_BASE:
    raise ImproperlyConfigured("EMBEDDING_PROVIDER=openai needs EMBEDDING_API_BASE.")
EMBEDDING_API_KEY = env.str("EMBEDDING_API_KEY", default="")
EMBEDDING_MODEL = env.str("EMBEDDING_MODEL", default="text-embedding-3-small")
EMBEDDING_TIMEOUT = env.float("EMBEDDING_TIMEOUT", default=10.0)
# The embedding task retries a failing provider this often, backing off exponentially from
# EMBEDDING_RETRY_BACKOFF seconds, then marks the memory `failed` (the memory itself stays).
EMBEDDING_MAX_RETRIES = env.int("EMBEDDING_MAX_RETRIES", default=5)
EMBEDDING_RETRY_BACKOFF = env.float("EMBEDDING_RETRY_BACKOFF", default=2.0)

MEMORY_MAX_CHARS = env.int("MEMORY_MAX_CHARS", default=10_000)
MEMORY_BATCH_MAX = 1000
METADATA_MAX_BYTES = env.int("METADATA_MAX_BYTES", default=16_384)
# Request body caps, from the limits above: a memory's content at its worst as JSON (\uXXXX
# escapes: 6 bytes a character), its embedding written as text (up to 26 bytes a number), its
# metadata, and room for the other fields; a batch holds MEMORY_BATCH_MAX of them. Bigger
# bodies answer 413 before they are read (neuromem_site/api/middleware.py). Django checks
# DATA_UPLOAD_MAX_MEMORY_SIZE as it reads any body, so it is the largest cap; the middleware
# holds every other route (the admin's forms included) to its own, smaller one.
API_BODY_MAX_BYTES = 6 * MEMORY_MAX_CHARS + 26 * EMBEDDING_DIM + METADATA_MAX_BYTES + 4096
API_BATCH_BODY_MAX_BYTES = MEMORY_BATCH_MAX * API_BODY_MAX_BYTES
DATA_UPLOAD_MAX_MEMORY_SIZE = API_BATCH_BODY_MAX_BYTES
# Bodies of the routes outside /api/ (the admin): Django's own default.
FORM_BODY_MAX_BYTES = 2_621_440
# Cosine similarity above which a new memory supersedes a current one (an UPDATE).
DEDUP_SIMILARITY = env.float("DEDUP_SIMILARITY", default=0.95)
# ... by meaning: cosine similarity of the embeddings (seed 002 §5.4's 0.95), compared inside
# the write when the client sends the embedding, else by the worker once it has made it
# (memories/services/dedup.py).
DEDUP_MEANING_SIMILARITY = env.float("DEDUP_MEANING_SIMILARITY", default=0.95)

# Secrets are redacted on every write (docs/privacy.md); these kinds are left as written
# (password, pin, card_number, ssn, national_id, iban, api_key, token, private_key).
REDACTION_DISABLED_KINDS = env.list("REDACTION_DISABLED_KINDS", default=[])

# A memory no sentence of which names a forget request's topic is forgotten by meaning when its
# embedding is this far above the relevance floor (docs/privacy.md; bench/privacy.py).
FORGET_SEMANTIC_MARGIN = env.float("FORGET_SEMANTIC_MARGIN", default=0.15)

# Memories from conversation: "rules" (offline) or "llm" (OpenAI-compatible chat endpoint).
EXTRACTOR = env.str("EXTRACTOR", default="rules")
if EXTRACTOR not in ("rules", "llm"):
    raise ImproperlyConfigured("EXTRACTOR must be 'rules' or 'llm'.")
LLM_API_BASE = env.str("LLM_API_BASE", default="")
if EXTRACTOR == "llm" and not LLM_API_BASE:
    raise ImproperlyConfigured("EXTRACTOR=llm needs LLM_API_BASE.")
LLM_API_KEY = env.str("LLM_API_KEY", default="")
LLM_MODEL = env.str("LLM_MODEL", default="gpt-4o-mini")
LLM_TIMEOUT = env.float("LLM_TIMEOUT", default=30.0)

# Recall (docs/recall.md). Candidates per memory type on the vector side, and on the text side.
RECALL_BRANCH_LIMIT = env.int("RECALL_BRANCH_LIMIT", default=20)
RECALL_LIMIT_MAX = 100
RECALL_QUERY_MAX_CHARS = env.int("RECALL_QUERY_MAX_CHARS", default=2000)
# HNSW candidate list per scan step (pgvector's hnsw.ef_search), set per recall transaction.
RECALL_EF_SEARCH = env.int("RECALL_EF_SEARCH", default=100)
# A user with this many memories of one type gets an HNSW graph and a text index of their own.
USER_INDEX_MIN_MEMORIES = env.int("USER_INDEX_MIN_MEMORIES", default=2000)
# Seconds between a process's reads of the statistics that decide whether recall's statement is
# prepared (memories/plan_cache.py: the mean user's rows per partition).
RECALL_PLAN_STATISTICS_SECONDS = env.float("RECALL_PLAN_STATISTICS_SECONDS", default=300.0)
# The relevance floor: a memory is recalled only if its cosine similarity to the query beats
# this quantile of the query's similarities to background memories (memories/similarity_floors.py)
# plus the margin, or it holds RECALL_MIN_TEXT_COVERAGE of the query's words. The quantile is
# the quality benchmark's (docs/recall.md). RECALL_MIN_SIMILARITY is an absolute floor under
# it: 0.6 suits the lexical hashing embeddings (unrelated English sentences reach ~0.5).
RECALL_NOISE_QUANTILE = env.float("RECALL_NOISE_QUANTILE", default=0.85)
RECALL_RELEVANCE_MARGIN = env.float("RECALL_RELEVANCE_MARGIN", default=0.0)
RECALL_MIN_SIMILARITY = env.float(
    "RECALL_MIN_SIMILARITY", default=0.6 if EMBEDDING_PROVIDER == "hashing" else -1.0
)
RECALL_MIN_TEXT_COVERAGE = env.float("RECALL_MIN_TEXT_COVERAGE", default=0.5)
# The text side ranks memories holding this share of the query's words (at most the floor
# above; 0.34: two words of a three-word question): one holding less than the floor's share is
# recalled only if near enough by meaning.
RECALL_TEXT_CANDIDATE_COVERAGE = env.float("RECALL_TEXT_CANDIDATE_COVERAGE", default=0.34)
# The vector side's weight in the fusion, the text side's being 1 (docs/recall.md, "The score").
RECALL_VECTOR_WEIGHT = env.float("RECALL_VECTOR_WEIGHT", default=1.0)
# ... times this for a memory that ends in a question: by meaning a question is near other
# questions by its form, not by what it tells (docs/recall.md).
RECALL_QUESTION_VECTOR_WEIGHT = env.float("RECALL_QUESTION_VECTOR_WEIGHT", default=0.25)
# The query's embedding leaves out a name held by this share of the user's current memories or
# more (a speaker's name that begins every turn of a transcript): it says nothing about which
# memory answers (docs/recall.md). 0 embeds the query as asked.
RECALL_COMMON_NAME_SHARE = env.float("RECALL_COMMON_NAME_SHARE", default=0.25)
# The text side reads a single-turn episode with the user's episode before it when that one is
# a second to this many seconds older (the turn it answers); 0 reads each alone (docs/recall.md).
RECALL_EPISODE_CONTEXT_SECONDS = env.int("RECALL_EPISODE_CONTEXT_SECONDS", default=600)
# The text side reads a conversation's episode with the whole assistant message it answers (the
# episode quotes only its end), and finds it by that message's words (docs/recall.md).
RECALL_EPISODE_ANSWERED_MESSAGE = env.bool("RECALL_EPISODE_ANSWERED_MESSAGE", default=True)
# Query vectors stay in Redis this long (seconds): a repeated question costs no model call.
RECALL_QUERY_CACHE_TTL = env.int("RECALL_QUERY_CACHE_TTL", default=86_400)
# The question rules over recall's hits (docs/graph.md), each on its own so the quality
# benchmark can weigh what it costs: the asked subject's memories only; no memory naming a value
# of the asked attribute that no longer holds; nothing when nothing says what is asked.
RECALL_SUBJECT_RULE = env.bool("RECALL_SUBJECT_RULE", default=True)
RECALL_CURRENT_RULE = env.bool("RECALL_CURRENT_RULE", default=True)
RECALL_EMPTY_RULE = env.bool("RECALL_EMPTY_RULE", default=True)
# Newer first: of two memories on one topic (more alike than RECALL_TOPIC_QUANTILE of pairs of
# unrelated background memories), the older goes after the others, unless the question asks
# about the past; when it asks what holds now, the older leaves if the later one is as near the
# question, says it gave up what the older names, or is more alike to the older than
# RECALL_REPLACED_QUANTILE of those pairs.
RECALL_NEWER_RULE = env.bool("RECALL_NEWER_RULE", default=True)
RECALL_TOPIC_QUANTILE = env.float("RECALL_TOPIC_QUANTILE", default=0.95)
RECALL_REPLACED_QUANTILE = env.float("RECALL_REPLACED_QUANTILE", default=0.99)
if not RECALL_TOPIC_QUANTILE <= RECALL_REPLACED_QUANTILE <= 1:
    # Below the topic's bar every pair on one topic would be "nearly the same".
    raise ImproperlyConfigured(
        "RECALL_REPLACED_QUANTILE must lie between RECALL_TOPIC_QUANTILE and 1."
    )
# A request to the assistant ("What's the capital of Australia?") answers a question only when
# it holds RECALL_MIN_TEXT_COVERAGE of its words (by meaning it is near any question), unless
# the question asks what the user asked.
RECALL_REQUEST_RULE = env.bool("RECALL_REQUEST_RULE", default=True)

# Reflection (docs/reflection.md): traits from repeated observations. The lifecycle's numbers
# are reflection/rules.py's defaults, any of them overridden by name in TRAIT_RULES (JSON).
TRAIT_RULES = env.json("TRAIT_RULES", default={})
# Pattern detection: "offline" (embedding clusters + cue rules) or "llm" (LLM_API_BASE).
REFLECTION_DETECTOR = env.str("REFLECTION_DETECTOR", default="offline")
if REFLECTION_DETECTOR not in ("offline", "llm"):
    raise ImproperlyConfigured("REFLECTION_DETECTOR must be 'offline' or 'llm'.")
if REFLECTION_DETECTOR == "llm" and not LLM_API_BASE:
    raise ImproperlyConfigured("REFLECTION_DETECTOR=llm needs LLM_API_BASE.")
# A cycle starts when a user's unreflected memories hold this much importance (0–1 each), a
# day after their last cycle, when a session ends or has been quiet this long (seconds).
REFLECTION_IMPORTANCE_THRESHOLD = env.float("REFLECTION_IMPORTANCE_THRESHOLD", default=3.0)
REFLECTION_INTERVAL = env.int("REFLECTION_INTERVAL", default=86_400)
REFLECTION_IDLE_AFTER = env.int("REFLECTION_IDLE_AFTER", default=1800)
# A cycle reflects on at most this many memories (oldest first); the rest wait for the next.
REFLECTION_MAX_MEMORIES = env.int("REFLECTION_MAX_MEMORIES", default=5000)
# Cosine similarity at which memories form one pattern, a memory matches a trait, and traits
# point the same way (a parent). Each model spreads similarities differently: the defaults are
# per provider, measured for `use` (docs/reflection.md) and estimates for the others.
_REFLECTION_SIMILARITY = {
    "use": (0.36, 0.4, 0.45),
    "e5": (0.86, 0.87, 0.85),
    "hashing": (0.55, 0.6, 0.55),
    "openai": (0.5, 0.55, 0.5),
}[EMBEDDING_PROVIDER]
REFLECTION_CLUSTER_SIMILARITY = env.float(
    "REFLECTION_CLUSTER_SIMILARITY", default=_REFLECTION_SIMILARITY[0]
)
REFLECTION_MATCH_SIMILARITY = env.float(
    "REFLECTION_MATCH_SIMILARITY", default=_REFLECTION_SIMILARITY[1]
)
REFLECTION_PARENT_SIMILARITY = env.float(
    "REFLECTION_PARENT_SIMILARITY", default=_REFLECTION_SIMILARITY[2]
)
# /users/{id}/prompt-context/: the block's size, in estimated tokens.
PROMPT_CONTEXT_MAX_TOKENS = env.int("PROMPT_CONTEXT_MAX_TOKENS", default=600)

# The SOUL document (docs/evolution.md): its size limit (estimated tokens), and the share of it
# a proposal may rewrite without a justification.
SOUL_MAX_TOKENS = env.int("SOUL_MAX_TOKENS", default=4000)
SOUL_DIFF_MAX_SHARE = env.float("SOUL_DIFF_MAX_SHARE", default=0.5)
# Seed 003: a SOUL changes through its agent's own proposals, staff govern it. True lets staff
# propose changes to any agent's SOUL too (recorded as created by `user`).
SOUL_STAFF_PROPOSALS = env.bool("SOUL_STAFF_PROPOSALS", default=False)
# The runtime guardrail (docs/evolution.md): how long an agent session's guard check speaks
# for its calls (one round of its model loop), seconds; the longest context it checks.
GUARD_ROUND_SECONDS = env.int("GUARD_ROUND_SECONDS", default=120)
GUARD_CONTEXT_MAX_CHARS = env.int("GUARD_CONTEXT_MAX_CHARS", default=200_000)
# `manage.py soul_bootstrap` without a path reads this file.
SOUL_BOOTSTRAP_FILE = env.str("SOUL_BOOTSTRAP_FILE", default="")

# The activity score (docs/decay.md): a memory is `active` from SCORE_ACTIVE_FROM, `cold` from
# SCORE_COLD_FROM, `deprecated` below (0–100 each).
SCORE_ACTIVE_FROM = env.float("SCORE_ACTIVE_FROM", default=70.0)
SCORE_COLD_FROM = env.float("SCORE_COLD_FROM", default=30.0)
# The score job's weights, time constants and map, any of them overridden by name in
# SCORE_RULES (JSON), like TRAIT_RULES: {"A": 1.0, "T_access_hours": 24, ...}.
SCORE_RULES = env.json("SCORE_RULES", default={})
# Memories the score job reads and writes per statement (keyset batches, bounded memory).
SCORE_BATCH_SIZE = env.int("SCORE_BATCH_SIZE", default=5000)
# A low-score memory nobody links to and nobody read for this many days is flagged
# eligible_for_delete (never deleted by the job).
SCORE_DELETE_IDLE_DAYS = env.int("SCORE_DELETE_IDLE_DAYS", default=30)

# Bulk reads (/memories/{id}/bulk/): defaults and maxima of depth, breadth and total.
BULK_READ_LIMITS = {"depth": (3, 6), "breadth": (5, 20), "total": (20, 50)}
# /memories/stats/: the histogram's default bin width and the cache's default lifetime (ms).
STATS_HISTOGRAM_BIN_SIZE = env.int("STATS_HISTOGRAM_BIN_SIZE", default=10)
STATS_CACHE_TTL_MS = env.int("STATS_CACHE_TTL_MS", default=60000)

# --- REST API --------------------------------------------------------------------------------

API_PAGE_SIZE = env.int("API_PAGE_SIZE", default=50)
API_MAX_PAGE_SIZE = 200
API_RATE_LIMIT = env.str("API_RATE_LIMIT", default="6000/min")

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "neuromem_site.api.authentication.BearerTokenAuthentication"
    ],
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "neuromem_site.api.permissions.GuardGate",
    ],
    "DEFAULT_RENDERER_CLASSES": ["neuromem_site.api.envelope.EnvelopeJSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["neuromem_site.api.serializers.BoundedJSONParser"],
    "DEFAULT_PAGINATION_CLASS": "neuromem_site.api.pagination.EnvelopeCursorPagination",
    "DEFAULT_SCHEMA_CLASS": "neuromem_site.api.schema.EnvelopeAutoSchema",
    "DEFAULT_THROTTLE_CLASSES": ["neuromem_site.api.throttling.ApiClientRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {"api_client": API_RATE_LIMIT},
    "EXCEPTION_HANDLER": "neuromem_site.api.envelope.exception_handler",
    "UNAUTHENTICATED_USER": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "NeuroMem API",
    "DESCRIPTION": "Long-term memory for AI agents. Every response is wrapped in the "
    "`{ok, data}` / `{ok, error}` envelope.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SERVE_AUTHENTICATION": [],
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "neuromem_site.api.schema.add_error_responses",
    ],
    "COMPONENT_SPLIT_REQUEST": True,
    # PATCH bodies are validated whole (`version` is required), not as partial serializers.
    "COMPONENT_SPLIT_PATCH": False,
    "ENUM_NAME_OVERRIDES": {
        "MemoryTypeEnum": "memories.models.MemoryType",
        "MemoryTypeInputEnum": "memories.api.serializers.MEMORY_TYPE_CHOICES",
        "StatusEnum": ["healthy", "degraded", "unhealthy"],
        "ReflectionStatusEnum": "reflection.models.ReflectionStatus",
        "SoulStatusEnum": "evolution.models.SoulStatus",
        "GuardEventKindEnum": "evolution.models.GuardEventKind",
        "EntityKindEnum": "memories.graph.models.EntityKind",
    },
    # Swagger UI's files are served from this server, not a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# --- Web -------------------------------------------------------------------------------------

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env.str("STATIC_ROOT", default=str(BASE_DIR / "staticfiles")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_SECURE = env.bool("SECURE_COOKIES", default=False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"

LOG_LEVEL = env.str("LOG_LEVEL", default="INFO")
# `console`: readable lines with the request id; `json`: one JSON object a line (core/logs.py).
LOG_FORMAT = env.str("LOG_FORMAT", default="console")
if LOG_FORMAT not in ("console", "json"):
    raise ImproperlyConfigured("LOG_FORMAT is `console` or `json`.")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "core.logs.RequestIdFilter"}},
    "formatters": {
        "console": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"},
        "json": {"()": "core.logs.JsonFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": LOG_FORMAT,
            "filters": ["request_id"],
        }
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {"django.db.backends": {"level": "INFO"}},
}
