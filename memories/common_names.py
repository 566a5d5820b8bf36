"""The query as recall's vector side embeds it: without the names that a large share of the
user's memories hold, such as the speakers' names that begin every turn of a transcript
(docs/recall.md, "The query is embedded without the names most of the user's memories hold").
Such a name tells the vector side nothing about which memory answers, and draws it to the
turns that hold little but the names ("<A>: Bye, <B>!"); the text side keeps it, weighed by
BM25."""

import hashlib
import hmac
import logging
import re

import redis
from django.conf import settings

from core.db.replicas import read_connection
from core.redis_client import app_redis
from memories.models import MemoryType
from memories.predicates import current_sql

log = logging.getLogger("neuromem.recall")

# A Latin word written with a capital (a name, or a sentence's first word), possessive and all;
# bounded by any other letter, so "Priya在哪里" holds "Priya".
LATIN = "A-Za-z\u00c0-\u024f"
CAPITALISED = re.compile(rf"(?<![{LATIN}])(?P<word>[A-Z][{LATIN}-]*)(?:['’]s)?(?![{LATIN}])")
# How many of the user's latest current memories of each type a name is counted in, and how
# many it takes: among fewer, a share says little, and the vector side's first ranks reach most
# of them anyway.
SAMPLE_PER_TYPE = 250
MIN_MEMORIES = 50
# A name's verdict is kept this long (seconds) per user: its share moves slowly, and counting
# reads up to a thousand memories.
CACHE_SECONDS = 3600
CACHE_PATTERN = "neuromem:names:*"

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


def common_names_forget(*, user_id: str) -> None:
    """Drop the user's cached verdicts (after a purge); best effort: they expire within
    CACHE_SECONDS anyway."""
    try:
        app_redis().delete(_cache_key(user_id))
    except redis.RedisError:
        log.warning("common names' cache not cleared: Redis unavailable", exc_info=True)


def _mac(text: str) -> str:
    return hmac.new(settings.SECRET_KEY.encode(), text.encode(), hashlib.sha256).hexdigest()


def _cache_key(user_id: str) -> str:
    # One hash per user, so that a purge drops it whole; its key and fields are MACs, so no
    # name the user said can be read, or guessed and checked, in Redis.
    return f"neuromem:names:{_mac(user_id)}"


def _field(word: str) -> str:
    # The verdict is for the share it was judged at.
    return _mac(f"{settings.RECALL_COMMON_NAME_SHARE}\0{word}")


def _common(*, user_id: str, words: list[str]) -> set[str]:
    """The words that are common names among the user's memories: cached verdicts, the rest
    counted in one statement. The cache is best effort, as the query vectors' is."""
    key, fields = _cache_key(user_id), [_field(word) for word in words]
    try:
        cached, ttl = app_redis().pipeline(transaction=False).hmget(key, fields).ttl(key).execute()
    except redis.RedisError:
        log.warning("common names' cache unavailable", exc_info=True)
        cached, ttl, cache_up = [None] * len(words), None, False
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
                pipe.hset(key, mapping={_field(word): int(word in found) for word in missing})
                if ttl < 0:  # a new hash: its verdicts last CACHE_SECONDS
                    pipe.expire(key, CACHE_SECONDS)
                pipe.execute()
            except redis.RedisError:
                log.warning("common names not cached: Redis unavailable", exc_info=True)
    return {word for word, common in verdicts.items() if common}
