"""Near duplicates: which current memory a new one is so similar to that it supersedes it
(the UPDATE of the operation model). Compared by the lexical vector the write computes for
every memory (cosine similarity above DEDUP_SIMILARITY), so the check costs no model call and
sees memories the worker has not embedded yet; the semantic embedding is recall's alone."""

import uuid
from dataclasses import dataclass

import numpy as np
from django.conf import settings

from memories.embeddings import lexical_provider
from memories.models import Memory
from memories.predicates import current_sql
from memories.vectors import halfvecs, vector_cursor

# A new memory is compared with the user's most recent current memories of its type, at most
# this many: a restatement is nearly always of something recent, and the check stays one
# bounded query however many memories the user holds (docs/write-path.md).
DEDUP_WINDOW = 500


def with_lexical_vectors(memories: list[Memory]) -> None:
    if not memories:
        return
    vectors = lexical_provider().embed([memory.content for memory in memories])
    for memory, vector in zip(memories, vectors, strict=True):
        memory.lexical_vector = vector


@dataclass(frozen=True)
class Candidate:
    """A new memory to check for near duplicates among the current ones."""

    index: int
    user_id: str
    memory_type: str
    content_hash: str
    vector: np.ndarray


def near_duplicates(candidates: list[Candidate]) -> dict[int, uuid.UUID]:
    """For each candidate, the stored current memory of the same user and type (other
    content) among the DEDUP_WINDOW most recent whose lexical similarity exceeds
    DEDUP_SIMILARITY, if any: index → memory id."""
    if not candidates:
        return {}
    with vector_cursor() as cursor:
        cursor.execute(
            f"""
            SELECT i.n, m.id
            FROM unnest(%s::int[], %s::text[], %s::text[], %s::text[], %b::halfvec[])
                 AS i(n, user_id, memory_type, content_hash, vector)
            CROSS JOIN LATERAL (
                SELECT id, lexical_vector <=> i.vector AS distance FROM (
                    SELECT id, lexical_vector, content_hash FROM memories
                    WHERE user_id = i.user_id AND memory_type = i.memory_type
                      AND {current_sql("memories")}
                    ORDER BY created_at DESC LIMIT %s
                ) recent
                WHERE lexical_vector IS NOT NULL AND content_hash <> i.content_hash
                ORDER BY 2 LIMIT 1
            ) m
            WHERE 1 - m.distance > %s AND m.distance <> 'NaN'
            """,
            [
                [c.index for c in candidates],
                [c.user_id for c in candidates],
                [c.memory_type for c in candidates],
                [c.content_hash for c in candidates],
                halfvecs([c.vector for c in candidates]),
                DEDUP_WINDOW,
                settings.DEDUP_SIMILARITY,
            ],
            binary=True,
        )
        return dict(cursor.fetchall())


def near_duplicates_in_batch(candidates: list[Candidate]) -> dict[int, int]:
    """Within one batch, the latest earlier item (same user and type, other content) each
    candidate nearly duplicates: index → earlier index. Two near duplicates in one batch are
    then handled as two separate writes would be: the later supersedes the earlier."""
    groups: dict[tuple[str, str], list[Candidate]] = {}
    for candidate in candidates:
        groups.setdefault((candidate.user_id, candidate.memory_type), []).append(candidate)
    found: dict[int, int] = {}
    for group in groups.values():
        vectors = np.stack([candidate.vector for candidate in group])
        similar = np.tril(vectors @ vectors.T > settings.DEDUP_SIMILARITY, k=-1)
        for position, row in enumerate(similar):
            for earlier in reversed(np.flatnonzero(row)):
                if group[earlier].content_hash != group[position].content_hash:
                    found[group[position].index] = group[int(earlier)].index
                    break
    return found
