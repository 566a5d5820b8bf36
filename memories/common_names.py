"""The query as recall's vector side embeds it: without the names that a large share of the
user's memories hold, such as the speakers' names that begin every turn of a transcript
(docs/recall.md, "The query is embedded without the names most of the user's memories hold").
Such a name tells the vector side nothing about which memory answers, and draws it to the
turns that hold little but the names ("<A>: Bye, <B>!"); the text side keeps it, weighed by
BM25."""

import hashlib
import logging
import re

import redis
from django.conf import settings

from core.db.replicas import read_connection
from core.redis_client import app_redis
from memories.models import MemoryType
from memories.predicates import current_sql

log = logging.getLogger("neuromem.recall")

# A Latin word written with a capital (a name, or a sentence's first word), possessive and all.
CAPITALISED = re.compile(r"\b(?P<word>[A-Z][\w-]*)(?:['’]s)?\b")
# How many of the user's latest current memories of each type a name is counted in, and how
# many it takes: among fewer, a share says little, and the vector side's first ranks reach most
# of them anyway.
SAMPLE_PER_TYPE = 250
MIN_MEMORIES = 50
# A name's verdict is kept this long (seconds) per user: its share moves slowly, and counting
# reads up to a thousand memories.
CACHE_SECONDS = 3600
CACHE_PATTERN = "neuromem:name:*"

# Per type, on the (user_id, memory_type, created_at) index: one LIMIT over the partitioned
# table had PostgreSQL read, from its start, a partition where the user holds most rows.
SAMPLE_BRANCHES = " UNION ALL ".join(
    f"""(SELECT m.search_vector FROM memories m
         WHERE m.memory_type = '{memory_type}' AND m.user_id = %(user_id)s AND {current_sql("m")}
         ORDER BY m.created_at DESC LIMIT {SAMPLE_PER_TYPE})"""
    for memory_type in MemoryType.values
)
COMMON_SQL = f"""
    WITH words AS MATERIALIZED (
        SELECT word, array_to_string(ARRAY(
                   SELECT quote_literal(lexeme)
                   FROM unnest(neuromem_search_lexemes(word)) lexeme), ' & ')::tsquery AS terms
        FROM unnest(%(words)s::text[]) word
    ),
    sample AS MATERIALIZED ({SAMPLE_BRANCHES})
    SELECT w.word
    FROM words w CROSS JOIN sample s
    WHERE numnode(w.terms) > 0
    GROUP BY w.word
    HAVING count(*) >= %(least)s
       AND count(*) FILTER (WHERE s.search_vector @@ w.terms) >= %(share)s * count(*)
"""


def meaning_query(*, user_id: str, query: str) -> str:
    """`query` without the words written with a capital that RECALL_COMMON_NAME_SHARE or more
    of the user's current memories hold (counted among the latest SAMPLE_PER_TYPE of each
    type, and only among MIN_MEMORIES or more); as asked when that leaves no word."""
    words = sorted({match.group("word") for match in CAPITALISED.finditer(query)})
    if settings.RECALL_COMMON_NAME_SHARE <= 0 or not words:
        return query
    common = _common(user_id=user_id, words=words)
    if not common:
        return query
    kept = CAPITALISED.sub(lambda match: "" if match.group("word") in common else match[0], query)
    return " ".join(kept.split()) if re.search(r"\w", kept) else query


def _cache_key(user_id: str, word: str) -> str:
    # Hashed: a name the user said is not left readable in Redis. The share is in it: the
    # verdict is for that share.
    share = settings.RECALL_COMMON_NAME_SHARE
    digest = hashlib.sha256(f"{user_id}\0{share}\0{word}".encode()).hexdigest()
    return f"neuromem:name:{digest}"


def _common(*, user_id: str, words: list[str]) -> set[str]:
    """The words that are common names among the user's memories: cached verdicts, the rest
    counted in one statement. The cache is best effort, as the query vectors' is."""
    keys = [_cache_key(user_id, word) for word in words]
    try:
        cached = app_redis().mget(keys)
    except redis.RedisError:
        log.warning("common names' cache unavailable", exc_info=True)
        cached, cache_up = [None] * len(words), False
    else:
        cache_up = True
    verdicts = {
        word: value == b"1" for word, value in zip(words, cached, strict=True) if value is not None
    }
    missing = [word for word in words if word not in verdicts]
    if missing:
        with read_connection().cursor() as cursor:
            cursor.execute(
                COMMON_SQL,
                {
                    "words": missing,
                    "user_id": user_id,
                    "least": MIN_MEMORIES,
                    "share": settings.RECALL_COMMON_NAME_SHARE,
                },
            )
            found = {word for (word,) in cursor.fetchall()}
        verdicts |= {word: word in found for word in missing}
        if cache_up:
            try:
                pipe = app_redis().pipeline(transaction=False)
                for word in missing:
                    pipe.set(_cache_key(user_id, word), int(word in found), ex=CACHE_SECONDS)
                pipe.execute()
            except redis.RedisError:
                log.warning("common names not cached: Redis unavailable", exc_info=True)
    return {word for word, common in verdicts.items() if common}
