"""Near duplicates: which current memory a new one is so similar to that it supersedes it
(cosine similarity above DEDUP_SIMILARITY, the UPDATE of the operation model), found in SQL.
Memories still waiting for the worker are compared by the local provider's vector, which the
write stores with them."""

import uuid
from dataclasses import dataclass

import numpy as np
import psycopg
from django.conf import settings
from django.db import connection
from pgvector import HalfVector

from memories.embeddings import EmbeddingError, embedding_provider
from memories.meaning import current_sql
from memories.models import Memory
from memories.vectors import halfvecs, iterative_hnsw_scan, normalised, vector_cursor


def local_vectors(texts: list[str]) -> list[np.ndarray] | None:
    """Unit vectors for the near-duplicate check when the provider is local (cheap); None
    when it is remote (then only client-supplied vectors are compared)."""
    provider = embedding_provider()
    if not provider.inline or not texts:
        return None
    try:
        return list(normalised(provider.embed(texts)))
    except EmbeddingError:
        return None


def with_local_vectors(memories: list[Memory]) -> None:
    """Give the memories without a vector the local provider's, still `pending`: the HNSW
    indexes take only `ready` rows, so storing it costs no graph maintenance, and later
    writes' near-duplicate checks can compare with it before the worker makes it `ready`."""
    waiting = [memory for memory in memories if memory.embedding is None]
    vectors = local_vectors([memory.content for memory in waiting])
    if vectors is not None:
        for memory, vector in zip(waiting, vectors, strict=True):
            memory.embedding = vector


@dataclass(frozen=True)
class Candidate:
    """A new memory to check for near duplicates among the current ones."""

    index: int
    user_id: str
    memory_type: str
    content_hash: str
    vector: np.ndarray


# Up to this many current memories of one type, a user's near duplicates are found by exact
# distance over all of them (one query for the whole batch); above it, by the HNSW graph, one
# query per new memory. Exact costs ~6 µs a memory compared (the vector is TOASTed); the graph
# costs ~7 ms a new memory whatever the size (a batch of 100 for a user with 20,000: 0.66 s).
EXACT_DEDUP_MAX_MEMORIES = 500


def near_duplicates(candidates: list[Candidate]) -> dict[int, uuid.UUID]:
    """For each candidate, the current memory of the same user and type (other content) whose
    cosine similarity exceeds DEDUP_SIMILARITY, if any: index → memory id. Memories still
    waiting for the worker are compared too, by the vector the write stored for them (local
    provider)."""
    if not candidates:
        return {}
    large = _large_pairs({(c.user_id, c.memory_type) for c in candidates})
    found = _near_duplicates_exact(
        [c for c in candidates if (c.user_id, c.memory_type) not in large]
    )
    indexed = [c for c in candidates if (c.user_id, c.memory_type) in large]
    if indexed:
        with vector_cursor() as cursor:
            iterative_hnsw_scan(cursor)  # for the rest of the write's transaction
            for candidate in indexed:
                nearest = _near_duplicate_indexed(cursor, candidate)
                if nearest is not None:
                    found[candidate.index] = nearest
    return found


def _large_pairs(pairs: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """The (user, type) pairs with more than EXACT_DEDUP_MAX_MEMORIES current memories."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT p.user_id, p.memory_type
            FROM unnest(%s::text[], %s::text[]) AS p(user_id, memory_type)
            WHERE (SELECT count(*) FROM (
                       SELECT 1 FROM memories m
                       WHERE m.user_id = p.user_id AND m.memory_type = p.memory_type
                         AND m.expired_at IS NULL
                       LIMIT %s) counted) > %s
            """,
            [
                [user_id for user_id, _ in pairs],
                [memory_type for _, memory_type in pairs],
                EXACT_DEDUP_MAX_MEMORIES + 1,
                EXACT_DEDUP_MAX_MEMORIES,
            ],
        )
        return set(cursor.fetchall())


def _near_duplicates_exact(candidates: list[Candidate]) -> dict[int, uuid.UUID]:
    if not candidates:
        return {}
    with vector_cursor() as cursor:
        cursor.execute(
            f"""
            SELECT i.n, m.id
            FROM unnest(%s::int[], %s::text[], %s::text[], %s::text[], %b::halfvec[])
                 AS i(n, user_id, memory_type, content_hash, vector)
            CROSS JOIN LATERAL (
                SELECT id, embedding <=> i.vector AS distance FROM memories
                WHERE user_id = i.user_id AND memory_type = i.memory_type
                  AND {current_sql("memories")} AND embedding IS NOT NULL
                  AND content_hash <> i.content_hash
                ORDER BY embedding <=> i.vector LIMIT 1
            ) m
            WHERE 1 - m.distance > %s AND m.distance <> 'NaN'
            """,
            [
                [c.index for c in candidates],
                [c.user_id for c in candidates],
                [c.memory_type for c in candidates],
                [c.content_hash for c in candidates],
                halfvecs([c.vector for c in candidates]),
                settings.DEDUP_SIMILARITY,
            ],
            binary=True,
        )
        return dict(cursor.fetchall())


def _near_duplicate_indexed(cursor: psycopg.Cursor, candidate: Candidate) -> uuid.UUID | None:
    """The nearest memory from the partition's HNSW graph (ready memories; the iterative scan
    goes on past other users' rows) or among the user's waiting ones, if near enough."""
    current = (
        "user_id = %(user_id)s AND memory_type = %(memory_type)s"
        f" AND {current_sql('memories')} AND content_hash <> %(content_hash)s"
    )
    cursor.execute(
        f"""
        SELECT id FROM (
            (SELECT id, embedding <=> %(vector)b AS distance FROM memories
             WHERE {current} AND embedding_status = 'ready'
             ORDER BY embedding <=> %(vector)b LIMIT 1)
            UNION ALL
            (SELECT id, embedding <=> %(vector)b AS distance FROM memories
             WHERE {current} AND embedding_status = 'pending' AND embedding IS NOT NULL
             ORDER BY 2 LIMIT 1)
        ) nearest
        WHERE 1 - distance > %(similarity)s AND distance <> 'NaN'
        ORDER BY distance LIMIT 1
        """,
        {
            "user_id": candidate.user_id,
            "memory_type": candidate.memory_type,
            "content_hash": candidate.content_hash,
            "vector": HalfVector(candidate.vector),
            "similarity": settings.DEDUP_SIMILARITY,
        },
    )
    row = cursor.fetchone()
    return row[0] if row else None
